#include "ps/optimizers/adam.h"

#include <cmath>

namespace dist::ps {
namespace {

template <typename T>
void adam(const OptimizerConfig& c, T* var, const T* grad, T* m, T* v, size_t count, int64_t step) {
  const double t = static_cast<double>(step);
  // The bias correction is folded into the step size, as Keras does.
  const T alpha = static_cast<T>(c.learning_rate * std::sqrt(1.0 - std::pow(c.beta2, t)) /
                                 (1.0 - std::pow(c.beta1, t)));
  const T b1 = static_cast<T>(c.beta1), b2 = static_cast<T>(c.beta2), eps = static_cast<T>(c.epsilon);
  for (size_t i = 0; i < count; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * grad[i];
    v[i] = b2 * v[i] + (1 - b2) * grad[i] * grad[i];
    var[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
  }
}

}  // namespace

void AdamOptimizer::apply(float* var, const float* grad, float* const* slots, size_t count, int64_t step) const {
  adam(config_, var, grad, slots[0], slots[1], count, step);
}
void AdamOptimizer::apply(double* var, const double* grad, double* const* slots, size_t count, int64_t step) const {
  adam(config_, var, grad, slots[0], slots[1], count, step);
}

}  // namespace dist::ps
