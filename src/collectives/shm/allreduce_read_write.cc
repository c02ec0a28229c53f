#include <algorithm>

#include "collectives/algorithms/block_layout.h"
#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/peer_buffers.h"

namespace dist {

// Rank r owns slice r of the whole message. It reads that slice of every
// peer's input straight out of the peer's buffer (process_vm_readv), a step's
// worth (kShmStepBytes) at a time into a staging buffer that stays in L2, combines it with its own
// in rank order, and writes each finished chunk into its own result and every
// peer's (process_vm_writev). Two steps in all (the addresses; the end of the
// copies) against one per slot for shm_allreduce_split_write: in between no
// rank waits for another. That is what a rank needs whose core is shared
// with computation (DDP's backward on the calling thread while the
// communicator's thread reduces), where a step-by-step algorithm waits at
// every step for a peer that is not running.
//
// In place too: slice r of any rank's buffer is read and written by rank r
// alone (chunk by chunk, read before written), and no rank reads a slice of
// its own buffer that another rank writes.
void shm_allreduce_read_write(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  PeerBuffers peers[kShmMaxRanks];
  exchange_peer_buffers(group, send, recv, peers);

  const BlockLayout slices(count, n);
  const size_t first = slices.offset(group.rank());
  const size_t elements = slices.size(group.rank());
  const size_t chunk = std::max<size_t>(1, kShmStepBytes / element);  // the peers' parts stay in L2
  ScratchBuffer staging(peer_staging_bytes(group, elements, dtype));
  auto* out = static_cast<unsigned char*>(recv);
  SingleCopyOutcome outcome;
  for (size_t at = first; at < first + elements; at += chunk) {
    const size_t k = std::min(chunk, first + elements - at);
    const size_t offset = at * element;
    if (!combine_from_peers(group, peers, offset, static_cast<const unsigned char*>(send) + offset, out + offset, k,
                            dtype, op, staging.data(), outcome)) {
      break;
    }
    if (op == ReduceOp::MEAN) finalize_mean(out + offset, k, dtype, n);
    if (!write_to_peers(group, peers, recv, offset, k * element, outcome)) break;
  }
  end_single_copies(group, outcome, "read from or write to");
}

}  // namespace dist
