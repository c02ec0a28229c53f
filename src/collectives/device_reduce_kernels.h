// The reduction kernels (reduce_kernels.h) on CUDA device memory, enqueued on
// a stream (builds with CUDA): the host's arithmetic bit for bit, so values
// reduced on a GPU have the host's bits.
//
// NaN: the device's arithmetic returns one canonical NaN, the host's (x86-64)
// the NaN operand, quieted, or its "default NaN" (sign set) for inf - inf and
// 0 * inf. These kernels apply the host's rule, so their NaNs have the host's
// bits too; where both operands of a SUM or PROD are NaN they return the
// first (acc), which is what the host returns unless its compiler swapped the
// operands (the host leaves that open: "NaN payloads aside").
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/dtype.h"
#include "collectives/reduce_op.h"

namespace dist {

// acc[i] = acc[i] op x[i] for i < count, on `stream` (a cudaStream_t as void*;
// the calling thread's current device must hold both buffers, or have peer
// access to x). MEAN reduces as SUM (as the host's reduce). count 0: nothing
// enqueued. Throws kInvalidArgument for a dtype/op outside its enum, kSystem
// naming the CUDA error when the launch fails.
void device_reduce(void* acc, const void* x, uint64_t count, DType dtype, ReduceOp op, void* stream);

// The host's reduce_many on device memory: out[i] = inputs[0][i] op
// inputs[1][i] op ... in input order, f16/bf16 accumulated in f32 and rounded
// once (not after every pair, as chained device_reduce calls would). Every
// input on the current device; `inputs` is a host array of device pointers;
// out may be one of them. 1 <= num_inputs <= kMaxDeviceInputs.
inline constexpr int kMaxDeviceInputs = 64;
void device_reduce_many(void* out, const void* const* inputs, size_t num_inputs, uint64_t count, DType dtype,
                        ReduceOp op, void* stream);

// The host's finalize_mean on device memory.
void device_finalize_mean(void* buf, uint64_t count, DType dtype, int64_t divisor, void* stream);

}  // namespace dist
