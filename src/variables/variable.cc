#include "variables/variable.h"

#include <atomic>
#include <cstring>

#include "collectives/reduce_kernels.h"

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

ReduceOp reduce_op_of(Aggregation aggregation) {
  return aggregation == Aggregation::kMean ? ReduceOp::MEAN : ReduceOp::SUM;
}

}  // namespace

Variable::Variable(std::shared_ptr<Strategy> strategy, const VariableSpec& spec)
    : strategy_(std::move(strategy)),
      id_(next_variable_id++),
      name_(spec.name),
      dtype_(spec.dtype),
      shape_(spec.shape),
      synchronization_(resolve_synchronization(spec.synchronization, strategy_->kind(), spec.name.c_str())),
      aggregation_(spec.aggregation) {
  count_ = element_count(shape_, name_);
  bytes_ = static_cast<size_t>(count_) * size_of(dtype_);
  std::vector<unsigned char> initial(bytes_, 0);
  if (spec.initial_value != nullptr && bytes_ > 0) std::memcpy(initial.data(), spec.initial_value, bytes_);
  // Every worker starts from the first worker's value.
  strategy_->broadcast_from_first_worker(TensorRef{initial.data(), count_, dtype_});
  const int copies = mirrored() && strategy_->stores_variables_once() ? 1 : strategy_->num_local_replicas();
  copies_.assign(static_cast<size_t>(copies), initial);
}

std::string Variable::label(UpdateKind kind) const { return std::string(dist::name(kind)) + " of variable '" + name_ + "'"; }

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
    std::memcpy(out.data, copy(copy_of(*replica)), bytes_);
    return;
  }
  strategy_->require_cross_replica("reading a variable without a replica context");
  if (mirrored() || aggregation_ == Aggregation::kOnlyFirstReplica) {
    std::memcpy(out.data, copy(0), bytes_);
    return;
  }
  read_on_read_aggregated(out);
}

void Variable::read_on_read_aggregated(const TensorRef& out) {
  if (aggregation_ == Aggregation::kNone) {
    fail_invalid("variable '" + name_ +
                 "' is ON_READ with aggregation NONE: it cannot be read in cross-replica context (give it SUM, "
                 "MEAN or ONLY_FIRST_REPLICA)");
  }
  std::vector<const void*> inputs;
  for (int i = 0; i < num_copies(); ++i) inputs.push_back(copy(i));
  reduce_across_replicas(*strategy_, reduce_op_of(aggregation_), inputs, out);
}

void Variable::update(ReplicaContext* replica, UpdateKind kind, const TensorRef& value) {
  check_buffer(value, "the value");
  if (replica != nullptr) {
    check_replica(*replica);
    if (mirrored()) {
      update_mirrored_in_replica(*replica, kind, value.data);
    } else {
      apply_update(copy(replica->local_index()), value.data, count_, dtype_, kind);
    }
    return;
  }
  strategy_->require_cross_replica((label(kind) + " without a replica context").c_str());
  if (mirrored()) {
    update_mirrored_everywhere(kind, value.data);
  } else {
    update_on_read_everywhere(kind, value.data);
  }
}

void Variable::update_mirrored_in_replica(ReplicaContext& replica, UpdateKind kind, const void* value) {
  if (aggregation_ == Aggregation::kNone && strategy_->num_replicas_in_sync() > 1) {
    fail_invalid(label(kind) + " in replica context: a mirrored variable with aggregation NONE cannot be updated "
                 "with " + std::to_string(strategy_->num_replicas_in_sync()) +
                 " replicas in sync; give the variable an aggregation (SUM, MEAN or ONLY_FIRST_REPLICA)");
  }
  replica.exchange(Contribution{label(kind), id_, const_cast<void*>(value)}, [&](const std::vector<void*>& values) {
    std::vector<unsigned char> aggregated(bytes_);
    const TensorRef result{aggregated.data(), count_, dtype_};
    if (aggregation_ == Aggregation::kNone || aggregation_ == Aggregation::kOnlyFirstReplica) {
      // One replica in sync (NONE), or replica 0's value, which lives on the first worker.
      if (bytes_ > 0) std::memcpy(aggregated.data(), values[0], bytes_);
      if (aggregation_ == Aggregation::kOnlyFirstReplica) strategy_->broadcast_from_first_worker(result);
    } else {
      std::vector<const void*> inputs(values.begin(), values.end());
      reduce_across_replicas(*strategy_, reduce_op_of(aggregation_), inputs, result);
    }
    update_mirrored_everywhere(kind, aggregated.data());
  });
}

void Variable::update_mirrored_everywhere(UpdateKind kind, const void* value) {
  apply_update(copy(0), value, count_, dtype_, kind);
  mirror_range(0, count_);
}

void Variable::mirror_range(uint64_t offset, uint64_t count) {
  const size_t element = size_of(dtype_);
  for (int i = 1; i < num_copies(); ++i) {
    std::memcpy(static_cast<unsigned char*>(copy(i)) + offset * element,
                static_cast<const unsigned char*>(copy(0)) + offset * element, static_cast<size_t>(count) * element);
  }
}

void Variable::update_on_read_everywhere(UpdateKind kind, const void* value) {
  if (aggregation_ != Aggregation::kSum) {
    for (int i = 0; i < num_copies(); ++i) apply_update(copy(i), value, count_, dtype_, kind);
    return;
  }
  if (kind != UpdateKind::kAssign) {
    fail_invalid(label(kind) + " in cross-replica context: an ON_READ variable with aggregation SUM supports only "
                 "assign there (as tf.distribute's SyncOnReadVariable)");
  }
  // The copies must sum back to `value` when read.
  std::vector<unsigned char> share(bytes_);
  if (bytes_ > 0) std::memcpy(share.data(), value, bytes_);
  finalize_mean(share.data(), count_, dtype_, strategy_->num_replicas_in_sync());
  for (int i = 0; i < num_copies(); ++i) apply_update(copy(i), share.data(), count_, dtype_, kind);
}

}  // namespace dist
