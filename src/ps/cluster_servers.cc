#include "ps/cluster_servers.h"

namespace dist::ps {

std::vector<ServerAddress> cluster_servers(const ClusterSpec& spec) {
  if (!spec.has_job("ps")) {
    fail_invalid("the cluster has no 'ps' job (its jobs: " + (spec.empty() ? std::string("none") : spec.job_names()) + ")");
  }
  std::vector<ServerAddress> servers;
  for (const auto& [index, address] : spec.job("ps")) servers.push_back({"ps:" + std::to_string(index), address});
  return servers;
}

}  // namespace dist::ps
