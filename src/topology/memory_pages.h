// The kernel's pages for a process's memory: the base page size and its
// transparent huge page modes, which the topology report shows and
// dist-bench --huge-pages checks (compiled into it: this file needs nothing else). They matter
// here because the copies between processes (collectives/shm/single_copy.h)
// pin the peer's pages one page at a time: on huge pages the same copies took
// 0.67-0.90 of the time (bench/README.md, "Buffers on huge pages").
#pragma once

#include <cstdint>
#include <string>

namespace dist {

struct MemoryPages {
  uint64_t page_bytes = 0;
  // /sys/kernel/mm/transparent_hugepage/enabled: "always", "madvise" or
  // "never"; empty where the kernel does not say.
  std::string huge_pages;
  // .../shmem_enabled, for shared memory (our segments): "always",
  // "within_size", "advise", "never", "deny" or "force"; empty likewise.
  std::string shmem_huge_pages;
};

MemoryPages discover_memory_pages();

// The mode in force in such a file's line, the bracketed word ("always
// [madvise] never" -> "madvise"); empty without one.
std::string mode_in_force(const std::string& line);

}  // namespace dist
