// A PARAMETER_SERVER strategy's variable as its worker holds it: the variable
// on the servers (VariableShards: placement and per-shard requests), its name
// registered as live on the strategy's connection while it exists, and for
// synchronous training the versions this worker read and the rounds it waits
// for.
//
// Thread rules: any thread; calls on one variable take turns.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ps/variable_spec.h"
#include "variables/on_servers/partitioner.h"
#include "variables/on_servers/server_connection.h"
#include "variables/on_servers/variable_shards.h"

namespace dist {

class VariableOnServers {
 public:
  // Places the variable (next to colocate_with's shards when given) and
  // creates its shards on the servers with `initial` (spec.bytes(), or null
  // for zeros) unless they exist there. Refuses a name that is live.
  VariableOnServers(std::shared_ptr<ServerConnection> servers, const ps::VariableSpec& spec,
                    const PartitionerOptions& partitioner, const VariableOnServers* colocate_with,
                    const void* initial);
  ~VariableOnServers();
  VariableOnServers(const VariableOnServers&) = delete;
  VariableOnServers& operator=(const VariableOnServers&) = delete;

  const ps::VariableSpec& spec() const { return variable_->spec(); }
  const VariablePlacement& placement() const { return variable_->placement(); }
  bool synchronous() const { return variable_->spec().sync.replicas_to_aggregate != 0; }

  // Pulls every shard into out; a synchronous variable first waits, on each
  // shard, for the round this worker's last gradient joined.
  void read(void* out);
  // Whole-variable updates (spec().bytes()), each applied on every shard.
  void assign(const void* values);
  void assign_add(const void* values);
  void assign_sub(const void* values);
  void apply_gradient(const void* gradient);
  // Global row indices (checked by the caller); count rows of row_bytes.
  void read_rows(const int64_t* rows, size_t count, void* out);
  void add_rows(const int64_t* rows, size_t count, const void* values);
  void apply_rows(const int64_t* rows, size_t count, const void* gradients);

 private:
  void read_waiting_for_rounds(void* out);
  void push_into_rounds(const void* gradient);

  std::shared_ptr<ServerConnection> servers_;
  std::unique_ptr<VariableShards> variable_;
  // Replica threads may call one variable together: its calls take turns.
  std::mutex mutex_;
  // Synchronous only, per shard: the version this worker last read (the step
  // its gradients are computed from), and the version that applies the round
  // its last gradient joined (0: none pending).
  std::vector<uint64_t> read_versions_;
  std::vector<uint64_t> awaited_versions_;
};

}  // namespace dist
