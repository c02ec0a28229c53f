#include "collectives/hierarchical/algorithms.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"
#include "collectives/shm/run_shm.h"

namespace dist {

void hier_allreduce_leaders(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t count = static_cast<size_t>(s.count);
  const size_t bytes = count * size_of(s.dtype);
  const ReduceOp op = combining_op(s.op);
  if (h.host_group() == nullptr && call.send != call.recv) copy_chunk(call.recv, call.send, bytes);
  h.in_host([&](ShmGroup& group) { shm_reduce(group, call.send, call.recv, count, s.dtype, op, 0); });
  if (Channel* leaders = h.leaders()) {
    h.across(*leaders, part_call(s, CollectiveKind::kAllReduce, count, call.recv, call.recv, op));
    if (s.op == ReduceOp::MEAN) finalize_mean(call.recv, count, s.dtype, h.size());
  }
  h.in_host([&](ShmGroup& group) {
    shm_broadcast(group, call.recv, count, s.dtype, 0);
  });
}

}  // namespace dist
