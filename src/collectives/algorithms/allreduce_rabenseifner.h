// Rabenseifner's all-reduce: a recursive-halving reduce-scatter (each round
// exchanges half of the remaining range with core rank i^mask, from mask =
// 2^k/2 down to 1) leaves core rank i with block i reduced; a
// recursive-doubling all-gather then spreads the blocks. Each rank moves about
// 2(n-1)/n of the message in 2 log2(n) steps: for medium messages. A rank
// count that is not a power of two is folded (power_of_two_fold.h). `send`
// may equal `recv`; MEAN combines as SUM.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void allreduce_rabenseifner(Channel& channel, const void* send, void* recv, size_t count, DType dtype,
                            ReduceOp op, const AlgorithmOptions& options);

}  // namespace dist
