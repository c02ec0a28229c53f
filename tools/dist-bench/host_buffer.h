// dist-bench's host arrays (--huge-pages): anonymous memory of their own,
// faulted in before any call is timed, on the kernel's ordinary pages or, on
// request, on transparent huge pages.
//
// Why the choice matters: the library's single-copy algorithms copy between
// processes with process_vm_readv/writev, and the kernel pins a peer's pages
// one page at a time; on 2 MiB pages the same copies took 0.67-0.90 of the
// time here (bench/README.md, "Buffers on huge pages"). Which pages a user's
// buffers get is the user's allocator's and the system's doing (THP
// "always" or "madvise"); this lets the benchmark show both.
#pragma once

#include <cstddef>
#include <initializer_list>

namespace dist::bench {

class HostBuffer {
 public:
  // `bytes` of zeroed memory (at least one page). With `huge_pages`: placed
  // on 2 MiB boundaries and advised MADV_HUGEPAGE before it is touched;
  // throws dist::Error naming --huge-pages where the kernel has transparent
  // huge pages off or refuses the advice.
  HostBuffer(size_t bytes, bool huge_pages);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  unsigned char* data() const { return data_; }
  size_t size() const { return bytes_; }
 private:
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
};

// How many bytes of these buffers the kernel backs with huge pages now: the
// AnonHugePages of every mapping in /proc/self/smaps that overlaps one (each
// counted once; adjacent mappings of the same kind may have merged), at most
// the buffers' size.
size_t huge_page_bytes(std::initializer_list<const HostBuffer*> buffers);

}  // namespace dist::bench
