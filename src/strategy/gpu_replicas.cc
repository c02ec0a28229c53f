#include "strategy/gpu_replicas.h"

namespace dist {

GpuReplicas::GpuReplicas(int count) {
  for (int i = 0; i < count; ++i) streams_.push_back(std::make_unique<OwnedStream>(i));
}

// The NCCL ranks go first: their work runs on the replicas' streams.
GpuReplicas::~GpuReplicas() {
#ifdef DIST_HAVE_NCCL
  nccl.reset();
#endif
}

std::vector<int> GpuReplicas::devices() const {
  std::vector<int> out;
  for (const auto& stream : streams_) out.push_back(stream->device());
  return out;
}

}  // namespace dist
