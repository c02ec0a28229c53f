// The shared-memory path's entry point: the same calls as run_collective, for
// a communicator whose ranks all share one host and one segment.
#pragma once

#include <chrono>
#include <string>

#include "collectives/collective_call.h"
#include "collectives/shm/group.h"

namespace dist {

// Checks the call, starts it on the group and runs it. `all_reduce` is the
// forced all-reduce algorithm ("shm_direct", "shm_split"), or empty/"shm" to
// choose by size and rank count.
void run_shm_collective(ShmGroup& group, const CollectiveCall& call, uint64_t seq,
                        std::chrono::steady_clock::time_point deadline, const std::string& all_reduce);

// The algorithm this path runs for `kind` with `bytes` per rank: "shm_direct",
// "shm_split" (all-reduce) or "shm" (the others).
const char* shm_algorithm_name(CollectiveKind kind, size_t bytes, const std::string& all_reduce);

// True for the all-reduce algorithm names that mean this path.
bool is_shm_algorithm(const std::string& name);

}  // namespace dist
