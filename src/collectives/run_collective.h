// The point-to-point path's entry points: a call run over a Channel by the
// table's point-to-point row that applies (algorithm_table.h).
#pragma once

#include "collectives/algorithm_table.h"
#include "collectives/collective_call.h"

namespace dist {

class Channel;

// Runs the call between channel.begin() and channel.end() (the caller brackets
// it). MEAN reduces as SUM and divides by the communicator size at the end.
// options.all_reduce, when not empty, forces the all-reduce algorithm; a name
// that is not a point-to-point one throws invalid-argument.
void run_collective(Channel& channel, const CollectiveCall& call, const AlgorithmOptions& options);

// The same with the forced all-reduce already resolved (a communicator's, once
// per change of its options): no names are read.
void run_point_to_point(Channel& channel, const CollectiveCall& call, const AlgorithmOptions& options,
                        const ForcedAllReduce& forced);

}  // namespace dist
