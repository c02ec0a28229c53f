// Pairwise all-to-all with blocks of any size (dist_all_to_all_v). First the
// counts: in step k = 1..n-1 rank r tells (r+k)%n how much it sends it and
// expects from it, and hears the same from (r-k+n)%n, so that both ranks of a
// pair that disagree fail with a mismatch naming both before any data moves
// (a rank that only sent would otherwise complete). Then the own block is
// copied locally and the blocks are exchanged in the same steps; the channel
// still checks each message's size.
#pragma once

#include "base/dtype.h"
#include "collectives/uneven_blocks.h"
#include "transport/channel.h"

namespace dist {

void alltoallv_pairwise(Channel& channel, const void* send, void* recv, DType dtype, const UnevenBlocks& blocks);

}  // namespace dist
