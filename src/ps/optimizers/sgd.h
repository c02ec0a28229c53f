// w -= lr * g.
#pragma once

#include "ps/optimizers/optimizer.h"

namespace dist::ps {

class SgdOptimizer final : public Optimizer {
 public:
  using Optimizer::Optimizer;
  void apply(float* var, const float* grad, float* const* slots, size_t count, int64_t step) const override;
  void apply(double* var, const double* grad, double* const* slots, size_t count, int64_t step) const override;
};

}  // namespace dist::ps
