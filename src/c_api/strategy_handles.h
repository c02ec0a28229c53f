// What the C ABI's strategy, replica context, variable, optimizer and input
// context handles hold.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <distribute/c_api.h>
#include "c_api/buffers.h"
#include "strategy/input_context.h"
#include "strategy/replica_context.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"
#include "variables/on_servers/server_connection.h"
#include "variables/variable.h"
#include "variables/worker_optimizer.h"

struct dist_strategy {
  std::shared_ptr<dist::Strategy> strategy;
  // PARAMETER_SERVER: where its variables live; null under the other kinds.
  std::shared_ptr<dist::ServerConnection> servers;
  const dist_cluster_t* cluster = nullptr;  // the context's (PARAMETER_SERVER: or options.cluster); may be null
  // What the replicas of the last run set with dist_replica_set_result.
  std::vector<std::vector<unsigned char>> result_storage;
  std::vector<dist_buffer_t> results;
};

struct dist_replica_context {
  dist::ReplicaContext* replica = nullptr;
  dist_strategy_t* strategy = nullptr;
};

struct dist_variable {
  std::unique_ptr<dist::Variable> variable;
};

struct dist_optimizer {
  std::unique_ptr<dist::WorkerOptimizer> optimizer;
};

struct dist_input_context {
  dist::InputContext input;
};

namespace dist {

// A checked dist_buffer_t in host memory as the core's view of it: the
// strategy and variable calls that take no CUDA memory refuse it here.
inline TensorRef tensor_of(const dist_buffer_t* buffer, const char* name) {
  Checked checked = check_buffer(buffer, name);
  if (checked.memory == MemoryKind::kCuda) {
    fail(Status::kUnsupported, std::string(name) + " is CUDA memory, and this call takes host memory only "
                                                   "(DIST_MEMORY_HOST)");
  }
  return TensorRef{checked.data, checked.count, checked.dtype};
}

// The same for the calls that also take CUDA memory (GPU replicas' values):
// its stream and device come along.
inline TensorRef host_or_device_tensor_of(const dist_buffer_t* buffer, const char* name) {
  Checked checked = check_buffer(buffer, name);
  TensorRef out{checked.data, checked.count, checked.dtype};
  out.memory = checked.memory;
  out.stream = checked.stream;
  out.device = checked.device;
  return out;
}

}  // namespace dist
