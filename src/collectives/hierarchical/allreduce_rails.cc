#include "collectives/algorithms/block_layout.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/gather_in_host.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"

namespace dist {

// Local rank l owns block l of the message (BlockLayout over the host's
// ranks). Per rank, the memory traffic is the shared-memory split
// all-reduce's: its input copied into the slot ((L-1)/L), block l combined
// straight into its final place in the result, the other blocks copied from
// the peers' slots; between hosts each rank all-reduces 1/L of the message,
// all L rails at once.
void hier_allreduce_rails(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t element = size_of(s.dtype);
  const BlockLayout blocks(static_cast<size_t>(s.count), h.local_size());
  const int l = h.local_rank();
  auto* out = static_cast<unsigned char*>(call.recv);
  unsigned char* shard = out + blocks.offset(l) * element;
  const ReduceOp op = combining_op(s.op);
  h.in_host([&](ShmGroup& group) { shm_reduce_scatter(group, call.send, shard, blocks, s.dtype, op); });
  h.across(h.rail(), part_call(s, CollectiveKind::kAllReduce, blocks.size(l), shard, shard, op));
  if (s.op == ReduceOp::MEAN) finalize_mean(shard, blocks.size(l), s.dtype, h.size());
  h.in_host([&](ShmGroup& group) { gather_blocks_in_host(group, out, blocks, element); });
}

}  // namespace dist
