#include "ps/optimizers/adagrad.h"

#include <cmath>

namespace dist::ps {
namespace {

template <typename T>
void adagrad(const OptimizerConfig& c, T* var, const T* grad, T* accumulator, size_t count) {
  const T lr = static_cast<T>(c.learning_rate);
  const T eps = static_cast<T>(c.epsilon);
  for (size_t i = 0; i < count; ++i) {
    accumulator[i] += grad[i] * grad[i];
    var[i] -= lr * grad[i] / (std::sqrt(accumulator[i]) + eps);
  }
}

}  // namespace

void AdagradOptimizer::apply(float* var, const float* grad, float* const* slots, size_t count, int64_t) const {
  adagrad(config_, var, grad, slots[0], count);
}
void AdagradOptimizer::apply(double* var, const double* grad, double* const* slots, size_t count, int64_t) const {
  adagrad(config_, var, grad, slots[0], count);
}

}  // namespace dist::ps
