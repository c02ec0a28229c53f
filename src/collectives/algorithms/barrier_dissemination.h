// Dissemination barrier: in round i (distance 2^i) every rank sends a
// zero-byte message to (r + 2^i) % n and receives one from (r - 2^i) % n.
// After ceil(log2 n) rounds every rank has heard, directly or through others,
// from every rank, so none leaves before all have arrived.
#pragma once

#include "transport/channel.h"

namespace dist {

void barrier_dissemination(Channel& channel);

}  // namespace dist
