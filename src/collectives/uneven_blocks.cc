#include "collectives/uneven_blocks.h"

#include <string>

#include "base/status.h"

namespace dist {
namespace {

// One side's counts and offsets, each block checked against the buffer.
void take_side(int ranks, const uint64_t* counts, const uint64_t* offsets, uint64_t capacity, const char* side,
               std::vector<uint64_t>* counts_out, std::vector<uint64_t>* offsets_out) {
  const std::string buffer = side;
  counts_out->assign(counts, counts + ranks);
  offsets_out->resize(static_cast<size_t>(ranks));
  uint64_t packed = 0;
  for (int j = 0; j < ranks; ++j) {
    const uint64_t count = counts[j];
    const uint64_t offset = offsets != nullptr ? offsets[j] : packed;
    const std::string entry = "[" + std::to_string(j) + "]";
    // Written so that no sum can wrap: offset <= capacity, then count <= the rest.
    if (offset > capacity || count > capacity - offset) {
      fail_invalid(buffer + "_counts" + entry + " = " + std::to_string(count) + " elements at " +
                   (offsets != nullptr ? buffer + "_offsets" + entry + " = " : std::string("packed offset ")) +
                   std::to_string(offset) + " lie outside " + buffer + " (" + std::to_string(capacity) +
                   " elements)");
    }
    (*offsets_out)[static_cast<size_t>(j)] = offset;
    packed = offset + count;
  }
}

}  // namespace

std::shared_ptr<const UnevenBlocks> make_uneven_blocks(int ranks, const uint64_t* send_counts,
                                                       const uint64_t* send_offsets, uint64_t send_capacity,
                                                       const uint64_t* recv_counts, const uint64_t* recv_offsets,
                                                       uint64_t recv_capacity) {
  auto blocks = std::make_shared<UnevenBlocks>();
  take_side(ranks, send_counts, send_offsets, send_capacity, "send", &blocks->send_counts, &blocks->send_offsets);
  take_side(ranks, recv_counts, recv_offsets, recv_capacity, "recv", &blocks->recv_counts, &blocks->recv_offsets);
  return blocks;
}

}  // namespace dist
