#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/representatives.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Each host's ranks reduce to its representative (the root on the root's
// host), into the root's result or a scratch buffer; the representatives
// reduce to the root.
void hier_reduce_leaders(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t count = static_cast<size_t>(s.count);
  const size_t bytes = count * size_of(s.dtype);
  const ReduceOp op = combining_op(s.op);
  const int root_host = h.layout().host_of[static_cast<size_t>(s.root)];
  const std::vector<int> speakers = representatives(h, s.root);
  const int speaker = speakers[static_cast<size_t>(h.host())];
  const bool speaks = speaker == h.rank();
  ScratchBuffer scratch(speaks && h.rank() != s.root ? bytes : 0);
  void* partial = h.rank() == s.root ? call.recv : scratch.data();
  if (speaks && h.host_group() == nullptr && partial != call.send) copy_chunk(partial, call.send, bytes);
  h.in_host([&](ShmGroup& group) {
    shm_reduce(group, call.send, speaks ? partial : nullptr, count, s.dtype, op, h.local_rank_of(speaker));
  });
  if (speaks) {
    SubChannel view(h.whole(), speakers);
    h.across(view, part_call(s, CollectiveKind::kReduce, count, partial, partial, op, root_host));
  }
  if (h.rank() == s.root && s.op == ReduceOp::MEAN) finalize_mean(call.recv, count, s.dtype, h.size());
}

}  // namespace dist
