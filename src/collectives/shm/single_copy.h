// Single copies between the ranks of a shared-memory group: a rank copies
// data straight out of a peer's own buffer, or into it, with the kernel's
// cross-memory attach (process_vm_readv / process_vm_writev), instead of
// through the slots of the segment, where everything is copied twice (into
// the owner's slot, out by the reader). All-gather, all-to-all and broadcast
// read the peers' blocks (read_from_peers.cc); the split all-reduce writes
// each reduced slice into the peers' results (allreduce_split_write.cc).
//
// Whether a process may reach another's memory depends on the system (ptrace
// rules, Yama, seccomp, PID namespaces), so the ranks find out at attach time:
// each publishes its pid and the address of a random value it holds, every
// rank reads that value from every peer and writes it back unchanged, and
// the path is used only when all of them succeeded.
// DIST_SHM_SINGLE_COPY=0 turns it off.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace dist {

// What a rank publishes so that its peers can test reading its memory.
struct SingleCopyProbe {
  uint64_t pid = 0;
  uint64_t address = 0;  // of `value`, in the publishing process
  uint64_t value = 0;
};

// This process's probe: its pid, and a random value that stays at one address
// for the life of the process.
SingleCopyProbe single_copy_probe();

// Whether this process reads `probe`'s value from the process that published
// it, and can write it back there.
bool single_copy_reaches(const SingleCopyProbe& probe);

// Whether DIST_SHM_SINGLE_COPY lets the path be used (anything but "0").
bool single_copy_wanted();

// Copies `bytes` from address `remote` in process `pid` to `local`. Returns 0,
// or the errno of the first read that failed (ESRCH: the process is gone;
// EFAULT: the range is not mapped in it).
int read_process_memory(pid_t pid, const void* remote, void* local, size_t bytes);

// The other way: copies `bytes` from `local` to address `remote` in process `pid`.
int write_process_memory(pid_t pid, void* remote, const void* local, size_t bytes);

// What a copy returns instead of an errno when the peer has left its group
// after a failed call (ShmGroup::withdraw): its buffers are no longer there
// to copy.
inline constexpr int kPeerWithdrew = -1;

// Whether process `pid` has ended (exited, killed, or a zombie not yet
// reaped): it can no longer be copying anything.
bool process_ended(pid_t pid);

}  // namespace dist
