// The variable itself: creation (with the first worker's initial value),
// argument checks, and reads and writes dispatched by context and
// synchronization to mirrored_updates.cc and on_read_values.cc.
#include "variables/variable.h"

#include <atomic>
#include <cstring>

#ifdef DIST_HAVE_CUDA
#include "variables/device_copies.h"
#else
namespace dist {
class DeviceCopies {};  // never made: without CUDA the copies are in host memory
}  // namespace dist
#endif

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
  const bool once = mirrored() && strategy_->stores_variables_once();
#ifdef DIST_HAVE_CUDA
  // On GPU replicas each replica's copy lives on its GPU (TF's
  // MirroredVariable). CENTRAL_STORAGE keeps its one copy on the host, or
  // on the GPU when there is only one (TF's placement).
  if (strategy_->gpus() != nullptr && (!once || strategy_->num_local_replicas() == 1)) {
    device_copies_ = std::make_unique<DeviceCopies>(*strategy_, initial.data(), bytes_);
    return;
  }
#endif
  copies_.assign(static_cast<size_t>(once ? 1 : strategy_->num_local_replicas()), initial);
}

Variable::~Variable() = default;

int Variable::num_copies() const {
#ifdef DIST_HAVE_CUDA
  if (device_copies_) return device_copies_->count();
#endif
  return static_cast<int>(copies_.size());
}

void Variable::check_memory(const TensorRef& buffer, const char* what) const {
  if (buffer.on_device() && !device_copies_) {
    fail_invalid("variable '" + name_ + "' is held in host memory (its strategy's replicas are not GPUs, or it is "
                 "stored once): " + what + " must be host memory");
  }
}

const void* Variable::host_copy(int i, std::vector<unsigned char>& staging) const {
#ifdef DIST_HAVE_CUDA
  if (device_copies_) {
    staging.resize(bytes_);
    device_copies_->load(i, staging.data());
    return staging.data();
  }
#endif
  (void)staging;
  return copy(i);
}

void Variable::apply_to_copy(int i, const void* value, UpdateKind kind) {
#ifdef DIST_HAVE_CUDA
  if (device_copies_) {
    if (kind == UpdateKind::kAssign) {
      device_copies_->store(i, value);
      return;
    }
    std::vector<unsigned char> updated(bytes_);
    device_copies_->load(i, updated.data());
    apply_update(updated.data(), value, count_, dtype_, kind);
    device_copies_->store(i, updated.data());
    return;
  }
#endif
  apply_update(copy(i), value, count_, dtype_, kind);
}

void Variable::read_copy(int i, const TensorRef& out) const {
  if (i < 0 || i >= num_copies()) {
    fail_invalid("copy " + std::to_string(i) + " is out of range for " + std::to_string(num_copies()) +
                 " copies of variable '" + name_ + "'");
  }
  check_buffer(out, "out");
  check_memory(out, "out");
#ifdef DIST_HAVE_CUDA
  if (device_copies_) return device_copies_->read(i, out);
#endif
  if (bytes_ > 0) std::memcpy(out.data, copy(i), bytes_);
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
  check_memory(out, "the output buffer");
  if (replica != nullptr) {
    check_replica(*replica);
    if (on_servers()) {
      read_from_servers(out);
    } else {
      read_copy(copy_of(*replica), out);
    }
    return;
  }
  strategy_->require_cross_replica("reading a variable without a replica context");
  if (on_servers()) {
    read_from_servers(out);
    return;
  }
  if (mirrored() || aggregation_ == Aggregation::kOnlyFirstReplica) {
    read_copy(0, out);
    return;
  }
  read_on_read_aggregated(out);
}

void Variable::update(ReplicaContext* replica, UpdateKind kind, const TensorRef& given) {
  check_buffer(given, "the value");
  check_memory(given, "the value");
  // A value in device memory is read once, into host memory: the updates
  // below combine and apply it with the host's arithmetic.
  std::vector<unsigned char> staging;
  TensorRef value = given;
#ifdef DIST_HAVE_CUDA
  value = TensorRef{const_cast<void*>(host_view(given, staging, strategy_->deadline())), given.count, given.dtype};
#endif
  if (replica != nullptr) {
    check_replica(*replica);
    if (on_servers()) {
      update_on_servers(kind, value);
    } else if (mirrored()) {
      update_mirrored_in_replica(*replica, kind, value.data);
    } else {
      apply_to_copy(replica->local_index(), value.data, kind);
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
