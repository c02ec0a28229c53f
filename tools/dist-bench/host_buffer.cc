#include "host_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "base/status.h"
#include "topology/memory_pages.h"

namespace dist::bench {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t round_up(size_t value, size_t to) { return (value + to - 1) / to * to; }

}  // namespace

HostBuffer::HostBuffer(size_t bytes, bool huge_pages) : bytes_(bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t used = round_up(bytes == 0 ? 1 : bytes, huge_pages ? kHugePage : page);
  if (huge_pages && discover_memory_pages().huge_pages == "never") {
    fail(Status::kUnsupported,
         "--huge-pages: the kernel has transparent huge pages off (/sys/kernel/mm/transparent_hugepage/enabled: never)");
  }
  // A huge page's worth more, to start the array on a 2 MiB boundary.
  mapping_bytes_ = used + (huge_pages ? kHugePage : 0);
  mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    fail(Status::kNoMemory, "no memory for a buffer of " + std::to_string(bytes) + " bytes (--sizes): " +
                                std::strerror(errno));
  }
  const auto start = reinterpret_cast<uintptr_t>(mapping_);
  data_ = reinterpret_cast<unsigned char*>(huge_pages ? round_up(start, kHugePage) : start);
  if (huge_pages && madvise(data_, used, MADV_HUGEPAGE) != 0) {
    const int error = errno;
    munmap(mapping_, mapping_bytes_);
    mapping_ = nullptr;
    fail(Status::kUnsupported, std::string("--huge-pages: madvise(MADV_HUGEPAGE) refused: ") + std::strerror(error));
  }
  // Faulted in now, as the zero-filled arrays before were: no call pays for it.
  std::memset(data_, 0, used);
}

HostBuffer::~HostBuffer() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

size_t huge_page_bytes(std::initializer_list<const HostBuffer*> buffers) {
  size_t total = 0;
  for (const HostBuffer* b : buffers) total += b->size();
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool overlaps = false;
  size_t huge = 0;
  while (std::getline(smaps, line)) {
    uintptr_t low = 0, high = 0;
    // A mapping's first line, "low-high perms offset dev:minor inode path",
    // has its first colon after a space; its fields' lines ("Rss: ...") before.
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &low, &high) == 2 && line.find(':') > line.find(' ')) {
      overlaps = false;
      for (const HostBuffer* b : buffers) {
        const auto first = reinterpret_cast<uintptr_t>(b->data());
        overlaps = overlaps || (low < first + std::max<size_t>(b->size(), 1) && high > first);
      }
      continue;
    }
    size_t kib = 0;
    if (overlaps && std::sscanf(line.c_str(), "AnonHugePages: %zu kB", &kib) == 1) huge += kib * 1024;
  }
  return std::min(huge, total);
}

}  // namespace dist::bench
