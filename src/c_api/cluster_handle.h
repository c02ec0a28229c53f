// What the C ABI's dist_cluster_t holds.
#pragma once

#include <string>
#include <vector>

#include "cluster/resolved_cluster.h"

struct dist_cluster {
  dist::ResolvedCluster resolved;
  // Borrowed strings handed out by the getters point into these.
  std::vector<std::string> job_names;
};

// The handle of a resolved cluster, its job names listed once for the getters.
inline dist_cluster make_cluster_handle(dist::ResolvedCluster resolved) {
  dist_cluster cluster;
  cluster.resolved = std::move(resolved);
  for (const auto& job : cluster.resolved.spec.jobs()) cluster.job_names.push_back(job.first);
  return cluster;
}
