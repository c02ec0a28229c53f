// apply_gradients: one optimizer step over a strategy's mirrored variables.
// The local replicas' gradients are all-reduced across the workers (fused and
// bucketed, strategy/fused_all_reduce.h), and each part of the sum updates the
// variables' weights as soon as it is complete, in the same pass over it.
#pragma once

#include <vector>

#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"
#include "variables/worker_optimizer.h"
#include "variables/variable.h"

namespace dist {

// gradients[r][i] is local replica r's gradient of variables[i]. Checks that
// every variable is an ON_WRITE variable of `strategy` that the optimizer can
// update, given once, with gradients of its dtype and count; errors name
// them as vars[i]. Collective in a multi-worker strategy.
void apply_gradients(Strategy& strategy, const std::vector<Variable*>& variables,
                     const std::vector<std::vector<TensorRef>>& gradients, WorkerOptimizer& optimizer);

}  // namespace dist
