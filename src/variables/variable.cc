// The variable itself: creation (with the first worker's initial value),
// argument checks, and reads and writes dispatched by context and
// synchronization to mirrored_updates.cc and on_read_values.cc.
#include "variables/variable.h"

#include <atomic>
#include <cstring>

namespace dist {
namespace {

std::atomic<uint64_t> next_variable_id{1};

uint64_t element_count(const std::vector<int64_t>& shape, const std::string& variable) {
  if (shape.size() > kMaxVariableRank) {
    fail_invalid("variable '" + variable + "': rank " + std::to_string(shape.size()) + " exceeds " +
                 std::to_string(kMaxVariableRank));
  }
  uint64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      fail_invalid("variable '" + variable + "': shape[" + std::to_string(d) + "] = " + std::to_string(shape[d]) +
                   " is negative");
    }
    const auto dim = static_cast<uint64_t>(shape[d]);
    if (dim != 0 && count > (uint64_t{1} << 40) / dim) {
      fail_invalid("variable '" + variable + "': shape has too many elements");
    }
    count *= dim;
  }
  return count;
}

}  // namespace

Variable::Variable(std::shared_ptr<Strategy> strategy, std::shared_ptr<ServerConnection> servers,
                   const VariableSpec& spec)
    : strategy_(std::move(strategy)),
      id_(next_variable_id++),
      name_(spec.name),
      dtype_(spec.dtype),
      shape_(spec.shape),
      synchronization_(resolve_synchronization(spec.synchronization, strategy_->kind(), spec.name.c_str())),
      aggregation_(spec.aggregation) {
  count_ = element_count(shape_, name_);
  bytes_ = static_cast<size_t>(count_) * size_of(dtype_);
  if (strategy_->kind() == StrategyKind::kParameterServer) {
    create_on_servers(std::move(servers), spec);
    return;
  }
  if (spec.server_optimizer || spec.partitioner.kind != PartitionerKind::kNone ||
      spec.colocate_with != nullptr || spec.sync_gradients) {
    fail_invalid("variable '" + name_ + "': the options optimizer, num_shards/max_shard_bytes/min_shard_bytes, " +
                 "colocate_with and sync_gradients are for PARAMETER_SERVER variables, not " +
                 dist::name(strategy_->kind()) + " ones");
  }
  std::vector<unsigned char> initial(bytes_, 0);
  if (spec.initial_value != nullptr && bytes_ > 0) std::memcpy(initial.data(), spec.initial_value, bytes_);
  // Every worker starts from the first worker's value.
  strategy_->broadcast_from_first_worker(TensorRef{initial.data(), count_, dtype_});
  const int copies = mirrored() && strategy_->stores_variables_once() ? 1 : strategy_->num_local_replicas();
  copies_.assign(static_cast<size_t>(copies), initial);
}

std::string Variable::label(UpdateKind kind) const {
  return std::string(dist::name(kind)) + " of variable '" + name_ + "'";
}

void Variable::check_buffer(const TensorRef& buffer, const char* what) const {
  if (buffer.dtype != dtype_) {
    fail_invalid("variable '" + name_ + "' is " + dist::name(dtype_) + " but " + what + " is " +
                 dist::name(buffer.dtype));
  }
  if (buffer.count != count_) {
    fail_invalid("variable '" + name_ + "' has " + std::to_string(count_) + " elements but " + what + " has " +
                 std::to_string(buffer.count));
  }
}

void Variable::check_replica(const ReplicaContext& replica) const {
  if (&replica.strategy() != strategy_.get()) {
    fail_invalid("variable '" + name_ + "' belongs to another strategy than the replica context");
  }
}

int Variable::copy_of(const ReplicaContext& replica) const {
  return num_copies() == 1 ? 0 : replica.local_index();
}

void Variable::read(ReplicaContext* replica, const TensorRef& out) {
  check_buffer(out, "the output buffer");
  if (replica != nullptr) {
    check_replica(*replica);
    if (on_servers()) {
      read_from_servers(out);
    } else {
      std::memcpy(out.data, copy(copy_of(*replica)), bytes_);
    }
    return;
  }
  strategy_->require_cross_replica("reading a variable without a replica context");
  if (on_servers()) {
    read_from_servers(out);
    return;
  }
  if (mirrored() || aggregation_ == Aggregation::kOnlyFirstReplica) {
    std::memcpy(out.data, copy(0), bytes_);
    return;
  }
  read_on_read_aggregated(out);
}

void Variable::update(ReplicaContext* replica, UpdateKind kind, const TensorRef& value) {
  check_buffer(value, "the value");
  if (replica != nullptr) {
    check_replica(*replica);
    if (on_servers()) {
      update_on_servers(kind, value);
    } else if (mirrored()) {
      update_mirrored_in_replica(*replica, kind, value.data);
    } else {
      apply_update(copy(replica->local_index()), value.data, count_, dtype_, kind);
    }
    return;
  }
  strategy_->require_cross_replica((label(kind) + " without a replica context").c_str());
  if (on_servers()) {
    update_on_servers(kind, value);
  } else if (mirrored()) {
    update_mirrored_everywhere(kind, value.data);
  } else {
    update_on_read_everywhere(kind, value.data);
  }
}

}  // namespace dist
