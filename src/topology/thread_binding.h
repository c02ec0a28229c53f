// Where replica threads run: hwloc spreads n threads over the cores this
// process may use (hwloc_distrib), so that replica threads of one process do
// not pile onto one core, and each thread is then bound to its set.
#pragma once

#include <vector>

namespace dist {

// The PUs (OS indexes) of each of `count` threads, spread over the allowed
// cores. Throws Status::kUnsupported without hwloc in the build.
std::vector<std::vector<unsigned>> spread_threads(int count);

// Binds the calling thread to `pus`; throws Status::kSystem naming the error.
void bind_current_thread(const std::vector<unsigned>& pus);

}  // namespace dist
