// apply_gradients on variables held on GPU replicas (builds with CUDA): the
// gradients (device or host memory) packed per dtype into buckets of
// bytes_per_pack (or num_packs equal packs) on each replica's GPU, each
// bucket all-reduced as the strategy's device all-reduce does it
// (strategy/device_all_reduce.h), and every replica's copy stepped on its
// own GPU by the optimizer's device kernels from the same sums, so the copies
// stay bit-identical. Returns once every copy is updated.
#pragma once

#include <vector>

#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"
#include "variables/variable.h"
#include "variables/worker_optimizer.h"

namespace dist {

// As apply_gradients (apply_gradients.h), whose checks have passed. Collective
// in a multi-worker strategy.
void apply_gradients_on_devices(Strategy& strategy, const std::vector<Variable*>& variables,
                                const std::vector<std::vector<TensorRef>>& gradients, WorkerOptimizer& optimizer);

}  // namespace dist
