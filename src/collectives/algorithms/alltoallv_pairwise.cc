#include "collectives/algorithms/alltoallv_pairwise.h"

#include <cstring>
#include <string>

#include "base/status.h"

namespace dist {
namespace {

[[noreturn]] void counts_disagree(int sender, int receiver, uint64_t sent, uint64_t expected) {
  fail(Status::kMismatch, "all_to_all_v: rank " + std::to_string(sender) + " sends " + std::to_string(sent) +
                              " elements to rank " + std::to_string(receiver) + ", which expects " +
                              std::to_string(expected) + " from it");
}

}  // namespace

void alltoallv_pairwise(Channel& channel, const void* send, void* recv, DType dtype, const UnevenBlocks& blocks) {
  const int n = channel.size();
  const int rank = channel.rank();
  const size_t element = size_of(dtype);
  auto index = [](int r) { return static_cast<size_t>(r); };
  auto send_block = [&](int to) {
    return static_cast<const unsigned char*>(send) + blocks.send_offsets[index(to)] * element;
  };
  auto recv_block = [&](int from) { return static_cast<unsigned char*>(recv) + blocks.recv_offsets[index(from)] * element; };
  auto send_bytes = [&](int to) { return static_cast<size_t>(blocks.send_counts[index(to)]) * element; };
  auto recv_bytes = [&](int from) { return static_cast<size_t>(blocks.recv_counts[index(from)]) * element; };

  // Before any message: a rank whose own counts disagree fails alone, and its
  // peers learn of it through the communicator's failure.
  if (send_bytes(rank) != recv_bytes(rank)) {
    fail(Status::kMismatch, "rank " + std::to_string(rank) + " sends " + std::to_string(blocks.send_counts[index(rank)]) +
                                " elements to itself but receives " + std::to_string(blocks.recv_counts[index(rank)]) +
                                " from itself in all_to_all_v");
  }
  for (int k = 1; k < n; ++k) {
    const int to = (rank + k) % n;
    const int from = (rank - k + n) % n;
    const uint64_t mine[2] = {blocks.send_counts[index(to)], blocks.recv_counts[index(to)]};
    uint64_t theirs[2] = {0, 0};  // what `from` sends this rank, and expects from it
    channel.send_recv(to, mine, sizeof mine, from, theirs, sizeof theirs);
    if (theirs[0] != blocks.recv_counts[index(from)]) counts_disagree(from, rank, theirs[0], blocks.recv_counts[index(from)]);
    if (theirs[1] != blocks.send_counts[index(from)]) counts_disagree(rank, from, blocks.send_counts[index(from)], theirs[1]);
  }
  if (send_bytes(rank) > 0) std::memcpy(recv_block(rank), send_block(rank), send_bytes(rank));
  for (int k = 1; k < n; ++k) {
    const int to = (rank + k) % n;
    const int from = (rank - k + n) % n;
    channel.send_recv(to, send_block(to), send_bytes(to), from, recv_block(from), recv_bytes(from));
  }
}

}  // namespace dist
