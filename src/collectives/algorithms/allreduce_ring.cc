#include "collectives/algorithms/allreduce_ring.h"

#include "collectives/algorithms/payload.h"
#include "collectives/algorithms/ring_pipeline.h"

namespace dist {

void allreduce_ring(Channel& channel, const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                    const AlgorithmOptions& options) {
  const Payload payload(dtype, op, options);
  const int n = channel.size();
  if (n == 1) {
    payload.copy(recv, send, count);
    return;
  }
  const RingGeometry ring = ring_in_rank_order(channel, BlockLayout(count, n));

  // The reduced block goes straight to its place in `recv`, from where the
  // all-gather pass forwards it. In place this overwrites the rank's own input
  // block chunk by chunk, each only after its last use (see ring_pipeline.h).
  RingPasses passes;
  passes.reduce_scatter = true;
  passes.all_gather = true;
  passes.input = send;
  passes.reduced_block = payload.at(recv, ring.blocks.offset(ring.position));
  passes.output = recv;
  run_ring(channel, ring, passes, payload);
}

}  // namespace dist
