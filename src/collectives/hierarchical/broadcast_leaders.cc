#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/representatives.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/run_shm.h"

namespace dist {

void hier_broadcast_leaders(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t count = static_cast<size_t>(s.count);
  const int root_host = h.layout().host_of[static_cast<size_t>(s.root)];
  const std::vector<int> speakers = representatives(h, s.root);
  const int speaker = speakers[static_cast<size_t>(h.host())];
  if (speaker == h.rank()) {
    SubChannel view(h.whole(), speakers);
    h.across(view, part_call(s, CollectiveKind::kBroadcast, count, call.recv, call.recv, s.op, root_host));
  }
  h.in_host([&](ShmGroup& group) {
    shm_broadcast(group, call.recv, count, s.dtype, h.local_rank_of(speaker));
  });
}

}  // namespace dist
