// strategy.run(fn): one call of fn per local replica, each on its own thread,
// with failures collected so that one failing replica never leaves the others
// waiting for it.
#pragma once

#include <functional>

#include "strategy/replica_context.h"

namespace dist {

// Calls body(context) for every local replica and returns when all are done.
// A replica fails by throwing dist::Error; run then throws the first failure
// as "replica <id>: <message>" with its status, after aborting the local
// rendezvous so that replicas waiting in a collective step are released.
// Throws invalid-argument when called while a run of the strategy is active.
void run_replicas(Strategy& strategy, const std::function<void(ReplicaContext&)>& body);

}  // namespace dist
