#include "collectives/algorithms/block_layout.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/gather_in_host.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/run_shm.h"

namespace dist {

// Every rank of the root's host gets the whole message through the segment;
// then local rank l's rail carries block l to the other hosts, whose ranks
// gather the blocks in place. The root's link carries the message once, split
// over L ranks.
void hier_broadcast_rails(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t count = static_cast<size_t>(s.count);
  const size_t element = size_of(s.dtype);
  const int root_host = h.layout().host_of[static_cast<size_t>(s.root)];
  const BlockLayout blocks(count, h.local_size());
  const int l = h.local_rank();
  auto* data = static_cast<unsigned char*>(call.recv);
  if (h.host() == root_host) {
    h.in_host([&](ShmGroup& group) {
      shm_broadcast(group, data, count, s.dtype, h.local_rank_of(s.root));
    });
  }
  unsigned char* block = data + blocks.offset(l) * element;
  h.across(h.rail(), part_call(s, CollectiveKind::kBroadcast, blocks.size(l), block, block, s.op, root_host));
  if (h.host() != root_host) h.in_host([&](ShmGroup& group) { gather_blocks_in_host(group, data, blocks, element); });
}

}  // namespace dist
