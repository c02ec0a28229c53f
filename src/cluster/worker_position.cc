#include "cluster/worker_position.h"

namespace dist {

std::vector<std::pair<std::string, int32_t>> collective_members(const ClusterSpec& spec) {
  std::vector<std::pair<std::string, int32_t>> tasks;
  for (const char* job : {"chief", "worker"}) {
    if (!spec.has_job(job)) continue;
    for (const auto& task : spec.job(job)) tasks.emplace_back(job, task.first);
  }
  return tasks;
}

WorkerPosition worker_position(const ResolvedCluster& cluster) {
  if (!cluster.task_type || !cluster.task_id) return WorkerPosition{};
  const auto members = collective_members(cluster.spec);
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].first == *cluster.task_type && members[i].second == *cluster.task_id) {
      return WorkerPosition{static_cast<int>(i), static_cast<int>(members.size())};
    }
  }
  return WorkerPosition{};
}

}  // namespace dist
