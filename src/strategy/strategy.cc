#include "strategy/strategy.h"

#include "base/status.h"
#include "strategy/merge_scope.h"
#include "topology/thread_binding.h"

namespace dist {
namespace {

int checked_local_replicas(const StrategyConfig& config) {
  if (config.num_cpu_devices < 1 || config.num_cpu_devices > kMaxLocalReplicas) {
    fail_invalid("num_cpu_devices " + std::to_string(config.num_cpu_devices) + " is out of range 1.." +
                 std::to_string(kMaxLocalReplicas));
  }
  if (config.kind == StrategyKind::kOneDevice && config.num_cpu_devices != 1) {
    fail_invalid("OneDeviceStrategy has exactly one device, not num_cpu_devices " +
                 std::to_string(config.num_cpu_devices));
  }
  if (config.communication == Communication::kNccl) {
    fail(Status::kUnsupported,
         "communication NCCL needs GPU replicas; this strategy's replicas are CPU devices (use AUTO or RING)");
  }
  return config.num_cpu_devices;
}

CollectiveCall in_place_call(CollectiveKind kind, const TensorRef& buffer, ReduceOp op, int32_t root) {
  CollectiveCall call;
  call.signature.kind = kind;
  call.signature.dtype = buffer.dtype;
  call.signature.op = op;
  call.signature.root = root;
  call.signature.count = buffer.count;
  call.send = buffer.data;
  call.recv = buffer.data;
  return call;
}

}  // namespace

Strategy::Strategy(Communicator* world, const StrategyConfig& config, const WorkerIdentity& identity)
    : config_(config),
      identity_(identity),
      local_replicas_(checked_local_replicas(config)),
      rendezvous_(local_replicas_) {
  if (config_.bytes_per_pack == 0) config_.bytes_per_pack = kDefaultBytesPerPack;
  const bool multi_worker = config_.kind == StrategyKind::kMultiWorkerMirrored && world != nullptr;
  if (multi_worker && world->size() > 1) {
    // A private communicator: the strategy's calls never interleave with the
    // caller's own calls on the world, and its options stay its own.
    comm_ = world->split(0, world->rank());
    if (config_.timeout) comm_->set_timeout(*config_.timeout);
    if (config_.communication == Communication::kRing) {
      AlgorithmOptions algorithms;
      algorithms.all_reduce = "ring";
      comm_->set_algorithms(algorithms);
    }
    num_workers_ = comm_->size();
    worker_index_ = comm_->rank();
    check_same_replicas_everywhere();
  }
  if (config_.bind_threads) replica_pus_ = spread_threads(local_replicas_);
  const std::string job = identity_.task_type.empty() ? "localhost" : identity_.task_type;
  const int32_t task = identity_.task_id < 0 ? 0 : identity_.task_id;
  for (int i = 0; i < local_replicas_; ++i) {
    devices_.push_back("/job:" + job + "/replica:0/task:" + std::to_string(task) + "/device:CPU:" + std::to_string(i));
  }
}

void Strategy::check_same_replicas_everywhere() {
  // max(n) and max(-n) give the largest and smallest count in one call.
  int64_t counts[2] = {local_replicas_, -static_cast<int64_t>(local_replicas_)};
  all_reduce_across_workers(TensorRef{counts, 2, DType::I64}, ReduceOp::MAX);
  if (counts[0] != local_replicas_ || -counts[1] != local_replicas_) {
    fail(Status::kMismatch, "workers disagree on the number of local replicas: this worker has " +
                                std::to_string(local_replicas_) + ", others between " + std::to_string(-counts[1]) +
                                " and " + std::to_string(counts[0]));
  }
}

void Strategy::all_reduce_across_workers(const TensorRef& buffer, ReduceOp op) {
  if (!comm_) return;
  comm_->run(in_place_call(CollectiveKind::kAllReduce, buffer, op, -1));
}

std::shared_ptr<Operation> Strategy::submit_all_reduce_across_workers(const TensorRef& buffer, ReduceOp op) {
  CollectiveCall call = in_place_call(CollectiveKind::kAllReduce, buffer, op, -1);
  if (!comm_) {
    auto done = std::make_shared<Operation>(call);
    done->complete(Status::kOk, "");
    return done;
  }
  return comm_->submit(call);
}

void Strategy::broadcast_from_first_worker(const TensorRef& buffer) {
  if (!comm_) return;
  comm_->run(in_place_call(CollectiveKind::kBroadcast, buffer, ReduceOp::SUM, 0));
}

void Strategy::require_cross_replica(const char* call) const {
  if (running_ && !in_merge_call(*this)) {
    fail_invalid(std::string(call) +
                 " is a cross-replica call: make it outside dist_strategy_run or inside dist_replica_merge_call");
  }
}

const std::vector<unsigned>& Strategy::replica_pus(int i) const {
  static const std::vector<unsigned> unbound;
  return replica_pus_.empty() ? unbound : replica_pus_[static_cast<size_t>(i)];
}

void Strategy::check_local_index(int index, const char* what) const {
  if (index < 0 || index >= local_replicas_) {
    fail_invalid(std::string(what) + " " + std::to_string(index) + " is out of range for " +
                 std::to_string(local_replicas_) + " local replicas");
  }
}

}  // namespace dist
