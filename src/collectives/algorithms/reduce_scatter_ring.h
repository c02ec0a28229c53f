// Ring reduce-scatter: `send` holds n blocks of `count` elements; rank r
// gets block r reduced over all ranks in `recv`. The reduce-scatter pass of
// the ring (ring_pipeline.h), pipelined in chunks with partial results in
// staging slots, so `recv` needs only `count` elements. In place when
// `send` is `recv` (the input is recv's n*count elements and the result
// lands in its first `count`). MEAN combines as SUM.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void reduce_scatter_ring(Channel& channel, const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const AlgorithmOptions& options);

}  // namespace dist
