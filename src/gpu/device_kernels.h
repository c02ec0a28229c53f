// Element-wise kernels on CUDA device memory, enqueued on a stream: the
// arithmetic of the host's reduce kernels (collectives/reduce_kernels.h) and
// optimizer rules (optimizers/update_rules.h), bit for bit, so values reduced
// or trained on a GPU follow the host's bits.
//
// NaN: the device's arithmetic returns one canonical NaN, the host's (x86-64)
// the NaN operand, quieted, or its "default NaN" (sign set) for inf - inf and
// 0 * inf. device_reduce and device_finalize_mean apply the host's rule, so
// their NaNs have the host's bits too; where both operands of a SUM or PROD
// are NaN they return the first (acc), which is what the host returns unless
// its compiler swapped the operands (the host leaves that open: "NaN payloads
// aside"). device_dense_update does not: a NaN it computes is a NaN, but its
// sign and payload may differ from the host's.
#pragma once
#include <cstdint>
#include "base/dtype.h"
#include "collectives/reduce_op.h"
#include "optimizers/dense_update.h"
namespace dist {
// acc[i] = acc[i] op x[i] for i < count, on `stream` (a cudaStream_t as void*;
// the calling thread's current device must hold both buffers, or have peer
// access to x). MEAN reduces as SUM (as the host's reduce). count 0: nothing
// enqueued. Throws kInvalidArgument for a dtype/op outside its enum, kSystem
// naming the CUDA error when the launch fails.
void device_reduce(void* acc, const void* x, uint64_t count, DType dtype, ReduceOp op, void* stream);
// The host's finalize_mean on device memory.
void device_finalize_mean(void* buf, uint64_t count, DType dtype, int64_t divisor, void* stream);
// One optimizer step over `target` (device pointers: values and the kind's
// slots), gradient(i) = gradient_sum[i] divided by `divisor` exactly as the
// workers' apply_gradients does it on the host (src/variables/worker_optimizer.cc,
// with_mean: a power of two multiplies by its reciprocal, else divides).
// f32 and f64 only (kInvalidArgument otherwise). `step` is Adam's 1-based t.
void device_dense_update(const OptimizerConfig& config, int64_t step, DType dtype, const UpdateTarget& target,
                         const void* gradient_sum, int64_t divisor, void* stream);
}  // namespace dist
