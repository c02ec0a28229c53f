// Pairwise all-to-all: block j of rank i's `send` lands as block i of rank
// j's `recv` (blocks of `count` elements). The own block is copied locally;
// then in step k = 1..n-1 rank r sends to (r+k)%n while receiving from
// (r-k+n)%n, one exchange per step so every rank's link is busy each step.
// In place (`send` == `recv`) a received block whose slot still holds
// outgoing data waits in a side buffer until that data has left; the messages
// are the same as out of place, so ranks may differ in that choice.
#pragma once

#include <cstddef>

#include "base/dtype.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

void alltoall_pairwise(Channel& channel, const void* send, void* recv, size_t count, DType dtype,
                       const AlgorithmOptions& options);

}  // namespace dist
