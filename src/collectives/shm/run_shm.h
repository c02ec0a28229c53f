// The shared-memory path's entry point: the same calls as run_collective, for
// a communicator whose ranks all share one host and one segment.
#pragma once

#include <chrono>
#include <string>

#include "collectives/collective_call.h"
#include "collectives/shm/group.h"

namespace dist {

// Which all-reduce this path runs: by size, or one forced (DIST_ALLREDUCE_ALGO
// or the communicator's options: "shm_direct", "shm_split"; "shm" is by size).
enum class ShmAllReduce { kBySize, kDirect, kSplit };
ShmAllReduce shm_all_reduce_from_name(const std::string& name);

// Checks the call, starts it on the group and runs it; each of its waits ends
// with kTimeout `timeout` after the call first has to wait for a peer.
void run_shm_collective(ShmGroup& group, const CollectiveCall& call, uint64_t seq, std::chrono::milliseconds timeout,
                        ShmAllReduce all_reduce);

// The algorithm `group` runs for `kind` with `bytes` per rank: "shm_direct",
// "shm_split", "shm_split_single_copy" (all-reduce; the last where
// takes_split_write for a call into a separate result), "shm_single_copy"
// (all-gather, broadcast, and all-to-all out of place, where
// takes_single_copy) or "shm" (the others).
const char* shm_algorithm_name(const ShmGroup& group, CollectiveKind kind, size_t bytes, ShmAllReduce all_reduce);

// True for the all-reduce algorithm names that mean this path.
bool is_shm_algorithm(const std::string& name);

}  // namespace dist
