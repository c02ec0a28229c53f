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

  const size_t chunk = std::max<size_t>(1, choose_chunk_bytes(h.options()) / element);
  const size_t read_chunk = std::max<size_t>(1, kShmStepBytes / element);  // the peers' parts stay in L2
  const size_t staged = std::min(chunk, std::max<size_t>(elements, 1));
  ScratchBuffer from_other_host(kChunksInFlight * staged * element);
  ScratchBuffer from_peers(static_cast<size_t>(n - 1) * std::min(read_chunk, staged) * element);
  const size_t chunks = (elements + chunk - 1) / chunk;
  SingleCopyOutcome outcome;

  h.across_with(h.rail(), [&](Channel& rail) {
    const int other = 1 - rail.rank();
    const bool first_host = rail.rank() == 0;
    TransferId received[kChunksInFlight];
    TransferId sent[kChunksInFlight];
    auto extent = [&](size_t c, size_t* offset, size_t* count) {
      *offset = (first + c * chunk) * element;
      *count = std::min(chunk, elements - c * chunk);
    };
    // Chunk c's host sum, into the result, a step's worth at a time.
    auto sum_in_host = [&](size_t c) {
      size_t offset, count;
      extent(c, &offset, &count);
      for (size_t done = 0; done < count && outcome.error == 0;) {
        const size_t k = std::min(read_chunk, count - done);
        const size_t at = offset + done * element;
        if (!combine_from_peers(group, peers, at, own_input + at, out + at, k, s.dtype, op, from_peers.data(),
                                outcome)) {
          return;
        }
        done += k;
      }
    };
    // Chunk c once both host sums are here: combined, finished, delivered.
    auto finish = [&](size_t c) {
      size_t offset, count;
      extent(c, &offset, &count);
      const unsigned char* theirs = from_other_host.data() + (c % kChunksInFlight) * staged * element;
      rail.wait(received[c % kChunksInFlight]);
      rail.wait(sent[c % kChunksInFlight]);
      if (outcome.error != 0) return;
      const void* sums[2] = {first_host ? out + offset : theirs, first_host ? theirs : out + offset};
      reduce_many(out + offset, sums, 2, count, s.dtype, op);
      if (s.op == ReduceOp::MEAN) finalize_mean(out + offset, count, s.dtype, h.size());
      write_to_peers(group, peers, out, offset, count * element, outcome);
    };
    // A chunk that failed in the host still crosses (as it is), so that the
    // other host's rank is not left waiting for it; the host's ranks learn
    // of the failure at the end.
    auto start = [&](size_t c) {
      size_t offset, count;
      extent(c, &offset, &count);
      unsigned char* theirs = from_other_host.data() + (c % kChunksInFlight) * staged * element;
      received[c % kChunksInFlight] = rail.recv(other, theirs, count * element);
      sum_in_host(c);
      sent[c % kChunksInFlight] = rail.send(other, out + offset, count * element);
    };
    stream_chunks(rail, chunks, start, finish);
  });
  end_single_copies(group, outcome, "read from or write to");
}

}  // namespace dist
