// A typed view of caller memory: what strategies, variables and the fused
// all-reduce pass around instead of (pointer, count, dtype) triples.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/dtype.h"

namespace dist {

struct TensorRef {
  void* data = nullptr;
  uint64_t count = 0;
  DType dtype = DType::F32;

  size_t bytes() const { return static_cast<size_t>(count) * size_of(dtype); }
};

}  // namespace dist
