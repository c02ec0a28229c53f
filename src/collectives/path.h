// The ways a communicator's collectives can travel. Each path has its rows
// in the table of algorithms (algorithm_table.h); a communicator takes the
// path its ranks can use, and a forced all-reduce may take another it offers.
#pragma once

#include <cstdint>

namespace dist {

// Numbered as the C ABI's DIST_COMM_PATH_* (context.cc checks it).
enum class Path : int32_t {
  kSelf = 0,           // one rank: nothing travels (the point-to-point rows run over a channel that sends nothing)
  kPointToPoint = 1,   // messages between ranks over the communicator's channel
  kSharedMemory = 2,   // a segment shared by all ranks on one host
  kHierarchical = 3,   // shared memory within hosts, messages between them
  kNccl = 4,           // NCCL, for GPU buffers
  kStaged = 5,         // GPU buffers through pinned host memory and the host path
};

// "self", "point_to_point", "shared_memory", "hierarchical", "nccl", "staged".
const char* name(Path path);

}  // namespace dist
