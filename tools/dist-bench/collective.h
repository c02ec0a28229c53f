// The collectives dist-bench times: their names, how a --sizes entry becomes
// buffer lengths, one call, and the bus-bandwidth factor.
#pragma once

#include <cstdint>
#include <string>

#include <distribute/c_api.h>
#include "dtype.h"

namespace dist::bench {

// Throws dist::Error naming `flag` when `name` is not one dist-bench times.
dist_collective_t parse_collective(const std::string& name, const std::string& flag);
const char* collective_name(dist_collective_t collective);
// "all_reduce|reduce|...": for usage and error messages.
std::string collective_names();

// Buffer lengths for one size. A size is bytes as bench/README.md's table has
// them (after nccl-tests): the buffer for all_reduce, reduce and broadcast; the
// gathered output of all_gather; each rank's input of reduce_scatter; the send
// buffer of all_to_all. Sizes are rounded down to whole elements (whole
// blocks per rank where the size spans every rank), and up to at least one.
struct Layout {
  uint64_t block = 0;            // elements each rank contributes
  uint64_t send_count = 0;       // elements in the send buffer
  uint64_t recv_count = 0;       // elements in the result buffer
  uint64_t csv_bytes = 0;        // the size as the CSV reports it
  uint64_t contribution_bytes = 0;  // block in bytes, as dist_comm_algorithm takes it
  bool in_place = false;         // all_reduce: the result over the input, in the result buffer
};
Layout layout_for(dist_collective_t collective, uint64_t bytes, const Dtype& dtype, int ranks);

// Root of broadcast and reduce.
constexpr int32_t kRoot = 0;

// One blocking call on buffers of `memory_kind` (with `stream` for CUDA
// memory). Broadcast works in `recv`; the sum is the reduction.
void call_collective(dist_comm_t* comm, dist_collective_t collective, const Dtype& dtype, const Layout& layout,
                     void* send, void* recv, dist_memory_kind_t memory_kind = DIST_MEMORY_HOST,
                     void* stream = nullptr);

// busbw = algbw * factor (nccl-tests' definitions: 2(n-1)/n for all_reduce,
// (n-1)/n for all_gather, reduce_scatter and all_to_all, so 0 at one rank; 1
// for reduce and broadcast).
double bus_factor(dist_collective_t collective, int ranks);

// Throws dist::Error with `what` and the library's message unless DIST_OK.
void check_status(dist_status_t status, const std::string& what);

}  // namespace dist::bench
