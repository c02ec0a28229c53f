// Where a task stands among the chief and workers of its cluster: chief
// first, then the workers by index (TF's order for collective ranks, the one
// the context's world follows).
#pragma once

#include "cluster/resolved_cluster.h"

namespace dist {

struct WorkerPosition {
  int index = 0;
  int count = 1;
};

// The cluster's own task among them; alone ({0, 1}) when the cluster names
// no chief or worker task for this process.
WorkerPosition worker_position(const ResolvedCluster& cluster);

}  // namespace dist
