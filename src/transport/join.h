// Joining a cluster: the context, and the cluster as the context knows it. A
// cluster whose addresses come from a rendezvous (ResolvedCluster::rendezvous)
// is completed first (transport/rendezvous.h); one whose addresses come from
// the caller's exchange is built by transport/oob_bootstrap.h.
#pragma once

#include <memory>

#include "cluster/resolved_cluster.h"
#include "transport/context.h"

namespace dist {

struct JoinedContext {
  ResolvedCluster cluster;  // with every member's address
  std::unique_ptr<Context> context;
};

// Blocks until every member has connected or the connect deadline, which
// bounds the rendezvous and the bootstrap together.
JoinedContext join_cluster(const ResolvedCluster& cluster, const ContextOptions& options);

}  // namespace dist
