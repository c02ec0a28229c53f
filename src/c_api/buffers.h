// The checks every dist_buffer_t goes through at the C ABI: a real dtype, a
// memory kind this build can take (host memory; CUDA device memory where a
// device is usable), and data for a non-empty count whose byte size fits in
// memory.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "collectives/signature.h"
#include <distribute/c_api.h>

namespace dist {

struct Checked {
  DType dtype = DType::U8;
  uint64_t count = 0;
  void* data = nullptr;
  MemoryKind memory = MemoryKind::kHost;
  void* stream = nullptr;  // a cudaStream_t for CUDA memory
  int device = -1;         // the CUDA device it lies on, for CUDA memory
};

// Throws invalid-argument naming `name` and the field that is wrong
// (unsupported for CUDA memory in a build without CUDA, unavailable where no
// device is usable).
Checked check_buffer(const dist_buffer_t* buffer, const char* name);

// Throws unless `a` and `b` lie in the same kind of memory, on the same stream.
void same_memory(const Checked& a, const Checked& b);

// Throws unsupported for a CUDA buffer passed to `function`, which takes host
// memory only.
void host_memory_only(const Checked& buffer, const char* function);

}  // namespace dist
