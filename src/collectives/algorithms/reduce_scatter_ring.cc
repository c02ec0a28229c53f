#include "collectives/algorithms/reduce_scatter_ring.h"

#include "collectives/algorithms/payload.h"
#include "collectives/algorithms/ring_pipeline.h"

namespace dist {

void reduce_scatter_ring(Channel& channel, const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const AlgorithmOptions& options) {
  const Payload payload(dtype, op, options);
  const int n = channel.size();
  if (n == 1) {
    payload.copy(recv, send, count);
    return;
  }
  const RingGeometry ring = ring_in_rank_order(channel, BlockLayout(count * static_cast<size_t>(n), n));  // n blocks of exactly `count`
  // In place the result overwrites input block 0 chunk by chunk; each chunk's
  // input is fully used by then, because the pass runs chunk-major.
  RingPasses passes;
  passes.reduce_scatter = true;
  passes.input = send;
  passes.reduced_block = recv;
  run_ring(channel, ring, passes, payload);
}

}  // namespace dist
