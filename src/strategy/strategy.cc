#include "strategy/strategy.h"

#include <algorithm>

#include "base/status.h"
#include "base/timeline.h"
#include "strategy/merge_scope.h"
#ifdef DIST_HAVE_CUDA
#include "strategy/gpu_replicas.h"
#else
namespace dist {
class GpuReplicas {};  // never made: replicas drive no GPU without CUDA
}  // namespace dist
#endif
#ifdef DIST_HAVE_NCCL
#include "gpu/nccl_library.h"
#endif
#include "topology/accelerators.h"
#include "topology/thread_binding.h"

namespace dist {
namespace {

// The local replicas: the devices the options name, else every GPU this
// process can use (not for ONE_DEVICE), else one CPU device.
int checked_local_replicas(const StrategyConfig& config) {
  if (!config.num_cpu_devices) {
    const int gpus = config.kind == StrategyKind::kOneDevice ? 0 : local_gpu_count();
    return std::min(std::max(gpus, 1), kMaxLocalReplicas);
  }
  const int devices = *config.num_cpu_devices;
  if (devices < 1 || devices > kMaxLocalReplicas) {
    fail_invalid("num_cpu_devices " + std::to_string(devices) + " is out of range 1.." +
                 std::to_string(kMaxLocalReplicas));
  }
  if (config.kind == StrategyKind::kOneDevice && devices != 1) {
    fail_invalid("OneDeviceStrategy has exactly one device, not num_cpu_devices " + std::to_string(devices));
  }
  return devices;
}

// Whether those replicas are GPUs. A function of its own, not an output of
// the one above: members are initialised in their declaration order, and a
// default initialiser would overwrite what an earlier one wrote.
bool replicas_on_gpus(const StrategyConfig& config) {
  return !config.num_cpu_devices && config.kind != StrategyKind::kOneDevice && local_gpu_count() > 0;
}

bool nccl_usable() {
#ifdef DIST_HAVE_NCCL
  return nccl_enabled();
#else
  return false;
#endif
}

// What the replicas are, for the cross-device ops and communication NCCL:
// GPUs only where this build drives them.
ReplicaDevices replica_devices(int count, bool on_gpus) {
  ReplicaDevices devices;
  devices.count = count;
#ifdef DIST_HAVE_CUDA
  devices.gpus = on_gpus;
#else
  (void)on_gpus;
#endif
  devices.nccl_usable = devices.gpus && nccl_usable();
  return devices;
}

void check_device_options(const StrategyConfig& config, const ReplicaDevices& devices) {
  const bool mirrored = config.kind == StrategyKind::kMirrored || config.kind == StrategyKind::kMultiWorkerMirrored;
  if (!mirrored && (config.cross_device_ops_set || config.reduce_to_device)) {
    fail_invalid(std::string(config.cross_device_ops_set ? "cross_device_ops" : "reduce_to_device") +
                 " is for MIRRORED and MULTI_WORKER_MIRRORED, not " + name(config.kind));
  }
  if (config.reduce_to_device && config.cross_device_ops != CrossDeviceOps::kReductionToOneDevice) {
    fail_invalid("reduce_to_device is for cross_device_ops REDUCTION_TO_ONE_DEVICE, not " +
                 std::string(name(config.cross_device_ops)));
  }
  if (config.communication == Communication::kNccl) {
    if (!devices.gpus) {
      fail(Status::kUnsupported, "communication NCCL needs GPU replicas driven by CUDA (this strategy's replicas are "
                                 "CPU devices, or this build has no CUDA): use AUTO or RING");
    }
    if (!devices.nccl_usable) {
      fail(Status::kUnsupported, "communication NCCL needs NCCL, which this process cannot use (dist-info build says "
                                 "why; DIST_NCCL=0 turns it off): use AUTO or RING");
    }
  }
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
      on_gpus_(replicas_on_gpus(config)),
      rendezvous_(local_replicas_) {
  timeline_ = world != nullptr ? world->timeline() : process_timeline();
  if (config_.bytes_per_pack == 0) config_.bytes_per_pack = kDefaultBytesPerPack;
  const ReplicaDevices devices = replica_devices(local_replicas_, on_gpus_);
  check_device_options(config_, devices);
  cross_device_ops_ = resolve_cross_device_ops(config_.cross_device_ops, devices);
  reduce_target_ = parse_reduce_target(config_.reduce_to_device, devices);
  if (config_.num_packs) {
    if (cross_device_ops_ != CrossDeviceOps::kNcclAllReduce && cross_device_ops_ != CrossDeviceOps::kHierarchicalCopy) {
      fail_invalid("num_packs is for cross_device_ops NcclAllReduce and HierarchicalCopyAllReduce, and this "
                   "strategy's are " + std::string(name(cross_device_ops_)));
    }
    if (config_.kind != StrategyKind::kMirrored && config_.kind != StrategyKind::kMultiWorkerMirrored) {
      fail_invalid(std::string("num_packs is for MIRRORED and MULTI_WORKER_MIRRORED, not ") + name(config_.kind));
    }
    if (*config_.num_packs < 1 || *config_.num_packs > kMaxLocalReplicas) {
      fail_invalid("num_packs " + std::to_string(*config_.num_packs) + " is out of range 1.." +
                   std::to_string(kMaxLocalReplicas));
    }
  }
#ifdef DIST_HAVE_CUDA
  if (devices.gpus) gpus_ = std::make_unique<GpuReplicas>(local_replicas_);
#endif
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
  if (config_.kind == StrategyKind::kParameterServer) {
    num_workers_ = identity_.position.count;
    worker_index_ = identity_.position.index;
  }
  if (config_.bind_threads) replica_pus_ = spread_threads(local_replicas_);
  const std::string job = identity_.task_type.empty() ? "localhost" : identity_.task_type;
  const int32_t task = identity_.task_id < 0 ? 0 : identity_.task_id;
  for (int i = 0; i < local_replicas_; ++i) {
    devices_.push_back("/job:" + job + "/replica:0/task:" + std::to_string(task) +
                       (on_gpus_ ? "/device:GPU:" : "/device:CPU:") + std::to_string(i));
  }
}

Strategy::~Strategy() = default;

int Strategy::replica_device(int i) const {
#ifdef DIST_HAVE_CUDA
  if (gpus_) return gpus_->device(i);
#endif
  (void)i;
  return -1;
}

void* Strategy::replica_stream(int i) const {
#ifdef DIST_HAVE_CUDA
  if (gpus_) return gpus_->stream(i);
#endif
  (void)i;
  return nullptr;
}

std::chrono::steady_clock::time_point Strategy::deadline() const {
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
  if (config_.timeout) {
    timeout = *config_.timeout;
  } else if (comm_) {
    timeout = comm_->timeout();
  }
  return std::chrono::steady_clock::now() + timeout;
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

bool Strategy::all_reduces_pieces_across_workers() const { return comm_ && comm_->takes_pieces(); }

void Strategy::all_reduce_pieces_across_workers(const PieceList& pieces, DType dtype, ReduceOp op,
                                                 const ResultSink& sink, const PartFinisher* finish) {
  CollectiveCall call;
  call.signature.kind = CollectiveKind::kAllReduce;
  call.signature.dtype = dtype;
  call.signature.op = op;
  call.signature.root = -1;
  call.signature.count = pieces.count();
  call.pieces = &pieces;
  call.sink = &sink;
  call.finish = finish;
  if (!all_reduces_pieces_across_workers()) {
    fail(Status::kInternal, "all_reduce_pieces_across_workers: the workers do not share a segment");
  }
  comm_->run(call);
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
