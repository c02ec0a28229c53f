// What a PARAMETER_SERVER strategy shares with its variables: one client
// connected to every task of the cluster's "ps" job, and the placer that puts
// each new variable's shards on them. Every worker that creates the same
// variables in the same order places them alike, without talking to the others.
//
// Thread rules: the client serialises its own calls; placement (variable
// creation) is guarded by placement_mutex().
#pragma once

#include <memory>
#include <mutex>

#include "ps/client.h"
#include "variables/placement.h"

namespace dist {

class ParameterServers {
 public:
  ParameterServers(ps::ClientOptions options, PlacementPolicy policy)
      : client_(std::move(options)), placer_(client_.num_servers(), policy) {}
  ParameterServers(const ParameterServers&) = delete;
  ParameterServers& operator=(const ParameterServers&) = delete;

  ps::PsClient& client() { return client_; }
  Placer& placer() { return placer_; }
  std::mutex& placement_mutex() { return placement_mutex_; }

 private:
  ps::PsClient client_;
  Placer placer_;
  std::mutex placement_mutex_;
};

}  // namespace dist
