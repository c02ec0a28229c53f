// The result check dist-bench makes once per size before timing: every rank
// fills its input with small integers that depend on rank and position, runs
// the collective once, and compares every element of its result with a value
// it computes itself, so a broken path cannot report a speed.
#pragma once

#include <exception>

#include <distribute/c_api.h>
#include "collective.h"
#include "dtype.h"
#include "placement.h"

namespace dist::bench {

// Throws dist::Error when the sums this check makes over `ranks` ranks would not
// be exact in `dtype` (f16/bf16 with many ranks).
void require_exact_check(dist_collective_t collective, const Dtype& dtype, int ranks);

// A wrong result this rank has already printed to stderr.
class CheckReported : public std::exception {
 public:
  const char* what() const noexcept override { return "wrong result (reported on stderr)"; }
};

// Runs the collective once on `send`/`recv` (sized for `layout`) and checks
// the result on every rank. All ranks agree on the outcome and throw when any
// rank saw a wrong element: that rank prints a line naming the collective,
// dtype, size and first wrong element and throws CheckReported; the others
// throw dist::Error saying another rank saw it.
// `send`/`recv` are host arrays; the call runs on `where`'s buffers.
void verify_collective(dist_comm_t* comm, dist_collective_t collective, const Dtype& dtype, const Layout& layout,
                       void* send, void* recv, const Placement& where, int rank, int ranks);

// The largest `value` over the ranks (an all-reduce MAX of one f64).
double max_over_ranks(dist_comm_t* comm, double value);

}  // namespace dist::bench
