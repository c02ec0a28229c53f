// --stats: the library's own counters (dist_comm_stats) for each size, timed,
// beside the benchmark's figures.
#pragma once

#include <cstdint>

#include <distribute/c_api.h>

namespace dist::bench {

// Turns timing on for `comm`'s calls and clears its counters.
void start_stats(dist_comm_t* comm);
// Prints, on stderr, the counters of the calls since start_stats or the last
// print for the size `bytes` (every call dist-bench made: the check and the
// timing's own reductions included), then clears them.
void print_stats(dist_comm_t* comm, uint64_t bytes);

}  // namespace dist::bench
