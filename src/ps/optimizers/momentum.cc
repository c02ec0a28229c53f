#include "ps/optimizers/momentum.h"

namespace dist::ps {
namespace {

template <typename T>
void momentum(const OptimizerConfig& c, T* var, const T* grad, T* velocity, size_t count) {
  const T lr = static_cast<T>(c.learning_rate);
  const T mu = static_cast<T>(c.momentum);
  for (size_t i = 0; i < count; ++i) {
    velocity[i] = mu * velocity[i] - lr * grad[i];
    var[i] += c.nesterov ? mu * velocity[i] - lr * grad[i] : velocity[i];
  }
}

}  // namespace

void MomentumOptimizer::apply(float* var, const float* grad, float* const* slots, size_t count, int64_t) const {
  momentum(config_, var, grad, slots[0], count);
}
void MomentumOptimizer::apply(double* var, const double* grad, double* const* slots, size_t count, int64_t) const {
  momentum(config_, var, grad, slots[0], count);
}

}  // namespace dist::ps
