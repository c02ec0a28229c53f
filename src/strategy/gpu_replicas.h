// The GPUs a strategy's replicas drive (builds with CUDA): local replica i is
// CUDA device i (the process's view, CUDA_VISIBLE_DEVICES applied) with a
// non-blocking stream of its own, and the NCCL ranks of the replicas once a
// device all-reduce needs them.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "gpu/cuda_memory.h"
#ifdef DIST_HAVE_NCCL
#include "strategy/nccl_replicas.h"
#endif

namespace dist {

class GpuReplicas {
 public:
  explicit GpuReplicas(int count);  // throws kUnavailable / kSystem
  ~GpuReplicas();
  GpuReplicas(const GpuReplicas&) = delete;
  GpuReplicas& operator=(const GpuReplicas&) = delete;

  int count() const { return static_cast<int>(streams_.size()); }
  int device(int replica) const { return streams_[static_cast<size_t>(replica)]->device(); }
  void* stream(int replica) const { return streams_[static_cast<size_t>(replica)]->get(); }
  std::vector<int> devices() const;

  // At least `bytes` of device memory of replica `replica`'s, kept between
  // calls (apply_gradients packs its buckets there). Plain cudaMalloc memory:
  // NCCL may read and write it from the peer GPUs, which memory from a
  // stream-ordered pool does not allow without access grants. Used in the
  // replica stream's order only; growing it waits for that stream (by
  // `deadline`) before the old buffer goes.
  void* pack(int replica, size_t bytes, std::chrono::steady_clock::time_point deadline);

#ifdef DIST_HAVE_NCCL
  // The NCCL ranks of the replicas; null until made (device_all_reduce.cc).
  std::unique_ptr<NcclReplicas> nccl;
#endif

 private:
  std::vector<std::unique_ptr<OwnedStream>> streams_;
  std::vector<std::unique_ptr<DeviceBuffer>> packs_;
  std::vector<size_t> pack_bytes_;
};

}  // namespace dist
