// A variable on the servers as its worker holds it: placed (or found where
// it was placed before) under a live name, then every call a set of shard
// requests, with a synchronous variable's rounds tracked per shard.
#include "variables/on_servers/variable_on_servers.h"

#include <algorithm>
#include <mutex>

#include "base/status.h"

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

VariableOnServers::VariableOnServers(std::shared_ptr<ServerConnection> servers, const ps::VariableSpec& spec,
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
    variable_ = std::make_unique<VariableShards>(servers_->client(), spec, *placement);
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
  ShardRequests push = variable_->start_apply_gradient(gradient, read_versions_);
  const std::vector<ps::PsRequestPtr> requests = push.requests;
  variable_->run(std::move(push));
  for (size_t i = 0; i < requests.size(); ++i) {
    const bool accepted = requests[i]->arg(1) != 0;
    const bool applied = requests[i]->arg(2) != 0;
    // A gradient that joined a round still open: the next read waits for it.
    if (accepted && !applied) awaited_versions_[i] = requests[i]->version() + 1;
  }
}

}  // namespace dist
