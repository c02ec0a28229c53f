// Where a task stands among the chief and workers of its cluster: chief
// first, then the workers by index (TF's order for collective ranks, the one
// the context's world follows).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cluster/resolved_cluster.h"

namespace dist {

struct WorkerPosition {
  int index = 0;
  int count = 1;
};

// The chief and worker tasks (job, index) in that order: the members of a
// collective context, rank by rank.
std::vector<std::pair<std::string, int32_t>> collective_members(const ClusterSpec& spec);

// The cluster's own task among them; alone ({0, 1}) when the cluster names
// no chief or worker task for this process.
WorkerPosition worker_position(const ResolvedCluster& cluster);

}  // namespace dist
