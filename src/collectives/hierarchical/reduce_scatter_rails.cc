#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// With H hosts of L ranks: rail l delivers the blocks of the ranks with local
// rank l, one per host. The input is first packed in that order (block
// (l, j) is the one for local rank l of host j, whatever the communicator's
// rank order), so that the host's reduce-scatter hands local rank l the H
// blocks its rail then reduce-scatters, host j's rank taking block j.
void hier_reduce_scatter_rails(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t count = static_cast<size_t>(s.count);
  const size_t block_bytes = count * size_of(s.dtype);
  const size_t hosts = static_cast<size_t>(h.num_hosts());
  const int local_size = h.local_size();
  const ReduceOp op = combining_op(s.op);
  const auto* in = static_cast<const unsigned char*>(call.send);
  ScratchBuffer packed(static_cast<size_t>(h.size()) * block_bytes);
  for (int l = 0; l < local_size; ++l) {
    for (size_t j = 0; j < hosts; ++j) {
      const int owner = h.layout().ranks_on[j][static_cast<size_t>(l)];
      copy_chunk(packed.data() + (static_cast<size_t>(l) * hosts + j) * block_bytes,
                 in + static_cast<size_t>(owner) * block_bytes, block_bytes);
    }
  }
  ScratchBuffer rail_blocks(hosts * block_bytes);
  h.in_host([&](ShmGroup& group) {
    shm_reduce_scatter(group, packed.data(), rail_blocks.data(), hosts * count, s.dtype, op);
  });
  h.across(h.rail(), part_call(s, CollectiveKind::kReduceScatter, count, rail_blocks.data(), call.recv, op));
  if (s.op == ReduceOp::MEAN) finalize_mean(call.recv, count, s.dtype, h.size());
}

}  // namespace dist
