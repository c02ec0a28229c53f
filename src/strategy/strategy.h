// A distribution strategy: the local replicas of a model, the devices they
// stand for, and the communicator that keeps workers in sync. Everything the
// replica contexts, reduce(), the variables and the fused all-reduce need from
// "the strategy" lives here; the C ABI's dist_strategy_t holds one.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/worker_position.h"
#include "collectives/communicator.h"
#include "collectives/operation.h"
#include "strategy/cross_device_ops.h"
#include "strategy/replica_rendezvous.h"
#include "strategy/strategy_kind.h"
#include "strategy/tensor_ref.h"

namespace dist {

struct StrategyConfig {
  StrategyKind kind = StrategyKind::kOneDevice;
  // Logical CPU devices; unset: one per GPU this process can use (TF's
  // MirroredStrategy default), or one CPU device when there is none.
  std::optional<int> num_cpu_devices;
  Communication communication = Communication::kAuto;
  uint64_t bytes_per_pack = 0;  // 0: kDefaultBytesPerPack
  std::optional<std::chrono::milliseconds> timeout;
  bool bind_threads = false;  // pin replica threads, spread by hwloc
  CrossDeviceOps cross_device_ops = CrossDeviceOps::kAuto;
  bool cross_device_ops_set = false;  // given by the caller (only MIRRORED kinds take it)
  std::optional<std::string> reduce_to_device;
  std::optional<int> num_packs;  // apply_gradients' packs per dtype on GPUs (TF's num_packs)
};

// Who this worker is in its cluster (empty type and id -1 when alone), and
// where it stands among the workers. Only PARAMETER_SERVER takes the
// position from here: its workers share no communicator, so the position
// only says who this one is (its input pipeline, its gradients in
// synchronous rounds). The others count the members of their communicator.
struct WorkerIdentity {
  std::string task_type;
  int32_t task_id = -1;
  WorkerPosition position;
};

inline constexpr uint64_t kDefaultBytesPerPack = 8ull << 20;
inline constexpr int kMaxLocalReplicas = 64;

class GpuReplicas;
class Timeline;

class Strategy {
 public:
  // `world` may be null (a single worker). MULTI_WORKER_MIRRORED with a world of
  // several members splits a private communicator from it: collective.
  Strategy(Communicator* world, const StrategyConfig& config, const WorkerIdentity& identity);
  ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  StrategyKind kind() const { return config_.kind; }
  int num_local_replicas() const { return local_replicas_; }
  int num_workers() const { return num_workers_; }
  int worker_index() const { return worker_index_; }
  // PARAMETER_SERVER workers run independently: their sync group is their
  // own local replicas.
  int num_replicas_in_sync() const { return local_replicas_ * sync_workers(); }
  // The sync-group id of local replica `local_index`.
  int replica_id(int local_index) const {
    return (sync_workers() > 1 ? worker_index_ * local_replicas_ : 0) + local_index;
  }
  uint64_t bytes_per_pack() const { return config_.bytes_per_pack; }
  // Set: apply_gradients on GPU replicas packs each dtype into this many packs.
  const std::optional<int>& num_packs() const { return config_.num_packs; }
  const std::string& device(int i) const { return devices_[static_cast<size_t>(i)]; }
  const WorkerIdentity& identity() const { return identity_; }
  // ON_WRITE variables are held once (CENTRAL_STORAGE) instead of per replica.
  bool stores_variables_once() const { return config_.kind == StrategyKind::kCentralStorage; }
  // Replicas stand for GPUs (named GPU:i) rather than logical CPU devices.
  bool on_gpus() const { return on_gpus_; }
  // The GPUs the replicas drive (builds with CUDA, replicas on GPUs); null
  // otherwise. Replica i's CUDA device and stream: -1 and null without.
  GpuReplicas* gpus() const { return gpus_.get(); }
  int replica_device(int i) const;
  void* replica_stream(int i) const;
  CrossDeviceOps cross_device_ops() const { return cross_device_ops_; }
  const ReduceTarget& reduce_target() const { return reduce_target_; }
  Communication communication() const { return config_.communication; }
  // The communicator the workers sync over; null when alone.
  Communicator* sync_communicator() const { return comm_.get(); }
  // The timeline its replicas, buckets and requests are recorded on: the
  // context's, or DIST_TIMELINE's for the process without one; null when
  // none records.
  Timeline* timeline() const { return timeline_.get(); }
  // The deadline of a call made now: the strategy's timeout, else the
  // communicator's, else 60 s.
  std::chrono::steady_clock::time_point deadline() const;

  // Cross-worker steps; no-ops when this worker is alone. In place.
  void all_reduce_across_workers(const TensorRef& buffer, ReduceOp op);
  std::shared_ptr<Operation> submit_all_reduce_across_workers(const TensorRef& buffer, ReduceOp op);
  void broadcast_from_first_worker(const TensorRef& buffer);
  // Whether the workers can all-reduce a list of tensors in one call that
  // hands each finished part to a sink (collectives/piecewise.h): when they
  // share one host. The all-reduce itself is collective.
  bool all_reduces_pieces_across_workers() const;
  void all_reduce_pieces_across_workers(const PieceList& pieces, DType dtype, ReduceOp op, const ResultSink& sink,
                                        const PartFinisher* finish = nullptr);

  ReplicaRendezvous& rendezvous() { return rendezvous_; }
  // The fused all-reduce's buckets (one packed while the others are on the
  // wire), kept so that steps do not allocate.
  std::array<std::vector<unsigned char>, 3>& fusion_buffers() { return fusion_buffers_; }
  // Set while dist_strategy_run is active (runs do not nest).
  std::atomic<bool>& running() { return running_; }

  // Cross-replica calls (reduce, variable creation, apply_gradients, ...) are
  // made outside run(), or inside a merge call, where every other replica
  // waits. Throws invalid-argument naming `call` anywhere else.
  void require_cross_replica(const char* call) const;

  // The PUs replica thread i is bound to; empty when threads are not bound.
  const std::vector<unsigned>& replica_pus(int i) const;

  // Throws invalid-argument when `index` is not a local replica.
  void check_local_index(int index, const char* what) const;

 private:
  void check_same_replicas_everywhere();
  int sync_workers() const { return config_.kind == StrategyKind::kParameterServer ? 1 : num_workers_; }

  StrategyConfig config_;
  WorkerIdentity identity_;
  int local_replicas_ = 1;
  bool on_gpus_ = false;
  int num_workers_ = 1;
  int worker_index_ = 0;
  std::vector<std::string> devices_;
  std::vector<std::vector<unsigned>> replica_pus_;
  std::unique_ptr<Communicator> comm_;  // null when alone
  std::unique_ptr<GpuReplicas> gpus_;
  CrossDeviceOps cross_device_ops_ = CrossDeviceOps::kReductionToOneDevice;
  ReduceTarget reduce_target_;
  ReplicaRendezvous rendezvous_;
  std::atomic<bool> running_{false};
  std::array<std::vector<unsigned char>, 3> fusion_buffers_;
  std::shared_ptr<Timeline> timeline_;
};

}  // namespace dist
