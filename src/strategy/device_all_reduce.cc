#include "strategy/device_all_reduce.h"

#include <memory>
#include <string>
#include <vector>

#include "collectives/collective_call.h"
#include "collectives/communicator.h"
#include "collectives/device_calls.h"
#include "collectives/reduce_kernels.h"
#include "gpu/cuda_memory.h"
#include "collectives/device_reduce_kernels.h"
#include "strategy/gpu_replicas.h"
#ifdef DIST_HAVE_NCCL
#include <cstring>

#include "collectives/nccl_setup.h"
#include "gpu/cuda_device.h"
#include "gpu/nccl_communicator.h"
#endif

namespace dist {
namespace {

using Deadline = std::chrono::steady_clock::time_point;

// A buffer on one device with the stream its work is ordered on.
struct Place {
  void* data = nullptr;
  int device = -1;
  void* stream = nullptr;
};

Place place_of(const TensorRef& buffer) { return Place{buffer.data, buffer.device, buffer.stream}; }

// Holds the work enqueued on `to`'s stream from now on until `from`'s work
// so far is done. Each stream is named with its own device current, as a
// legacy default stream (null) is the current device's. (An event may be
// destroyed while a stream still waits for it.)
void order_after(const Place& from, const Place& to) {
  DeviceScope on_from(from.device);
  StreamMark mark(from.stream);
  DeviceScope on_to(to.device);
  mark.hold(to.stream);
}

// Waits for the work enqueued so far on every place, by the deadline.
void wait_for_all(const std::vector<Place>& places, Deadline deadline, const std::string& what) {
  std::vector<std::unique_ptr<StreamMark>> marks;
  for (const Place& p : places) {
    DeviceScope on(p.device);
    marks.push_back(std::make_unique<StreamMark>(p.stream));
  }
  for (const auto& mark : marks) mark->wait(deadline, what);
}

// The device all-reduce of one call: the local values combined into a
// "home" buffer on one device, the workers' step and MEAN's division there,
// then the home copied to every replica.
class DeviceAllReduce {
 public:
  DeviceAllReduce(Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& buffers)
      : strategy_(strategy),
        op_(op),
        combine_(op == ReduceOp::MEAN ? ReduceOp::SUM : op),
        buffers_(buffers),
        bytes_(buffers[0].bytes()),
        deadline_(strategy.deadline()),
        what_(std::string("all_reduce(") + name(buffers[0].dtype) + ", " + name(op) + ", count=" +
              std::to_string(buffers[0].count) + ") of the GPU replicas") {
    for (const TensorRef& b : buffers_) replicas_.push_back(place_of(b));
  }

  // Scratch memory goes back in its stream's order only after every
  // replica's stream is done with it, whether the call worked or not.
  ~DeviceAllReduce() {
    for (auto& scratch : scratch_) {
      for (const Place& replica : replicas_) {
        try {
          order_after(replica, Place{nullptr, scratch.device, scratch.stream});
        } catch (...) {
          // The stream failed: CUDA frees the memory with the context.
        }
      }
      scratch.memory.reset();
    }
  }
  DeviceAllReduce(const DeviceAllReduce&) = delete;
  DeviceAllReduce& operator=(const DeviceAllReduce&) = delete;

  void run() {
#ifdef DIST_HAVE_NCCL
    if (nccl_ranks_wanted()) {
      run_on_nccl();
      return;
    }
#endif
    if (replicas_.size() == 1) {
      finish(replicas_[0], /*copy_back=*/false);
      return;
    }
    switch (strategy_.cross_device_ops()) {
      case CrossDeviceOps::kHierarchicalCopy:
        run_hierarchical();
        return;
      case CrossDeviceOps::kReductionToOneDevice:
        if (strategy_.reduce_target().host) {
          run_through_host();
        } else {
          const int k = strategy_.reduce_target().replica;
          const Place home = scratch_on(replicas_[static_cast<size_t>(k)]);
          accumulate(home, 0, replicas_.size());
          finish(home, /*copy_back=*/true);
        }
        return;
      default:
        fail(Status::kInternal, "no device all-reduce for the cross-device ops " +
                                    std::string(name(strategy_.cross_device_ops())));
    }
  }

 private:
  struct Scratch {
    std::unique_ptr<StreamScratch> memory;
    void* stream = nullptr;
    int device = -1;
  };

  // Bytes of scratch on `where`'s device, in its stream's order.
  Place scratch_on(const Place& where) {
    DeviceScope on(where.device);
    Scratch scratch;
    scratch.memory = std::make_unique<StreamScratch>(bytes_, where.stream);
    scratch.stream = where.stream;
    scratch.device = where.device;
    scratch_.push_back(std::move(scratch));
    return Place{scratch_.back().memory->data(), where.device, where.stream};
  }

  // home = replica first op replica first+1 op ... (replica order, as the
  // host's reduce_many: f16/bf16 rounded once), on home's device and
  // stream. Values on other devices are copied there first.
  void accumulate(const Place& home, size_t first, size_t end) {
    std::vector<const void*> inputs;
    for (size_t r = first; r < end; ++r) {
      const Place& from = replicas_[r];
      order_after(from, home);
      if (from.device == home.device) {
        inputs.push_back(from.data);
        continue;
      }
      const Place staging = scratch_on(home);
      DeviceScope on(home.device);
      copy_between_devices_async(staging.data, home.device, from.data, from.device, bytes_, home.stream);
      inputs.push_back(staging.data);
    }
    DeviceScope on(home.device);
    device_reduce_many(home.data, inputs.data(), inputs.size(), buffers_[0].count, buffers_[0].dtype, combine_,
                       home.stream);
  }

  // The workers' step and MEAN's division on `home`, then (copy_back) the
  // result from home to every replica, and the wait for all of it.
  void finish(const Place& home, bool copy_back) {
    complete_at(home);
    if (copy_back) {
      for (const Place& to : replicas_) copy_to(home, to);
    }
    wait_for_all(replicas_, deadline_, what_);
  }

  // The workers' step and MEAN's division on `home`: it then holds the result.
  void complete_at(const Place& home) {
    across_workers(home);
    if (op_ == ReduceOp::MEAN) {
      DeviceScope on(home.device);
      device_finalize_mean(home.data, buffers_[0].count, buffers_[0].dtype, strategy_.num_replicas_in_sync(),
                           home.stream);
    }
  }

  void copy_to(const Place& from, const Place& to) {
    if (to.data == from.data) return;
    order_after(from, to);
    DeviceScope on(to.device);
    copy_between_devices_async(to.data, to.device, from.data, from.device, bytes_, to.stream);
  }

  // In place on `home` across the workers: AUTO through the communicator's
  // own path for CUDA memory (NCCL or staged), RING through host memory and
  // the host ring.
  void across_workers(const Place& home) {
    Communicator* comm = strategy_.sync_communicator();
    if (comm == nullptr) return;
    DeviceScope on(home.device);
    if (strategy_.communication() == Communication::kRing) {
      PinnedBlock host(bytes_);
      try {
        copy_to_host_async(host.data(), home.data, bytes_, home.stream);
        StreamMark(home.stream).wait(deadline_, what_);
        strategy_.all_reduce_across_workers(TensorRef{host.data(), buffers_[0].count, buffers_[0].dtype}, combine_);
        copy_to_device_async(home.data, host.data(), bytes_, home.stream);
        StreamMark(home.stream).wait(deadline_, what_);
      } catch (...) {
        host.abandon();  // a copy may still be running
        throw;
      }
      return;
    }
    CollectiveCall call;
    call.signature.kind = CollectiveKind::kAllReduce;
    call.signature.dtype = buffers_[0].dtype;
    call.signature.op = combine_;
    call.signature.count = buffers_[0].count;
    call.signature.memory = MemoryKind::kCuda;
    call.send = home.data;
    call.recv = home.data;
    comm->device_calls().run(call, home.stream, home.device);
  }

  // TF's hierarchical copy: the two halves summed on their first GPUs, the
  // sums combined on the first, and the total copied back down the tree.
  void run_hierarchical() {
    const size_t half = (replicas_.size() + 1) / 2;
    const Place top = scratch_on(replicas_[0]);
    const Place second = scratch_on(replicas_[half]);
    accumulate(top, 0, half);
    accumulate(second, half, replicas_.size());
    {
      order_after(second, top);
      const void* operand = second.data;
      if (second.device != top.device) {
        const Place staging = scratch_on(top);
        DeviceScope on(top.device);
        copy_between_devices_async(staging.data, top.device, second.data, second.device, bytes_, top.stream);
        operand = staging.data;
      }
      DeviceScope on(top.device);
      device_reduce(top.data, operand, buffers_[0].count, buffers_[0].dtype, combine_, top.stream);
    }
    complete_at(top);
    copy_to(top, second);
    for (size_t r = 0; r < replicas_.size(); ++r) copy_to(r < half ? top : second, replicas_[r]);
    wait_for_all(replicas_, deadline_, what_);
  }

  // REDUCTION_TO_ONE_DEVICE to the host: every value to pinned memory, the
  // host's sum in replica order (the bits of CPU replicas), the host's
  // workers' step, and back.
  void run_through_host() {
    std::vector<PinnedBlock> blocks;
    std::vector<const void*> inputs;
    for (size_t r = 0; r < replicas_.size(); ++r) {
      blocks.emplace_back(bytes_);
      inputs.push_back(blocks.back().data());
    }
    try {
      for (size_t r = 0; r < replicas_.size(); ++r) {
        DeviceScope on(replicas_[r].device);
        copy_to_host_async(blocks[r].data(), replicas_[r].data, bytes_, replicas_[r].stream);
      }
      wait_for_all(replicas_, deadline_, what_);
      const TensorRef total{blocks[0].data(), buffers_[0].count, buffers_[0].dtype};
      reduce_many(total.data, inputs.data(), inputs.size(), total.count, total.dtype, combine_);
      strategy_.all_reduce_across_workers(total, combine_);
      if (op_ == ReduceOp::MEAN) finalize_mean(total.data, total.count, total.dtype, strategy_.num_replicas_in_sync());
      for (const Place& to : replicas_) {
        DeviceScope on(to.device);
        copy_to_device_async(to.data, total.data, bytes_, to.stream);
      }
      wait_for_all(replicas_, deadline_, what_);
    } catch (...) {
      for (PinnedBlock& block : blocks) block.abandon();  // copies may still be running
      throw;
    }
  }

#ifdef DIST_HAVE_NCCL
  // Communication NCCL across workers, or NcclAllReduce between several
  // local GPUs.
  bool nccl_ranks_wanted() const {
    if (strategy_.communication() == Communication::kNccl && strategy_.num_workers() > 1) return true;
    return strategy_.cross_device_ops() == CrossDeviceOps::kNcclAllReduce && replicas_.size() > 1;
  }

  bool nccl_spans_workers() const {
    return strategy_.communication() == Communication::kNccl && strategy_.num_workers() > 1;
  }

  NcclReplicas& nccl_ranks() {
    GpuReplicas& gpus = *strategy_.gpus();
    if (gpus.nccl) return *gpus.nccl;
    if (!nccl_spans_workers()) {
      gpus.nccl = NcclReplicas::join(nccl_unique_id(), 0, gpus.count(), gpus.devices(), deadline_);
      return *gpus.nccl;
    }
    // Over the workers' authenticated communicator, all or nothing.
    Communicator& comm = *strategy_.sync_communicator();
    require_distinct_gpus(comm, gpus);
    const ncclUniqueId id = share_nccl_id(comm);
    Status status = Status::kOk;
    std::string why;
    try {
      gpus.nccl = NcclReplicas::join(id, strategy_.replica_id(0), strategy_.num_replicas_in_sync(), gpus.devices(),
                                     deadline_);
    } catch (const Error& e) {
      status = e.status();
      why = e.what();
    } catch (const std::exception& e) {
      status = Status::kInternal;
      why = e.what();
    }
    try {
      agree_on_nccl_stage(comm, status, why, "in the replicas' init");
    } catch (...) {
      // A peer failed: ours must not wait for it when they go.
      if (gpus.nccl) gpus.nccl->abort();
      gpus.nccl.reset();
      throw;
    }
    return *gpus.nccl;
  }

  // NCCL takes one rank per GPU: every worker's replicas' GPUs (their
  // UUIDs, gathered over the communicator) must differ. Every worker sees
  // the same list and fails alike, before any NCCL init.
  void require_distinct_gpus(Communicator& comm, const GpuReplicas& gpus) {
    const size_t local = static_cast<size_t>(gpus.count());
    std::vector<DeviceIdentity> mine(local), all(local * static_cast<size_t>(comm.size()));
    for (size_t r = 0; r < local; ++r) mine[r] = cuda_device_identity(gpus.device(static_cast<int>(r)));
    CollectiveCall gather;
    gather.signature.kind = CollectiveKind::kAllGather;
    gather.signature.dtype = DType::U8;
    gather.signature.count = local * sizeof(DeviceIdentity);
    gather.send = mine.data();
    gather.recv = all.data();
    comm.run(gather);
    for (size_t a = 0; a < all.size(); ++a) {
      for (size_t b = 0; b < a; ++b) {
        if (std::memcmp(all[a].bytes, all[b].bytes, sizeof all[a].bytes) == 0) {
          fail(Status::kUnavailable, "communication NCCL needs every replica on a GPU of its own, and replicas " +
                                         std::to_string(b) + " and " + std::to_string(a) +
                                         " share one (NCCL refuses two ranks on one GPU); use AUTO or RING");
        }
      }
    }
  }

  void run_on_nccl() {
    const FailureFlag* failure = nullptr;
    if (strategy_.sync_communicator() != nullptr) failure = strategy_.sync_communicator()->failure().get();
    nccl_ranks().all_reduce(buffers_, combine_, deadline_, failure);
    if (!nccl_spans_workers() && strategy_.sync_communicator() != nullptr) {
      // Every local replica holds the local total: the first one goes
      // across the workers and back to the others.
      finish(replicas_[0], /*copy_back=*/true);
      return;
    }
    // Every replica holds the total already: MEAN divides each in place.
    if (op_ == ReduceOp::MEAN) {
      for (const Place& p : replicas_) {
        DeviceScope on(p.device);
        device_finalize_mean(p.data, buffers_[0].count, buffers_[0].dtype, strategy_.num_replicas_in_sync(),
                             p.stream);
      }
    }
    wait_for_all(replicas_, deadline_, what_);
  }
#endif

  Strategy& strategy_;
  ReduceOp op_;
  ReduceOp combine_;  // MEAN sums, then divides once
  const std::vector<TensorRef>& buffers_;
  size_t bytes_;
  Deadline deadline_;
  std::string what_;
  std::vector<Place> replicas_;
  std::vector<Scratch> scratch_;
};

}  // namespace

void all_reduce_on_devices(Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& buffers) {
  if (strategy.gpus() == nullptr) {
    fail_invalid("CUDA memory passed to a strategy whose replicas are CPU devices (dist_replica_device is -1)");
  }
  for (size_t r = 0; r < buffers.size(); ++r) {
    const int expected = strategy.replica_device(static_cast<int>(r));
    if (buffers[r].device != expected) {
      fail_invalid("replica " + std::to_string(r) + "'s buffer is on CUDA device " + std::to_string(buffers[r].device) +
                   ", not on the replica's own device " + std::to_string(expected));
    }
  }
  if (buffers.empty() || buffers[0].count == 0) {
    // Nothing to move, but the workers still meet: their calls pair up.
    if (!buffers.empty() && strategy.sync_communicator() != nullptr) {
      strategy.all_reduce_across_workers(TensorRef{nullptr, 0, buffers[0].dtype}, ReduceOp::SUM);
    }
    return;
  }
  DeviceAllReduce(strategy, op, buffers).run();
}

void with_host_copies(Strategy& strategy, const std::vector<TensorRef>& values, const TensorRef& result,
                      const std::function<void(const std::vector<TensorRef>&, const TensorRef&)>& reduce) {
  const Deadline deadline = strategy.deadline();
  std::vector<PinnedBlock> blocks;
  std::vector<TensorRef> host_values = values;
  std::vector<Place> copying;
  try {
    for (TensorRef& value : host_values) {
      if (!value.on_device()) continue;
      blocks.emplace_back(value.bytes());
      DeviceScope on(value.device);
      copy_to_host_async(blocks.back().data(), value.data, value.bytes(), value.stream);
      copying.push_back(place_of(value));
      value = TensorRef{blocks.back().data(), value.count, value.dtype};
    }
    wait_for_all(copying, deadline, "strategy.reduce's copy of the values to host memory");
    if (!result.on_device()) {
      reduce(host_values, result);
      return;
    }
    blocks.emplace_back(result.bytes());
    const TensorRef host_result{blocks.back().data(), result.count, result.dtype};
    reduce(host_values, host_result);
    DeviceScope on(result.device);
    copy_to_device_async(result.data, host_result.data, result.bytes(), result.stream);
    wait_for_all({place_of(result)}, deadline, "strategy.reduce's copy of the result to the device");
  } catch (...) {
    for (PinnedBlock& block : blocks) block.abandon();  // copies may still be running
    throw;
  }
}

}  // namespace dist
