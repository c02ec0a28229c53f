// dist-bench's command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <distribute/c_api.h>
#include "dtype.h"

namespace dist::bench {

struct Options {
  int launch_ranks = 0;               // -n: start this many local ranks itself
  dist_collective_t collective = DIST_COLLECTIVE_ALL_REDUCE;  // --op (or --collective)
  const Dtype* dtype = nullptr;       // --dtype; f32 unless given
  // --algo (or --algorithm): the all-reduce algorithm; any other name than
  // "auto" reaches the library as DIST_ALLREDUCE_ALGO, checked by its table.
  std::string algorithm = "auto";
  std::vector<uint64_t> sizes;        // bytes, as bench/README.md's table counts them
  double seconds_per_size = 0.5;      // time budget for the timed batches of one size
  int repeats = 7;                    // timed batches per size; the median is reported
  bool csv = false;
  bool check = true;                  // verify the result once per size
  bool in_place = false;              // --in-place: all_reduce's result over its input
  bool cuda = false;                  // --memory cuda: the buffers are CUDA device memory
  bool huge_pages = false;            // --huge-pages: host buffers on transparent huge pages
  bool stats = false;                 // --stats: time the calls and print the library's counters per size
  std::string variant;                // the CSV's variant column; empty: the algorithm used
};

// Throws dist::Error naming the bad flag.
Options parse_options(int argc, char** argv);

extern const char* const kUsage;

}  // namespace dist::bench
