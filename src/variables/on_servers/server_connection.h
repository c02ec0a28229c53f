// The parameter-server side of a worker (this folder): a PARAMETER_SERVER
// strategy's variables live on the tasks of the cluster's "ps" job.
//
//   ServerConnection   what the strategy's variables share: one client of
//                      every server, the placer, the live names, and where
//                      this worker stands among the workers;
//   VariableOnServers  one variable as the worker holds it (live name,
//                      synchronous rounds), over
//   VariableShards     its placement and one request per shard;
//   Placer, partition_rows   which server holds which rows.
//
// The connection: one client connected to every task of the "ps" job, the
// placer that puts each new variable's shards on them, the names of the live
// variables (a name is a variable's identity on the servers) and this
// worker's position. Every worker that creates the same variables in the same
// order places them alike, without talking to the others.
//
// Thread rules: the client serialises its own calls; placement and the live
// names (variable creation and destruction) are guarded by mutex().
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "cluster/resolved_cluster.h"
#include "cluster/worker_position.h"
#include "ps/client.h"
#include "variables/on_servers/placement.h"

namespace dist {

class Timeline;

struct ServerConnectionOptions {
  std::string token;  // the cluster token the servers check
  std::optional<std::chrono::milliseconds> call_timeout;  // unset: the client's default
  PlacementPolicy placement = PlacementPolicy::kRoundRobin;
  // This worker's rank and size in the world of the context it joined; unset
  // without a context (the position then comes from the cluster, and a worker
  // alone stays anonymous to the servers).
  std::optional<WorkerPosition> world_position;
  std::shared_ptr<Timeline> timeline;  // where requests are recorded; null: nowhere
};

class ServerConnection {
 public:
  ServerConnection(ps::ClientOptions client, PlacementPolicy policy, WorkerPosition position);
  ServerConnection(const ServerConnection&) = delete;
  ServerConnection& operator=(const ServerConnection&) = delete;

  ps::PsClient& client() { return client_; }
  Placer& placer() { return placer_; }
  std::mutex& mutex() { return mutex_; }
  // Names of the variables alive in this strategy (under mutex()).
  std::set<std::string>& live_names() { return live_names_; }
  const WorkerPosition& position() const { return position_; }
  // The bound of each call's requests.
  std::chrono::milliseconds call_timeout() const { return call_timeout_; }

 private:
  std::chrono::milliseconds call_timeout_;
  ps::PsClient client_;
  Placer placer_;
  WorkerPosition position_;
  std::mutex mutex_;
  std::set<std::string> live_names_;
};

// A connection to the "ps" job of `cluster` (no server is contacted yet).
std::shared_ptr<ServerConnection> connect_to_servers(const ResolvedCluster& cluster,
                                                     const ServerConnectionOptions& options);

}  // namespace dist
