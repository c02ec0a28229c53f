#include "ps/optimizers/adam.h"

#include "ps/optimizers/update_rules.h"

namespace dist::ps {

void AdamOptimizer::apply(float* var, const float* grad, float* const* slots, size_t count, int64_t step) const {
  adam_update(var, slots[0], slots[1], GradientArray<float>{grad}, count, step, config_.learning_rate,
              config_.beta1, config_.beta2, config_.epsilon);
}
void AdamOptimizer::apply(double* var, const double* grad, double* const* slots, size_t count, int64_t step) const {
  adam_update(var, slots[0], slots[1], GradientArray<double>{grad}, count, step, config_.learning_rate,
              config_.beta1, config_.beta2, config_.epsilon);
}

}  // namespace dist::ps
