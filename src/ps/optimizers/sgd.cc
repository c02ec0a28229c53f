#include "ps/optimizers/sgd.h"

#include "ps/optimizers/update_rules.h"

namespace dist::ps {

void SgdOptimizer::apply(float* var, const float* grad, float* const*, size_t count, int64_t) const {
  sgd_update(var, GradientArray<float>{grad}, count, config_.learning_rate);
}
void SgdOptimizer::apply(double* var, const double* grad, double* const*, size_t count, int64_t) const {
  sgd_update(var, GradientArray<double>{grad}, count, config_.learning_rate);
}

}  // namespace dist::ps
