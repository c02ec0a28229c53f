// The optimizer's update rules (update_rules.h) as CUDA kernels (builds with
// CUDA): one step over elements on a GPU, the host's arithmetic bit for bit
// (compiled without fused multiply-adds, IEEE division and square root), so
// variables trained on GPUs follow the host's bits. A NaN computed here is a
// NaN, but its sign and payload may differ from the host's.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "optimizers/dense_update.h"

namespace dist {

// One optimizer step over `target` (device pointers: values and the kind's
// slots), gradient(i) = gradient_sum[i] divided by `divisor` exactly as the
// workers' apply_gradients does it on the host (variables/worker_optimizer.cc,
// with_mean: a power of two multiplies by its reciprocal, else divides),
// enqueued on `stream`. f32 and f64 only (kInvalidArgument otherwise). `step`
// is Adam's 1-based t.
void device_dense_update(const OptimizerConfig& config, int64_t step, DType dtype, const UpdateTarget& target,
                         const void* gradient_sum, int64_t divisor, void* stream);

}  // namespace dist
