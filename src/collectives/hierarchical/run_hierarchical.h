// The hierarchical path's entry point: the same calls as run_collective, run
// by the table's hierarchical row that applies (algorithm_table.h).
#pragma once

#include <chrono>

#include "collectives/algorithm_table.h"
#include "collectives/collective_call.h"
#include "collectives/hierarchical/hierarchy.h"

namespace dist {

// What selection sees of a call of `bytes` per rank (per block) on `h`.
Selection hierarchical_selection(const Hierarchy& h, size_t bytes);

// Checks the call and runs it in phases, each ending by its deadline (hierarchy.h).
// `ran`, when not null, is set to the row before it runs.
void run_hierarchical_collective(Hierarchy& h, const CollectiveCall& call, uint64_t seq,
                                 std::chrono::milliseconds timeout, const AlgorithmOptions& options,
                                 const ForcedAllReduce& forced, const AlgorithmRow** ran = nullptr);

}  // namespace dist
