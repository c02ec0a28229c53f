// strategy.reduce(op, per_replica_value, axis) with TF's semantics: across
// replicas only (axis none), or also across the batch dimension (axis 0), where
// MEAN divides by the true number of rows in the whole sync group.
#pragma once

#include <vector>

#include "collectives/reduce_op.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"

namespace dist {

inline constexpr int kAxisNone = -1;

// values: one per local replica. axis none: each has result.count elements.
// axis 0: each has rows_i * result.count elements. op: SUM or MEAN.
void reduce_per_replica(Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& values, int axis,
                        const TensorRef& result);

}  // namespace dist
