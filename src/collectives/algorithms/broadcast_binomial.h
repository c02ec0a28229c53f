// Binomial-tree broadcast from `root`, in place in `buffer`: relative rank
// v receives from v minus its lowest set bit, then forwards to v+mask for each
// smaller mask, largest subtree first. Chunk by chunk, so a chunk moves down
// the tree while the next one arrives. The root sends the message log2(n)
// times: for small and medium messages.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void broadcast_binomial(Channel& channel, void* buffer, size_t count, DType dtype, int root,
                        const AlgorithmOptions& options);

}  // namespace dist
