// The blocks of an uneven all-to-all (dist_all_to_all_v): per communicator
// rank j, how many elements go to j and from where in `send`, and how many
// come from j and to where in `recv`. Copied out of the caller's arrays, so
// that a queued call does not read them later.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace dist {

struct UnevenBlocks {
  std::vector<uint64_t> send_counts;
  std::vector<uint64_t> send_offsets;  // in elements
  std::vector<uint64_t> recv_counts;
  std::vector<uint64_t> recv_offsets;
};

// The blocks for `ranks` ranks from the caller's arrays (one entry per rank);
// null offsets mean packed in rank order. Throws invalid-argument, naming the
// array and entry, for a block that does not lie inside its buffer of
// `send_capacity` / `recv_capacity` elements.
std::shared_ptr<const UnevenBlocks> make_uneven_blocks(int ranks, const uint64_t* send_counts,
                                                       const uint64_t* send_offsets, uint64_t send_capacity,
                                                       const uint64_t* recv_counts, const uint64_t* recv_offsets,
                                                       uint64_t recv_capacity);

}  // namespace dist
