// The parameter servers of a cluster: its "ps" job, in task-index order, as the
// client addresses them ("ps:<index>" at the task's address).
#pragma once

#include <vector>

#include "cluster/cluster_spec.h"
#include "ps/client.h"

namespace dist::ps {

// Throws invalid-argument when the cluster has no "ps" job.
std::vector<ServerAddress> cluster_servers(const ClusterSpec& spec);

}  // namespace dist::ps
