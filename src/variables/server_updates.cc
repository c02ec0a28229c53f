// The variables of a PARAMETER_SERVER strategy: each one a VariableOnServers
// (variables/on_servers/), placed on the servers when created; every read and
// write goes to the servers that hold it. Nothing is kept locally but the
// versions a synchronous variable needs. Here: the Variable's checks of its
// context and arguments before each call.
#include "base/status.h"
#include "variables/variable.h"

namespace dist {

void Variable::create_on_servers(std::shared_ptr<ServerConnection> servers, const VariableSpec& spec) {
  if (synchronization_ == Synchronization::kOnRead) {
    fail_invalid("variable '" + name_ + "': ON_READ variables are not supported by ParameterServerStrategy " +
                 "(its variables live on the servers; use ON_WRITE)");
  }
  if (aggregation_ != Aggregation::kNone) {
    fail_invalid("variable '" + name_ + "': ParameterServerStrategy applies each update on the servers as it is " +
                 "made; its variables take no aggregation (set NONE)");
  }
  if (!servers) {
    fail(Status::kInternal, "variable '" + name_ + "': its ParameterServerStrategy has no connection to its servers");
  }
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
  server_ = std::make_unique<VariableOnServers>(std::move(servers), remote, spec.partitioner, colocate_with, spec.initial_value);
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
