// What the library's CUDA kernels (.cu files only) share about launching:
// the grid, the grid-stride index, and launch errors reported as the rest of
// the library reports CUDA's errors (gpu/cuda_memory.cc).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "base/status.h"

namespace dist::kernels {

inline std::string runtime_words(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

// A launch reports its error only through cudaGetLastError, which also clears
// it (so that it does not stick to the next call in this thread). Called
// before a launch, to drop an earlier call's error (that call returned it),
// and after it: then it throws kSystem naming `what`.
inline void clear_last_error() { (void)cudaGetLastError(); }

inline void check_launch(const char* what) {
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return;
  fail(Status::kSystem, std::string(what) + " failed (" + runtime_words(error) + ")");
}

inline constexpr unsigned kThreads = 256;
// Grid-stride loops cover the rest; this many blocks fill any current GPU.
inline constexpr uint64_t kMaxBlocks = 8192;

inline unsigned blocks_for(uint64_t count) {
  const uint64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__device__ inline uint64_t first_index() { return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

__device__ inline uint64_t grid_stride() { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }

}  // namespace dist::kernels
