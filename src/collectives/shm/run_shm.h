// The shared-memory path's entry point: the same calls as run_collective, for
// a communicator whose ranks all share one host and one segment, run by the
// table's shared-memory row that applies (algorithm_table.h).
#pragma once

#include <chrono>

#include "collectives/algorithm_table.h"
#include "collectives/collective_call.h"
#include "collectives/shm/group.h"

namespace dist {

// What selection sees of a call of `bytes` per rank (per block) on `group`.
Selection shm_selection(const ShmGroup& group, size_t bytes, bool in_place);

// Checks the call, starts it on the group and runs it; each of its waits ends
// with kTimeout `timeout` after the call first has to wait for a peer.
// `ran`, when not null, is set to the row before it runs.
void run_shm_collective(ShmGroup& group, const CollectiveCall& call, uint64_t seq, std::chrono::milliseconds timeout,
                        const ForcedAllReduce& forced, const AlgorithmRow** ran = nullptr);

// Runs a checked call the group has begun, by the row that applies.
void run_shm_algorithm(ShmGroup& group, const CollectiveCall& call, const ForcedAllReduce& forced = {},
                       const AlgorithmRow** ran = nullptr);

}  // namespace dist
