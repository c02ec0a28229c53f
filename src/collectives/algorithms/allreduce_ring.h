// Ring all-reduce: a reduce-scatter pass then an all-gather pass around the
// ring (ring_pipeline.h), pipelined in chunks. Each rank sends and receives
// 2(n-1)/n of the message: bandwidth-optimal, with 2(n-1) latency steps, so
// it is the choice for large messages. Blocks differ by one element when n
// does not divide count. Reads `send`, never copies it; `send` may equal
// `recv`. MEAN combines as SUM (the caller divides).
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void allreduce_ring(Channel& channel, const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                    const AlgorithmOptions& options);

}  // namespace dist
