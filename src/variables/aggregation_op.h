// The reduction that implements a SUM or MEAN aggregation.
#pragma once

#include "collectives/reduce_op.h"
#include "variables/variable_policy.h"

namespace dist {

inline ReduceOp reduce_op_of(Aggregation aggregation) {
  return aggregation == Aggregation::kMean ? ReduceOp::MEAN : ReduceOp::SUM;
}

}  // namespace dist
