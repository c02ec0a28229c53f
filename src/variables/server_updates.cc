// The variables of a PARAMETER_SERVER strategy: placed on the servers when
// created, and every read and write a request per shard (all in flight
// together) to the servers that hold them. Nothing is kept locally.
#include <mutex>

#include "base/status.h"
#include "strategy/parameter_servers.h"
#include "variables/variable.h"

namespace dist {

void Variable::create_on_servers(const VariableSpec& spec) {
  if (synchronization_ == Synchronization::kOnRead) {
    fail_invalid("variable '" + name_ + "': ON_READ variables are not supported by ParameterServerStrategy " +
                 "(its variables live on the servers; use ON_WRITE)");
  }
  ParameterServers& servers = *strategy_->parameter_servers();
  ps::VariableSpec remote;
  remote.name = name_;
  remote.dtype = dtype_;
  remote.shape = shape_;
  remote.rows = remote.total_rows();
  remote.optimizer = spec.server_optimizer;
  ps::validate(remote);
  const VariablePlacement* placement = nullptr;
  {
    std::lock_guard<std::mutex> lock(servers.placement_mutex());
    // A name names one variable on the servers (its shard ids derive from
    // it): creating it again, e.g. after a failed attempt, reuses its place.
    placement = servers.placer().find(name_);
    if (placement == nullptr) {
      placement = &servers.placer().place(name_, remote.total_rows(), remote.row_bytes(), spec.partitioner);
    } else if (placement->total_rows != remote.total_rows() || placement->row_bytes != remote.row_bytes()) {
      fail_invalid("variable '" + name_ + "' was already created with shape " + ps::shape_text(shape_) +
                   " of another size on these parameter servers");
    }
  }
  auto variable = std::make_unique<PsVariable>(servers.client(), remote, *placement);
  variable->create(spec.initial_value);
  server_ = std::move(variable);
}

PsVariable& Variable::server(ReplicaContext* replica, const char* call) const {
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

void Variable::apply_gradient(ReplicaContext* replica, const TensorRef& gradient) {
  PsVariable& variable = server(replica, "apply_gradient");
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
  if (buffer.count != count * row_elements) {
    fail_invalid("variable '" + name_ + "': " + what + " has " + std::to_string(buffer.count) + " elements, " +
                 std::to_string(count) + " rows of " + std::to_string(row_elements) + " need " +
                 std::to_string(count * row_elements));
  }
}

void Variable::read_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& out) {
  PsVariable& variable = server(replica, "read_rows");
  check_rows(rows, count, out, "the output buffer");
  if (count > 0) variable.read_rows(rows, count, out.data);
}

void Variable::add_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& values) {
  PsVariable& variable = server(replica, "add_rows");
  check_rows(rows, count, values, "the values");
  if (count > 0) variable.add_rows(rows, count, values.data);
}

void Variable::apply_rows(ReplicaContext* replica, const int64_t* rows, uint64_t count, const TensorRef& gradients) {
  PsVariable& variable = server(replica, "apply_rows");
  check_rows(rows, count, gradients, "the gradients");
  if (count > 0) variable.apply_rows(rows, count, gradients.data);
}

}  // namespace dist
