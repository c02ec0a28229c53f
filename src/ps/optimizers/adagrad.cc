#include "ps/optimizers/adagrad.h"

#include "ps/optimizers/update_rules.h"

namespace dist::ps {

void AdagradOptimizer::apply(float* var, const float* grad, float* const* slots, size_t count, int64_t) const {
  adagrad_update(var, slots[0], GradientArray<float>{grad}, count, config_.learning_rate, config_.epsilon);
}
void AdagradOptimizer::apply(double* var, const double* grad, double* const* slots, size_t count, int64_t) const {
  adagrad_update(var, slots[0], GradientArray<double>{grad}, count, config_.learning_rate, config_.epsilon);
}

}  // namespace dist::ps
