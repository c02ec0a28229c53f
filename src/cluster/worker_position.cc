#include "cluster/worker_position.h"

namespace dist {

WorkerPosition worker_position(const ResolvedCluster& cluster) {
  int count = 0;
  int index = -1;
  for (const char* job : {"chief", "worker"}) {
    if (!cluster.spec.has_job(job)) continue;
    for (const auto& task : cluster.spec.job(job)) {
      if (cluster.task_type && cluster.task_id && *cluster.task_type == job && *cluster.task_id == task.first) {
        index = count;
      }
      ++count;
    }
  }
  if (index < 0) return WorkerPosition{};
  return WorkerPosition{index, count};
}

}  // namespace dist
