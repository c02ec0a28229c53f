#include <algorithm>

#include "collectives/algorithm_thresholds.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/streaming.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"
#include "collectives/shm/peer_buffers.h"

namespace dist {

// Two hosts, L ranks on each; this rank's counterpart is the rank of the same
// local rank on the other host. Chunk by chunk, this rank sends its block to
// the counterpart and receives the counterpart's straight into its place in
// the result, and writes both blocks into its host peers' results
// (process_vm_writev) as they are here: every block reaches every rank once,
// the link carries each block once each way, and the host's ranks meet twice
// per call (the addresses; the end of the writes) instead of at every step of
// a gather through the segment's slots.
//
// In place too: a rank writes only its own and its counterpart's blocks, in
// its own result and its host peers'.
void hier_allgather_streamed(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t element = size_of(s.dtype);
  const size_t count = static_cast<size_t>(s.count);
  const size_t block_bytes = count * element;
  ShmGroup& group = *h.host_group();
  const int other_host = 1 - h.host();
  const int counterpart = h.layout().ranks_on[static_cast<size_t>(other_host)][static_cast<size_t>(h.local_rank())];
  auto* out = static_cast<unsigned char*>(call.recv);
  const size_t own_at = static_cast<size_t>(h.rank()) * block_bytes;
  const size_t their_at = static_cast<size_t>(counterpart) * block_bytes;
  const bool in_place = call.send == call.recv;
  const auto* mine = in_place ? out + own_at : static_cast<const unsigned char*>(call.send);

  PeerBuffers peers[kShmMaxRanks];
  h.in_host([&](ShmGroup&) { exchange_peer_buffers(group, call.send, call.recv, peers); });

  const Chunks chunks(count, element, choose_chunk_bytes(h.options()));
  SingleCopyOutcome outcome;
  h.across_with(h.rail(), [&](Channel& rail) {
    const int other = 1 - rail.rank();
    ChunkTransfers transfers;
    auto start = [&](size_t c) {
      const size_t offset = chunks.first(c) * element;
      const size_t bytes = chunks.size(c) * element;
      transfers.receive(rail, c, other, out + their_at + offset, bytes);
      transfers.send(rail, c, other, mine + offset, bytes);
      if (!in_place) copy_chunk(out + own_at + offset, mine + offset, bytes);
      if (outcome.error == 0) write_to_peers(group, peers, out, own_at + offset, bytes, outcome);
    };
    // Chunk c of the counterpart's block, once here, to the host peers.
    auto finish = [&](size_t c) {
      transfers.wait(rail, c);
      if (outcome.error == 0) {
        write_to_peers(group, peers, out, their_at + chunks.first(c) * element, chunks.size(c) * element, outcome);
      }
    };
    stream_chunks(rail, chunks.count(), start, finish);
  });
  end_single_copies(group, outcome, "write to");
}

}  // namespace dist
