#include "collectives/algorithms/alltoallv_pairwise.h"

#include <cstring>
#include <string>

#include "base/status.h"

namespace dist {
namespace {

[[noreturn]] void counts_disagree(int sender, int receiver, uint64_t sent, uint64_t expected) {
  if (sender == receiver) {
    fail(Status::kMismatch, "all_to_all_v: rank " + std::to_string(sender) + " sends " + std::to_string(sent) +
                                " elements to itself but receives " + std::to_string(expected) + " from itself");
  }
  fail(Status::kMismatch, "all_to_all_v: rank " + std::to_string(sender) + " sends " + std::to_string(sent) +
                              " elements to rank " + std::to_string(receiver) + ", which expects " +
                              std::to_string(expected) + " from it");
}

}  // namespace

void alltoallv_pairwise(Channel& channel, const void* send, void* recv, DType dtype, const UnevenBlocks& blocks) {
  const int n = channel.size();
  const int rank = channel.rank();
  const size_t element = size_of(dtype);
  auto at = [](const std::vector<uint64_t>& values, int r) { return values[static_cast<size_t>(r)]; };
  auto send_block = [&](int to) { return static_cast<const unsigned char*>(send) + at(blocks.send_offsets, to) * element; };
  auto recv_block = [&](int from) { return static_cast<unsigned char*>(recv) + at(blocks.recv_offsets, from) * element; };
  auto send_bytes = [&](int to) { return static_cast<size_t>(at(blocks.send_counts, to)) * element; };
  auto recv_bytes = [&](int from) { return static_cast<size_t>(at(blocks.recv_counts, from)) * element; };

  // Before any message: a rank whose own counts disagree fails alone, and its
  // peers learn of it through the communicator's failure.
  if (at(blocks.send_counts, rank) != at(blocks.recv_counts, rank)) {
    counts_disagree(rank, rank, at(blocks.send_counts, rank), at(blocks.recv_counts, rank));
  }
  for (int k = 1; k < n; ++k) {
    const int to = (rank + k) % n;
    const int from = (rank - k + n) % n;
    const uint64_t mine[2] = {at(blocks.send_counts, to), at(blocks.recv_counts, to)};
    uint64_t theirs[2] = {0, 0};  // what `from` sends this rank, and expects from it
    channel.send_recv(to, mine, sizeof mine, from, theirs, sizeof theirs);
    const uint64_t expected = at(blocks.recv_counts, from);
    const uint64_t sending = at(blocks.send_counts, from);
    if (theirs[0] != expected) counts_disagree(from, rank, theirs[0], expected);
    if (theirs[1] != sending) counts_disagree(rank, from, sending, theirs[1]);
  }
  if (send_bytes(rank) > 0) std::memcpy(recv_block(rank), send_block(rank), send_bytes(rank));
  for (int k = 1; k < n; ++k) {
    const int to = (rank + k) % n;
    const int from = (rank - k + n) % n;
    channel.send_recv(to, send_block(to), send_bytes(to), from, recv_block(from), recv_bytes(from));
  }
}

}  // namespace dist
