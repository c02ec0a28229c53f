#include <algorithm>

#include "collectives/algorithms/block_layout.h"
#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/peer_buffers.h"

namespace dist {

// Slice r of the whole message is rank r's to begin with. A rank takes a
// step's worth (kShmStepBytes) of a slice at a time: it reads that chunk of
// every peer's input straight out of the peer's buffer (process_vm_readv)
// into a staging buffer that stays in L2, combines it with its own in rank
// order, and writes the finished chunk into its own result and every peer's
// (process_vm_writev). Two steps in all (the addresses; the end of the
// copies) against one per slot for shm_allreduce_split_write: in between no
// rank waits for another. That is what a rank needs whose core is shared
// with computation (DDP's backward on the calling thread while the
// communicator's thread reduces), where a step-by-step algorithm waits at
// every step for a peer that is not running.
//
// The chunks are claimed, not assigned (ShmGroup::claim_chunk): each rank
// takes its own slice's first, then the others' that are left, so a rank
// whose peer is off its core does the peer's share instead of waiting for
// it at the end. The result is the same whoever combines a chunk: every
// chunk is combined in rank order.
//
// In place too: each chunk of any rank's buffer is read and then written by
// the one rank that claimed it, and by no other.
void shm_allreduce_read_write(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  PeerBuffers peers[kShmMaxRanks];
  exchange_peer_buffers(group, send, recv, peers);

  const BlockLayout slices(count, n);
  const size_t chunk = std::max<size_t>(1, kShmStepBytes / element);  // the peers' parts stay in L2
  ScratchBuffer staging(peer_staging_bytes(group, count, dtype));
  auto* out = static_cast<unsigned char*>(recv);
  SingleCopyOutcome outcome;
  for (int k = 0; k < n && outcome.error == 0; ++k) {
    const int owner = (group.rank() + k) % n;
    const size_t first = slices.offset(owner);
    const size_t elements = slices.size(owner);
    const size_t chunks = (elements + chunk - 1) / chunk;
    for (size_t c = group.claim_chunk(owner, chunks); c < chunks; c = group.claim_chunk(owner, chunks)) {
      const size_t at = first + c * chunk;
      const size_t m = std::min(chunk, first + elements - at);
      const size_t offset = at * element;
      if (!combine_from_peers(group, peers, offset, static_cast<const unsigned char*>(send) + offset, out + offset, m,
                              dtype, op, staging.data(), outcome)) {
        break;
      }
      if (op == ReduceOp::MEAN) finalize_mean(out + offset, m, dtype, n);
      if (!write_to_peers(group, peers, recv, offset, m * element, outcome)) break;
    }
  }
  end_single_copies(group, outcome, "read from or write to");
}

}  // namespace dist
