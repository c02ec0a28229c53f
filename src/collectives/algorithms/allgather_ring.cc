#include "collectives/algorithms/allgather_ring.h"

#include "collectives/algorithms/payload.h"
#include "collectives/algorithms/ring_pipeline.h"

namespace dist {

void allgather_ring(Channel& channel, const void* send, void* recv, size_t count, DType dtype,
                    const AlgorithmOptions& options) {
  const Payload payload(dtype, ReduceOp::SUM, options);
  const int n = channel.size();
  void* own_block = payload.at(recv, static_cast<size_t>(channel.rank()) * count);
  if (send != recv) payload.copy(own_block, send, count);
  if (n == 1) return;

  const RingGeometry ring = ring_in_rank_order(channel, BlockLayout(count * static_cast<size_t>(n), n));  // n blocks of exactly `count`
  RingPasses passes;
  passes.all_gather = true;
  passes.output = recv;
  run_ring(channel, ring, passes, payload);
}

}  // namespace dist
