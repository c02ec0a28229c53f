// A variable's copies on GPU replicas (builds with CUDA): one device buffer
// per local replica, on that replica's GPU. Reads and writes go through the
// replica's stream and are waited for by the strategy's deadline; values
// given or asked for in CUDA memory are ordered on their own stream as well.
// Assignments and on-read aggregation stage a copy through host memory and
// use the host's arithmetic (the same bits as a variable of CPU replicas);
// the optimizer's steps run on the devices (variables/device_apply_gradients.h).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "gpu/cuda_memory.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"

namespace dist {

class DeviceCopies {
 public:
  // `initial`: `bytes` bytes of host memory, written to every copy.
  DeviceCopies(Strategy& strategy, const void* initial, size_t bytes);

  int count() const { return static_cast<int>(copies_.size()); }
  void* data(int i) const { return copies_[static_cast<size_t>(i)]->data(); }
  int device(int i) const { return copies_[static_cast<size_t>(i)]->device(); }
  // Replica i's stream, where its copy's reads, writes and updates are ordered.
  void* stream(int i) const { return strategy_.replica_stream(i); }

  // Copy i into `out` (host memory, or CUDA memory ordered on out.stream).
  void read(int i, const TensorRef& out) const;
  // Copy i into host memory / host memory into copy i, waited for.
  void load(int i, void* host) const;
  void store(int i, const void* host);
  // Host memory into every copy, waited for.
  void store_all(const void* host);

 private:
  Strategy& strategy_;
  size_t bytes_;
  std::vector<std::unique_ptr<DeviceBuffer>> copies_;
};

// `value` in host memory: itself, or (CUDA memory) a copy in `staging`,
// waited for by `deadline` (a call's, so that several copies share one).
const void* host_view(const TensorRef& value, std::vector<unsigned char>& staging,
                      std::chrono::steady_clock::time_point deadline);

// Host memory into `out` (host memory, or CUDA memory on out.stream), waited for.
void write_out(Strategy& strategy, const void* host, const TensorRef& out);

}  // namespace dist
