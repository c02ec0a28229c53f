#include "strategy/gpu_replicas.h"

namespace dist {

GpuReplicas::GpuReplicas(int count) : packs_(static_cast<size_t>(count)), pack_bytes_(static_cast<size_t>(count), 0) {
  for (int i = 0; i < count; ++i) streams_.push_back(std::make_unique<OwnedStream>(i));
  // The device all-reduce's scratch (stream-ordered) is copied between GPUs.
  if (count > 1) share_stream_ordered_memory(devices());
}

void* GpuReplicas::pack(int replica, size_t bytes, std::chrono::steady_clock::time_point deadline) {
  const auto r = static_cast<size_t>(replica);
  if (pack_bytes_[r] < bytes) {
    // The old buffer may still be read by work on the replica's stream:
    // waited for by the deadline, else left to CUDA (never freed under work
    // that may not end).
    {
      DeviceScope on(device(replica));
      try {
        StreamMark(stream(replica)).wait(deadline, "apply_gradients' previous step on the GPU");
      } catch (...) {
        if (packs_[r]) packs_[r]->abandon();
        packs_[r].reset();
        pack_bytes_[r] = 0;
        throw;
      }
    }
    packs_[r].reset();
    pack_bytes_[r] = 0;
    packs_[r] = std::make_unique<DeviceBuffer>(device(replica), bytes);
    pack_bytes_[r] = bytes;
  }
  return packs_[r]->data();
}

// The NCCL ranks go first: their work runs on the replicas' streams.
GpuReplicas::~GpuReplicas() {
#ifdef DIST_HAVE_NCCL
  nccl.reset();
#endif
  packs_.clear();
}

std::vector<int> GpuReplicas::devices() const {
  std::vector<int> out;
  for (const auto& stream : streams_) out.push_back(stream->device());
  return out;
}

}  // namespace dist
