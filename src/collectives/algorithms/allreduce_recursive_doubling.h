// Recursive-doubling all-reduce: log2(n) rounds in which core rank i and
// i^mask exchange their whole partial results and both combine them (lower
// ranks' data first, so both get the same bits). For small messages, where
// latency dominates. A rank count that is not a power of two is folded
// (power_of_two_fold.h). `send` may equal `recv`; MEAN combines as SUM.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void allreduce_recursive_doubling(Channel& channel, const void* send, void* recv, size_t count, DType dtype,
                                  ReduceOp op, const AlgorithmOptions& options);

}  // namespace dist
