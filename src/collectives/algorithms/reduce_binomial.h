// Binomial-tree reduce to `root`. With ranks renumbered relative to the
// root, rank v receives from v+1, v+2, v+4, ... (each below n, for the masks
// under v's lowest set bit) and sends its partial result to v minus that
// bit. The tree runs chunk by chunk: a chunk is combined and forwarded while
// later chunks are still arriving, so interior ranks need only chunk-sized
// staging and no copy of the message. Only the root writes `recv` (others
// may pass null); `send` may equal `recv` at the root. MEAN combines as
// SUM (the caller divides at the root).
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void reduce_binomial(Channel& channel, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root,
                     const AlgorithmOptions& options);

}  // namespace dist
