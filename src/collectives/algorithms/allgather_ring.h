// Ring all-gather: rank r's `count` elements land at recv + r*count on every
// rank, over n-1 pipelined ring steps (ring_pipeline.h) received straight into
// `recv`. In place when `send` is `recv` (the rank's block is already at
// recv + r*count) or is recv + r*count itself; otherwise the own block is
// copied into place once.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void allgather_ring(Channel& channel, const void* send, void* recv, size_t count, DType dtype,
                    const AlgorithmOptions& options);

}  // namespace dist
