// A distributed variable: MirroredVariable (ON_WRITE: one copy per local
// replica that always holds the same value, or one copy on the host under
// CENTRAL_STORAGE) or SyncOnReadVariable (ON_READ: per-replica values that are
// aggregated when read in cross-replica context). variable_policy.h says which
// combinations exist; c_api.h documents the semantics of every operation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optimizers/optimizer_config.h"
#include "strategy/replica_context.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"
#include "variables/on_servers/variable_on_servers.h"
#include "variables/update_kind.h"
#include "variables/variable_policy.h"

namespace dist {

class Variable;
class DeviceCopies;

struct VariableSpec {
  std::string name = "Variable";
  DType dtype = DType::F32;
  std::vector<int64_t> shape;            // empty: a scalar
  const void* initial_value = nullptr;   // null: zeros
  Synchronization synchronization = Synchronization::kAuto;
  Aggregation aggregation = Aggregation::kNone;
  // PARAMETER_SERVER only: the servers' optimizer for apply_gradient, how
  // the variable is split into shards across the servers (next to another
  // variable's shards when colocate_with is set), and synchronous rounds.
  std::optional<OptimizerConfig> server_optimizer;  // none: no apply_gradient
  PartitionerOptions partitioner;
  const Variable* colocate_with = nullptr;
  bool sync_gradients = false;
  std::optional<int32_t> replicas_to_aggregate;  // unset: one per worker
  int32_t max_staleness = 0;
};

inline constexpr size_t kMaxVariableRank = 8;

class Variable {
 public:
  // Collective in a multi-worker strategy: the first worker's initial value
  // is broadcast to every worker. `servers`: a PARAMETER_SERVER strategy's
  // connection to its servers, where the variable is created; null under
  // every other strategy.
  Variable(std::shared_ptr<Strategy> strategy, std::shared_ptr<ServerConnection> servers, const VariableSpec& spec);
  ~Variable();
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

  uint64_t id() const { return id_; }
  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  uint64_t count() const { return count_; }
  Synchronization synchronization() const { return synchronization_; }
  Aggregation aggregation() const { return aggregation_; }
  Strategy& strategy() const { return *strategy_; }

  int num_copies() const;
  // Copy i in host memory; only where the copies are not on GPUs.
  void* copy(int i) { return copies_[static_cast<size_t>(i)].data(); }
  const void* copy(int i) const { return copies_[static_cast<size_t>(i)].data(); }
  // The copies on GPU replicas (one per replica, on its device), or null
  // when they are in host memory (CPU replicas, CENTRAL_STORAGE, servers).
  DeviceCopies* device_copies() const { return device_copies_.get(); }
  // Copy i into `out` (checked like read's).
  void read_copy(int i, const TensorRef& out) const;

  // replica null: cross-replica context. `out`/`value` are checked to have the
  // variable's dtype and count.
  void read(ReplicaContext* replica, const TensorRef& out);
  void update(ReplicaContext* replica, UpdateKind kind, const TensorRef& value);

  // PARAMETER_SERVER variables live on the servers (no local copies); the
  // calls below are theirs alone (server_updates.cc).
  bool on_servers() const { return server_ != nullptr; }
  const VariablePlacement& placement() const;
  // replica null: cross-replica context, as for read and update.
  void apply_gradient(ReplicaContext* replica, const TensorRef& gradient);
  // Global row indices (first dimension); values/out hold count rows.
  void read_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& out);
  void add_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& values);
  void apply_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& gradients);

  // After copy 0's elements [offset, offset + count) changed in place (an
  // optimizer step), makes every other copy equal to it there.
  void mirror_range(uint64_t offset, uint64_t count);
  // Writes `values` (count elements) into every copy at offset without
  // reading what is there: new values computed elsewhere (another worker's
  // update), written with streaming stores.
  void overwrite_range(uint64_t offset, const void* values, uint64_t count);

  // Throws unless `buffer` has the variable's dtype and count.
  void check_buffer(const TensorRef& buffer, const char* what) const;

 private:
  void check_replica(const ReplicaContext& replica) const;
  // Throws unless `buffer` lies in memory the copies can take: CUDA memory
  // only where they are on GPUs.
  void check_memory(const TensorRef& buffer, const char* what) const;
  // Copy i after `kind` with `value` (host memory), on the host or through it.
  void apply_to_copy(int i, const void* value, UpdateKind kind);
  // Copy i's value in host memory: the copy itself, or a copy in `staging`.
  const void* host_copy(int i, std::vector<unsigned char>& staging) const;
  int copy_of(const ReplicaContext& replica) const;
  bool mirrored() const { return synchronization_ != Synchronization::kOnRead; }
  std::string label(UpdateKind kind) const;

  void update_mirrored_in_replica(ReplicaContext& replica, UpdateKind kind, const void* value);
  void update_mirrored_everywhere(UpdateKind kind, const void* value);
  void read_on_read_aggregated(const TensorRef& out);
  void update_on_read_everywhere(UpdateKind kind, const void* value);
  void create_on_servers(std::shared_ptr<ServerConnection> servers, const VariableSpec& spec);
  // The variable on the servers, after checking the context of `call`.
  VariableOnServers& server(ReplicaContext* replica, const char* call) const;
  void require_server_optimizer(const char* call) const;
  void check_rows(const int64_t* rows, uint64_t count, const TensorRef& buffer, const char* what) const;
  void read_from_servers(const TensorRef& out);
  void update_on_servers(UpdateKind kind, const TensorRef& value);

  std::shared_ptr<Strategy> strategy_;
  uint64_t id_;
  std::string name_;
  DType dtype_;
  std::vector<int64_t> shape_;
  uint64_t count_ = 1;
  size_t bytes_ = 0;
  Synchronization synchronization_;
  Aggregation aggregation_;
  std::vector<std::vector<unsigned char>> copies_;  // host memory
  std::unique_ptr<DeviceCopies> device_copies_;     // or on the GPU replicas
  std::unique_ptr<VariableOnServers> server_;  // PARAMETER_SERVER; destroyed before strategy_
};

}  // namespace dist
