#include "collectives/hierarchical/algorithms.h"
#include "collectives/shm/algorithms.h"

namespace dist {

// No rank leaves before every rank has arrived: each host's ranks meet, its
// leader meets the others', and the host's ranks wait for their leader.
void hier_barrier_leaders(Hierarchy& h, const CollectiveCall& call) {
  h.in_host([](ShmGroup& group) { shm_barrier(group); });
  if (Channel* leaders = h.leaders()) h.across(*leaders, call);
  h.in_host([](ShmGroup& group) { shm_barrier(group); });
}

}  // namespace dist
