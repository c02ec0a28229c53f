// Broadcast for large messages: the root scatters the message's n blocks
// down a binomial tree (relative rank v gets block v, and passes on its
// subtree's blocks), then a ring all-gather (ring_pipeline.h) over relative
// ranks completes every copy. The root sends the message about once and every
// rank moves about 2(n-1)/n of it, instead of the root sending it log2(n) times.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void broadcast_scatter_allgather(Channel& channel, void* buffer, size_t count, DType dtype, int root,
                                 const AlgorithmOptions& options);

}  // namespace dist
