// What a PARAMETER_SERVER strategy shares with its variables: one client
// connected to every task of the cluster's "ps" job, the placer that puts each
// new variable's shards on them, the names of the live variables (a name is a
// variable's identity on the servers) and where this worker stands among the
// workers. Every worker that creates the same variables in the same order
// places them alike, without talking to the others.
//
// Thread rules: the client serialises its own calls; placement and the live
// names (variable creation and destruction) are guarded by mutex().
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "ps/client.h"
#include "variables/placement.h"

namespace dist {

// This worker among the chief and workers of its cluster (chief first).
struct WorkerPosition {
  int index = 0;
  int count = 1;
};

class ParameterServers {
 public:
  ParameterServers(ps::ClientOptions options, PlacementPolicy policy, WorkerPosition position)
      : call_timeout_(options.timeouts.call),
        client_(std::move(options)),
        placer_(client_.num_servers(), policy),
        position_(position) {}
  ParameterServers(const ParameterServers&) = delete;
  ParameterServers& operator=(const ParameterServers&) = delete;

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

}  // namespace dist
