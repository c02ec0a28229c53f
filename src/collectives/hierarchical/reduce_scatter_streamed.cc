#include <algorithm>
#include <cstring>

#include "collectives/algorithm_thresholds.h"
#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/streaming.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/peer_buffers.h"

namespace dist {

// Two hosts, L ranks on each; this rank's counterpart is the rank of the same
// local rank on the other host. Of the 2L blocks of every input, this rank
// needs its own block summed over all ranks, and its counterpart needs the
// counterpart's. Chunk by chunk through the block, this rank sums both
// blocks over its host (reading the host peers' inputs, process_vm_readv):
// the counterpart's block goes to the counterpart, its own stays here and is
// combined with what the counterpart sends of it (host 0's sum first, on
// both sides). The host's ranks only read each other's inputs, meeting twice
// per call (the addresses; the end of the reads); each rank moves its
// counterpart's block once over the link, the link's share of the bound.
// Against hier_reduce_scatter_rails there is no packed copy of the whole
// input and no reduce-scatter through the segment's slots before the link.
//
// In place, the result lands in recv's first block, which a host peer may
// still be reading as part of its input: it is gathered aside and copied
// there once every host peer is done.
void hier_reduce_scatter_streamed(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t element = size_of(s.dtype);
  const size_t count = static_cast<size_t>(s.count);
  const ReduceOp op = combining_op(s.op);
  ShmGroup& group = *h.host_group();
  const int other_host = 1 - h.host();
  const int counterpart = h.layout().ranks_on[static_cast<size_t>(other_host)][static_cast<size_t>(h.local_rank())];
  const size_t my_block = static_cast<size_t>(h.rank()) * count * element;
  const size_t their_block = static_cast<size_t>(counterpart) * count * element;
  const auto* input = static_cast<const unsigned char*>(call.send);
  const bool in_place = call.send == call.recv;
  ScratchBuffer aside(in_place ? count * element : 0);
  unsigned char* result = in_place ? aside.data() : static_cast<unsigned char*>(call.recv);

  PeerBuffers peers[kShmMaxRanks];
  h.in_host([&](ShmGroup&) { exchange_peer_buffers(group, call.send, call.recv, peers); });

  const Chunks chunks(count, element, choose_chunk_bytes(h.options()));
  const size_t staged = chunks.largest() * element;
  ScratchBuffer to_other_host(kChunksInFlight * staged);
  ScratchBuffer from_other_host(kChunksInFlight * staged);
  ScratchBuffer from_peers(peer_staging_bytes(group, chunks.largest(), s.dtype));
  SingleCopyOutcome outcome;

  // The host's sum of `elements` at byte `offset` of every input, into `out`.
  auto sum_in_host = [&](size_t offset, size_t elements, unsigned char* out) {
    if (outcome.error != 0) return;
    combine_from_peers_by_steps(group, peers, offset, input + offset, out, elements, s.dtype, op, from_peers.data(),
                                outcome);
  };

  h.across_with(h.rail(), [&](Channel& rail) {
    const int other = 1 - rail.rank();
    const bool first_host = rail.rank() == 0;
    ChunkTransfers transfers;
    auto slot = [&](ScratchBuffer& buffer, size_t c) { return buffer.data() + (c % kChunksInFlight) * staged; };
    // A chunk whose reads failed still crosses (as it is), so that the other
    // host's rank is not left waiting for it; the host's ranks learn of the
    // failure at the end.
    auto start = [&](size_t c) {
      const size_t offset = chunks.first(c) * element;
      const size_t elements = chunks.size(c);
      transfers.receive(rail, c, other, slot(from_other_host, c), elements * element);
      sum_in_host(their_block + offset, elements, slot(to_other_host, c));
      transfers.send(rail, c, other, slot(to_other_host, c), elements * element);
      sum_in_host(my_block + offset, elements, result + offset);
    };
    // Chunk c once the counterpart's sum of it is here: combined, finished.
    auto finish = [&](size_t c) {
      transfers.wait(rail, c);
      if (outcome.error != 0) return;
      const size_t elements = chunks.size(c);
      unsigned char* mine = result + chunks.first(c) * element;
      const unsigned char* theirs = slot(from_other_host, c);
      const void* sums[2] = {first_host ? mine : theirs, first_host ? theirs : mine};
      reduce_many(mine, sums, 2, elements, s.dtype, op);
      if (s.op == ReduceOp::MEAN) finalize_mean(mine, elements, s.dtype, h.size());
    };
    stream_chunks(rail, chunks.count(), start, finish);
  });
  end_single_copies(group, outcome, "read from");
  if (in_place) std::memcpy(call.recv, aside.data(), count * element);
}

}  // namespace dist
