#include "ps/optimizers/momentum.h"

#include "ps/optimizers/update_rules.h"

namespace dist::ps {

void MomentumOptimizer::apply(float* var, const float* grad, float* const* slots, size_t count, int64_t) const {
  momentum_update(var, slots[0], GradientArray<float>{grad}, count, config_.learning_rate, config_.momentum,
                  config_.nesterov);
}
void MomentumOptimizer::apply(double* var, const double* grad, double* const* slots, size_t count, int64_t) const {
  momentum_update(var, slots[0], GradientArray<double>{grad}, count, config_.learning_rate, config_.momentum,
                  config_.nesterov);
}

}  // namespace dist::ps
