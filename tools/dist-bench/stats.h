// --stats: the library's own counters (dist_comm_stats) for each size, timed,
// beside the benchmark's figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <distribute/c_api.h>

namespace dist::bench {

// Turns timing on for `comm`'s calls and clears its counters.
void start_stats(dist_comm_t* comm);
// Prints, on stderr, the counters of the calls since start_stats or the last
// print for the size `bytes` (every call dist-bench made: the check and the
// timing's own reductions included), then clears them.
void print_stats(dist_comm_t* comm, uint64_t bytes);

// Every counter row of `comm` as it stands.
std::vector<dist_comm_stat_t> stats_snapshot(const dist_comm_t* comm);

// What ran `collective`'s calls between two snapshots, by the bytes each
// algorithm carried: the one that carried most, then "+" each other that
// carried at least a tenth. Empty when no call of it ran. This, not
// dist_comm_algorithm, names what an in-place call ran, and what a choice the
// library learns took.
std::string algorithms_between(const std::vector<dist_comm_stat_t>& before, const std::vector<dist_comm_stat_t>& after,
                               dist_collective_t collective);

}  // namespace dist::bench
