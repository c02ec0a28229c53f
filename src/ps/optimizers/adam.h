// Keras Adam: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= lr * sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + epsilon). Sparse updates are lazy: only the named rows' m and v move; t counts updates of the variable.
#pragma once

#include "ps/optimizers/optimizer.h"

namespace dist::ps {

class AdamOptimizer final : public Optimizer {
 public:
  using Optimizer::Optimizer;
  void apply(float* var, const float* grad, float* const* slots, size_t count, int64_t step) const override;
  void apply(double* var, const double* grad, double* const* slots, size_t count, int64_t step) const override;
};

}  // namespace dist::ps
