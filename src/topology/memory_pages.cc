#include "topology/memory_pages.h"

#include <unistd.h>

#include <fstream>

namespace dist {

namespace {

std::string mode_of_file(const char* path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return mode_in_force(line);
}

}  // namespace

std::string mode_in_force(const std::string& line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos || close == open + 1) return {};
  return line.substr(open + 1, close - open - 1);
}

MemoryPages discover_memory_pages() {
  MemoryPages pages;
  const long page = sysconf(_SC_PAGESIZE);
  pages.page_bytes = page > 0 ? static_cast<uint64_t>(page) : 0;
  pages.huge_pages = mode_of_file("/sys/kernel/mm/transparent_hugepage/enabled");
  pages.shmem_huge_pages = mode_of_file("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  return pages;
}

}  // namespace dist
