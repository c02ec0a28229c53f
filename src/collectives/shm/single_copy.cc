#include "collectives/shm/single_copy.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace dist {
namespace {

// Read, and written back unchanged, by the peers' probes: it never changes
// once set, and it lies in writable memory.
volatile uint64_t& probe_value() {
  static volatile uint64_t value = [] {
    std::random_device random;
    return (static_cast<uint64_t>(random()) << 32) | random() | 1;  // never zero
  }();
  return value;
}

}  // namespace

SingleCopyProbe single_copy_probe() {
  SingleCopyProbe probe;
  probe.pid = static_cast<uint64_t>(getpid());
  probe.address = reinterpret_cast<uintptr_t>(&probe_value());
  probe.value = probe_value();
  return probe;
}

bool single_copy_reaches(const SingleCopyProbe& probe) {
  if (probe.pid == 0 || probe.address == 0 || probe.value == 0) return false;
  const auto pid = static_cast<pid_t>(probe.pid);
  auto* address = reinterpret_cast<void*>(static_cast<uintptr_t>(probe.address));
  uint64_t seen = 0;
  // Another process under the same pid (another PID namespace) holds
  // anything but this value there.
  if (read_process_memory(pid, address, &seen, sizeof seen) != 0 || seen != probe.value) return false;
  // Writing needs the same permission as reading, but a system call filter
  // may allow one and not the other: write the value back as it is.
  return write_process_memory(pid, address, &seen, sizeof seen) == 0;
}

bool single_copy_wanted() {
  const char* setting = std::getenv("DIST_SHM_SINGLE_COPY");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
}

namespace {

// Moves `bytes` between `local` and `remote` in process `pid` in the
// direction of `transfer` (process_vm_readv or process_vm_writev), going on
// after a short transfer; 0 or the errno of the first failure.
template <typename Transfer>
int move_process_memory(pid_t pid, uintptr_t remote, unsigned char* local, size_t bytes, Transfer transfer) {
  while (bytes > 0) {
    iovec here{local, bytes};
    iovec there{reinterpret_cast<void*>(remote), bytes};
    const ssize_t moved = transfer(pid, &here, 1, &there, 1, 0);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EFAULT;  // nothing moved: the rest is not there
    // A transfer may stop short (at a page it could not take): go on from there.
    local += moved;
    remote += static_cast<uintptr_t>(moved);
    bytes -= static_cast<size_t>(moved);
  }
  return 0;
}

}  // namespace

int read_process_memory(pid_t pid, const void* remote, void* local, size_t bytes) {
  return move_process_memory(pid, reinterpret_cast<uintptr_t>(remote), static_cast<unsigned char*>(local), bytes,
                             process_vm_readv);
}

int write_process_memory(pid_t pid, void* remote, const void* local, size_t bytes) {
  // process_vm_writev only reads the local iovec's memory.
  return move_process_memory(pid, reinterpret_cast<uintptr_t>(remote),
                             const_cast<unsigned char*>(static_cast<const unsigned char*>(local)), bytes,
                             process_vm_writev);
}

bool process_ended(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return errno == ENOENT;  // no such process (any other error: say it may run)
  char line[512];
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  if (!read) return false;
  // "pid (comm) state ...": the name may hold anything, ')' included.
  const char* close = std::strrchr(line, ')');
  if (close == nullptr || close[1] != ' ') return false;
  const char state = close[2];
  return state == 'Z' || state == 'X' || state == 'x';
}

}  // namespace dist
