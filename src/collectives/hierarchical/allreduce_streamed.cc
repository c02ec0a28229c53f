#include <algorithm>

#include "collectives/algorithm_thresholds.h"
#include "collectives/algorithms/block_layout.h"
#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/streaming.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/peer_buffers.h"

namespace dist {

// Two hosts, L ranks on each. Local rank l owns block l of the message
// (BlockLayout over L). Chunk by chunk through its block, it reads that chunk
// of its host peers' inputs (process_vm_readv), sums it with its own into its
// result, sends the sum to its counterpart on the other host and receives
// theirs; once both are through, it combines the two host sums (host 0's
// first, as the counterpart does, so both get the same bits) and writes the
// finished chunk into its host peers' results (process_vm_writev).
//
// Against hier_allreduce_rails (reduce-scatter in the host, the rail's
// all-reduce, all-gather in the host, each finished before the next starts),
// the work inside the host overlaps the transfer between hosts, and the host's
// ranks meet twice per call (the addresses; the end of the copies) instead of
// at every step of two phases: a rank whose chunk is late on the link does not
// hold up its host peers. Between the hosts each rank moves its block once
// each way: the link's share of the bound.
//
// In place too: block l of any rank's buffer is read and written by local
// rank l alone, each chunk read before it is written.
void hier_allreduce_streamed(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t element = size_of(s.dtype);
  const ReduceOp op = combining_op(s.op);
  ShmGroup& group = *h.host_group();
  const int n = group.size();
  const int me = group.rank();
  const BlockLayout blocks(static_cast<size_t>(s.count), n);
  const size_t first = blocks.offset(me);
  const size_t elements = blocks.size(me);
  const auto* own_input = static_cast<const unsigned char*>(call.send);
  auto* out = static_cast<unsigned char*>(call.recv);

  PeerBuffers peers[kShmMaxRanks];
  h.in_host([&](ShmGroup&) { exchange_peer_buffers(group, call.send, call.recv, peers); });

  const Chunks chunks(elements, element, choose_chunk_bytes(h.options()));
  const size_t staged = chunks.largest() * element;
  ScratchBuffer from_other_host(kChunksInFlight * staged);
  ScratchBuffer from_peers(peer_staging_bytes(group, chunks.largest(), s.dtype));
  SingleCopyOutcome outcome;

  h.across_with(h.rail(), [&](Channel& rail) {
    const int other = 1 - rail.rank();
    const bool first_host = rail.rank() == 0;
    ChunkTransfers transfers;
    auto theirs_of = [&](size_t c) { return from_other_host.data() + (c % kChunksInFlight) * staged; };
    // A chunk whose reads failed still crosses (as it is), so that the other
    // host's rank is not left waiting for it; the host's ranks learn of the
    // failure at the end.
    auto start = [&](size_t c) {
      const size_t offset = (first + chunks.first(c)) * element;
      const size_t count = chunks.size(c);
      transfers.receive(rail, c, other, theirs_of(c), count * element);
      if (outcome.error == 0) {
        combine_from_peers_by_steps(group, peers, offset, own_input + offset, out + offset, count, s.dtype, op,
                                    from_peers.data(), outcome);
      }
      transfers.send(rail, c, other, out + offset, count * element);
    };
    // Chunk c once both host sums are here: combined, finished, delivered.
    auto finish = [&](size_t c) {
      transfers.wait(rail, c);
      if (outcome.error != 0) return;
      const size_t offset = (first + chunks.first(c)) * element;
      const size_t count = chunks.size(c);
      const void* sums[2] = {first_host ? out + offset : theirs_of(c), first_host ? theirs_of(c) : out + offset};
      reduce_many(out + offset, sums, 2, count, s.dtype, op);
      if (s.op == ReduceOp::MEAN) finalize_mean(out + offset, count, s.dtype, h.size());
      write_to_peers(group, peers, out, offset, count * element, outcome);
    };
    stream_chunks(rail, chunks.count(), start, finish);
  });
  end_single_copies(group, outcome, "read from or write to");
}

}  // namespace dist
