// The variables of a PARAMETER_SERVER strategy: placed on the servers when
// created, and every read and write a request per shard (all in flight
// together) to the servers that hold them. Nothing is kept locally but the
// versions a synchronous variable needs.
#include <algorithm>
#include <mutex>

#include "base/status.h"
#include "strategy/parameter_servers.h"
#include "variables/variable.h"
#include "variables/partitioner.h"
#include "variables/variable_on_servers.h"

namespace dist {

namespace {

// A variable created again finds its shards on the servers already: it must
// ask for the shape, partitioning and colocation they were placed with, not
// have different options ignored.
void check_same_layout(const VariablePlacement& placed, const ps::VariableSpec& spec,
                       const PartitionerOptions& partitioner, const VariablePlacement* colocated) {
  const std::string name = "variable '" + spec.name + "'";
  if (placed.total_rows != spec.total_rows() || placed.row_bytes != spec.row_bytes()) {
    fail_invalid(name + " was created before with another shape than " + ps::shape_text(spec.shape) +
                 " on these parameter servers");
  }
  const std::vector<uint64_t> rows = partition_rows(spec.total_rows(), spec.row_bytes(), partitioner);
  bool same = rows.size() == placed.shards.size();
  for (size_t i = 0; same && i < rows.size(); ++i) same = rows[i] == placed.shards[i].rows;
  if (!same) {
    fail_invalid(name + " was created before in " + std::to_string(placed.shards.size()) +
                 " shards; created again it asks for " + std::to_string(rows.size()) +
                 " (or other shard sizes): give it the partitioner it was created with");
  }
  for (size_t i = 0; colocated != nullptr && i < placed.shards.size(); ++i) {
    const int32_t wanted = colocated->shards[i % colocated->shards.size()].server;
    if (placed.shards[i].server != wanted) {
      fail_invalid(name + " was created before with shard " + std::to_string(i) + " on ps:" +
                   std::to_string(placed.shards[i].server) + "; created again it cannot be colocated with '" +
                   colocated->name + "' (ps:" + std::to_string(wanted) + ")");
    }
  }
}

}  // namespace

VariableOnServers::VariableOnServers(std::shared_ptr<ParameterServers> servers, const ps::VariableSpec& spec,
                                     const PartitionerOptions& partitioner, const VariableOnServers* colocate_with,
                                     const void* initial)
    : servers_(std::move(servers)) {
  ps::validate(spec);
  const VariablePlacement* placement = nullptr;
  {
    std::lock_guard<std::mutex> lock(servers_->mutex());
    if (!servers_->live_names().insert(spec.name).second) {
      fail_invalid("variable '" + spec.name + "': this ParameterServerStrategy already has a variable of that name " +
                   "(names identify variables on the servers; give each its own)");
    }
    try {
      // A destroyed variable created again (a retry, a new model object)
      // finds its old place and its values on the servers.
      placement = servers_->placer().find(spec.name);
      if (placement == nullptr) {
        placement = &servers_->placer().place(
            spec.name, spec.total_rows(), spec.row_bytes(),
            partitioner,
            colocate_with != nullptr ? colocate_with->variable_->spec().name : "");
      } else {
        check_same_layout(*placement, spec, partitioner,
                          colocate_with != nullptr ? &colocate_with->variable_->placement() : nullptr);
      }
    } catch (...) {
      servers_->live_names().erase(spec.name);
      throw;
    }
  }
  try {
    variable_ = std::make_unique<PsVariable>(servers_->client(), spec, *placement);
    variable_->create(initial);
  } catch (...) {
    std::lock_guard<std::mutex> lock(servers_->mutex());
    servers_->live_names().erase(spec.name);
    throw;
  }
  read_versions_ = variable_->versions();
  awaited_versions_.assign(read_versions_.size(), 0);
}

VariableOnServers::~VariableOnServers() {
  std::lock_guard<std::mutex> lock(servers_->mutex());
  servers_->live_names().erase(variable_->spec().name);
}

void VariableOnServers::read(void* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (synchronous()) {
    read_waiting_for_rounds(out);
  } else {
    variable_->read(out);
  }
}

void VariableOnServers::assign(const void* values) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_->assign(values);
}

void VariableOnServers::assign_add(const void* values) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_->assign_add(values);
}

void VariableOnServers::assign_sub(const void* values) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_->assign_sub(values);
}

void VariableOnServers::apply_gradient(const void* gradient) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (synchronous()) {
    push_into_rounds(gradient);
  } else {
    variable_->apply_gradient(gradient);
  }
}

void VariableOnServers::read_rows(const int64_t* rows, size_t count, void* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_->read_rows(rows, count, out);
}

void VariableOnServers::add_rows(const int64_t* rows, size_t count, const void* values) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_->add_rows(rows, count, values);
}

void VariableOnServers::apply_rows(const int64_t* rows, size_t count, const void* gradients) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_->apply_rows(rows, count, gradients);
}

// Each shard's read waits for the round this worker's last gradient joined
// there (shards move apart: sparse updates touch only some).
void VariableOnServers::read_waiting_for_rounds(void* out) {
  // The server answers a wait that runs out before the client gives up on it,
  // so the caller learns which variable and version it waited for.
  const auto timeout = servers_->call_timeout();
  const uint64_t wait_ms = static_cast<uint64_t>(std::max<int64_t>(1, timeout.count() - timeout.count() / 10));
  variable_->run(variable_->start_read(out, awaited_versions_, wait_ms));
  read_versions_ = variable_->versions();
  std::fill(awaited_versions_.begin(), awaited_versions_.end(), 0);
}

void VariableOnServers::push_into_rounds(const void* gradient) {
  PsOperation push = variable_->start_apply_gradient(gradient, read_versions_);
  const std::vector<ps::PsRequestPtr> requests = push.requests;
  variable_->run(std::move(push));
  for (size_t i = 0; i < requests.size(); ++i) {
    const bool accepted = requests[i]->arg(1) != 0;
    const bool applied = requests[i]->arg(2) != 0;
    // A gradient that joined a round still open: the next read waits for it.
    if (accepted && !applied) awaited_versions_[i] = requests[i]->version() + 1;
  }
}

void Variable::create_on_servers(const VariableSpec& spec) {
  if (synchronization_ == Synchronization::kOnRead) {
    fail_invalid("variable '" + name_ + "': ON_READ variables are not supported by ParameterServerStrategy " +
                 "(its variables live on the servers; use ON_WRITE)");
  }
  if (aggregation_ != Aggregation::kNone) {
    fail_invalid("variable '" + name_ + "': ParameterServerStrategy applies each update on the servers as it is " +
                 "made; its variables take no aggregation (set NONE)");
  }
  const std::shared_ptr<ParameterServers>& servers = strategy_->parameter_servers();
  ps::VariableSpec remote;
  remote.name = name_;
  remote.dtype = dtype_;
  remote.shape = shape_;
  remote.rows = remote.total_rows();
  remote.optimizer = spec.server_optimizer;
  if (spec.sync_gradients) {
    if (!spec.server_optimizer) {
      fail_invalid("variable '" + name_ + "': sync_gradients needs an optimizer to apply the rounds' gradients");
    }
    const int workers = servers->position().count;
    const int32_t replicas = spec.replicas_to_aggregate.value_or(workers);
    if (replicas < 1 || replicas > workers) {
      fail_invalid("variable '" + name_ + "': replicas_to_aggregate " + std::to_string(replicas) +
                   " is outside 1.." + std::to_string(workers) + " (each of the " + std::to_string(workers) +
                   " workers gives at most one gradient per round)");
    }
    remote.sync.replicas_to_aggregate = static_cast<uint32_t>(replicas);
    remote.sync.max_staleness = static_cast<uint32_t>(spec.max_staleness);
  }
  const VariableOnServers* colocate_with = nullptr;
  if (spec.colocate_with != nullptr) {
    if (&spec.colocate_with->strategy() != strategy_.get() || !spec.colocate_with->on_servers()) {
      fail_invalid("variable '" + name_ + "': colocate_with ('" + spec.colocate_with->name() +
                   "') is not a variable of the same ParameterServerStrategy");
    }
    colocate_with = spec.colocate_with->server_.get();
  }
  server_ = std::make_unique<VariableOnServers>(servers, remote, spec.partitioner, colocate_with, spec.initial_value);
}

VariableOnServers& Variable::server(ReplicaContext* replica, const char* call) const {
  if (replica != nullptr) {
    check_replica(*replica);
  } else {
    strategy_->require_cross_replica((std::string(call) + " without a replica context").c_str());
  }
  if (!server_) {
    fail_invalid(std::string(call) + " of variable '" + name_ + "': only variables of a PARAMETER_SERVER strategy " +
                 "live on the parameter servers (this one is under " + dist::name(strategy_->kind()) + ")");
  }
  return *server_;
}

const VariablePlacement& Variable::placement() const {
  if (!server_) fail_invalid("variable '" + name_ + "' is not placed on parameter servers");
  return server_->placement();
}

void Variable::read_from_servers(const TensorRef& out) { server_->read(out.data); }

void Variable::update_on_servers(UpdateKind kind, const TensorRef& value) {
  switch (kind) {
    case UpdateKind::kAssign: server_->assign(value.data); return;
    case UpdateKind::kAdd: server_->assign_add(value.data); return;
    case UpdateKind::kSub: server_->assign_sub(value.data); return;
  }
  fail_invalid(label(kind) + ": not an update");
}

void Variable::require_server_optimizer(const char* call) const {
  if (!server_->spec().optimizer) {
    fail_invalid(std::string(call) + " of variable '" + name_ +
                 "': it was created without an optimizer (options.optimizer)");
  }
}

void Variable::apply_gradient(ReplicaContext* replica, const TensorRef& gradient) {
  VariableOnServers& variable = server(replica, "apply_gradient");
  require_server_optimizer("apply_gradient");
  check_buffer(gradient, "the gradient");
  variable.apply_gradient(gradient.data);
}

void Variable::check_rows(const int64_t* rows, uint64_t count, const TensorRef& buffer, const char* what) const {
  const VariablePlacement& placement = server_->placement();
  if (count > 0 && rows == nullptr) fail_invalid("variable '" + name_ + "': rows is NULL for " + std::to_string(count) + " rows");
  for (uint64_t i = 0; i < count; ++i) {
    if (rows[i] < 0 || static_cast<uint64_t>(rows[i]) >= placement.total_rows) {
      fail_invalid("variable '" + name_ + "': rows[" + std::to_string(i) + "] = " + std::to_string(rows[i]) +
                   " is out of range for its " + std::to_string(placement.total_rows) + " rows");
    }
  }
  const uint64_t row_elements = server_->spec().row_elements();
  if (buffer.dtype != dtype_) {
    fail_invalid("variable '" + name_ + "' is " + dist::name(dtype_) + " but " + what + " is " + dist::name(buffer.dtype));
  }
  if (row_elements != 0 && count > UINT64_MAX / row_elements) {
    fail_invalid("variable '" + name_ + "': " + std::to_string(count) + " rows are too many");
  }
  if (buffer.count != count * row_elements) {
    fail_invalid("variable '" + name_ + "': " + what + " has " + std::to_string(buffer.count) + " elements, " +
                 std::to_string(count) + " rows of " + std::to_string(row_elements) + " need " +
                 std::to_string(count * row_elements));
  }
}

void Variable::read_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& out) {
  VariableOnServers& variable = server(replica, "read_rows");
  check_rows(rows, count, out, "the output buffer");
  if (count > 0) variable.read_rows(rows, count, out.data);
}

void Variable::add_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& values) {
  VariableOnServers& variable = server(replica, "add_rows");
  check_rows(rows, count, values, "the values");
  if (count > 0) variable.add_rows(rows, count, values.data);
}

void Variable::apply_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& gradients) {
  VariableOnServers& variable = server(replica, "apply_rows");
  require_server_optimizer("apply_rows");
  if (variable.synchronous()) {
    fail_invalid("apply_rows of variable '" + name_ + "': sparse gradients are applied asynchronously only " +
                 "(the variable has sync_gradients)");
  }
  check_rows(rows, count, gradients, "the gradients");
  if (count > 0) variable.apply_rows(rows, count, gradients.data);
}

}  // namespace dist
