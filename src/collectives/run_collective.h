// The point-to-point path's entry points: a call run over a Channel by the
// table's point-to-point row that applies (algorithm_table.h).
#pragma once

#include "collectives/algorithm_table.h"
#include "collectives/collective_call.h"

namespace dist {

class Channel;

// Runs the call between channel.begin() and channel.end() (the caller brackets
// it), by the table's point-to-point row that applies; `forced` is the
// all-reduce forced onto that path, resolved once from its name
// (forced_point_to_point, or a communicator's when its options change).
// MEAN reduces as SUM and divides by the communicator size at the end.
// `ran`, when not null, is set to the row before it runs (the counters name it
// also when it fails).
void run_collective(Channel& channel, const CollectiveCall& call, const AlgorithmOptions& options,
                    const ForcedAllReduce& forced, const AlgorithmRow** ran = nullptr);

}  // namespace dist
