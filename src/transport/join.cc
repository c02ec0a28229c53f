#include "transport/join.h"

#include "transport/rendezvous.h"

namespace dist {

JoinedContext join_cluster(const ResolvedCluster& cluster, const ContextOptions& options) {
  JoinedContext joined;
  joined.cluster = cluster;
  if (!cluster.rendezvous) {
    joined.context = std::make_unique<Context>(cluster, options);
    return joined;
  }
  const RendezvousPoint& point = *cluster.rendezvous;
  const SteadyTime deadline = std::chrono::steady_clock::now() + options.connect_timeout;
  joined.cluster.rendezvous.reset();
  if (point.size == 1) {
    // Alone: nothing to gather, nothing to connect.
    joined.cluster.spec = layout_jobs(point.jobs, {point.address});
    joined.context = std::make_unique<Context>(joined.cluster, options);
    return joined;
  }
  const std::string token = require_cluster_token(options.token, options.env, "context");
  RendezvousOutcome outcome = run_rendezvous(point, token, deadline);
  joined.cluster.spec = layout_jobs(point.jobs, outcome.addresses);
  joined.cluster.spec.validate(point.source + ": the addresses gathered at " + point.address);
  joined.context = std::make_unique<Context>(joined.cluster, options, std::move(outcome.listener), deadline);
  return joined;
}

}  // namespace dist
