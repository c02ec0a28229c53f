#include "ps/optimizers/sgd.h"

namespace dist::ps {
namespace {

template <typename T>
void sgd(const OptimizerConfig& c, T* var, const T* grad, size_t count) {
  const T lr = static_cast<T>(c.learning_rate);
  for (size_t i = 0; i < count; ++i) var[i] -= lr * grad[i];
}

}  // namespace

void SgdOptimizer::apply(float* var, const float* grad, float* const*, size_t count, int64_t) const {
  sgd(config_, var, grad, count);
}
void SgdOptimizer::apply(double* var, const double* grad, double* const*, size_t count, int64_t) const {
  sgd(config_, var, grad, count);
}

}  // namespace dist::ps
