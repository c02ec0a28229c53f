// The checks every rank makes of its own collective call before any message
// moves: valid kind, dtype, op and root, buffers present, aligned, sized and not
// partially overlapping. They run before communication so that no algorithm
// fails halfway for a reason local to one rank, leaving its peers waiting.
#pragma once

#include "collectives/collective_call.h"

namespace dist {

// Throws invalid-argument for a bad buffer, internal for what the C layer
// should have rejected.
void check_call(int ranks, int rank, const CollectiveCall& call);

// All-reduce, reduce and reduce-scatter combine values (and honour MEAN).
bool reduces(CollectiveKind kind);

}  // namespace dist
