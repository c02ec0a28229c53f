// Deterministic reductions (DIST_DETERMINISTIC=1, dist_comm_configure): a
// floating-point SUM, PROD or MEAN gives the same bits for a given number of
// ranks whatever path, algorithm, chunk or (above, in strategies) bucket
// size carries it, because every element is combined in one order: rank 0's
// contribution, then rank 1's, ..., then rank n-1's, by the same kernel.
// The call runs as data movement, which is exact on every path: an
// all-to-all gives each rank every rank's part of its block, the rank
// combines those in rank order, and an all-gather hands the blocks round.
// Integers and MIN/MAX are exact in any order and run as usual.
#pragma once

#include <functional>

#include "collectives/collective_call.h"

namespace dist {

// Whether `call` needs the fixed order (a floating-point SUM, PROD or MEAN
// of all_reduce, reduce or reduce_scatter).
bool needs_fixed_order(const CallSignature& signature);

// Runs `call` (checked, host memory, not piecewise) on a communicator of
// `size` ranks as this `rank`, through `move`, which runs a data-movement
// call (all_to_all, all_gather) on the same communicator.
void run_in_fixed_order(const CollectiveCall& call, int rank, int size,
                        const std::function<void(const CollectiveCall&)>& move);

}  // namespace dist
