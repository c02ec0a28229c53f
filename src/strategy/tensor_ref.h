// A typed view of caller memory: what strategies, variables and the fused
// all-reduce pass around instead of (pointer, count, dtype) triples.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/dtype.h"
#include "collectives/signature.h"

namespace dist {

struct TensorRef {
  void* data = nullptr;
  uint64_t count = 0;
  DType dtype = DType::F32;
  // CUDA memory only where a call says it takes it (GPU replicas); the stream
  // the data is ordered on and the device it lies on come with it.
  MemoryKind memory = MemoryKind::kHost;
  void* stream = nullptr;
  int device = -1;

  size_t bytes() const { return static_cast<size_t>(count) * size_of(dtype); }
  bool on_device() const { return memory == MemoryKind::kCuda; }
};

}  // namespace dist
