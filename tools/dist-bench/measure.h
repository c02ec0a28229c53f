// Times one collective at each size on an already joined communicator, after
// checking its result there, and prints a row per size (rank 0 prints).
#pragma once

#include <distribute/c_api.h>
#include "options.h"

namespace dist::bench {

// Returns the process exit code; throws dist::Error on a failed call or check.
int run_benchmark(dist_comm_t* comm, const Options& options);

}  // namespace dist::bench
