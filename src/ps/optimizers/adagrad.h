// acc += g^2; w -= lr * g / (sqrt(acc) + epsilon); acc starts at initial_accumulator_value.
#pragma once

#include "ps/optimizers/optimizer.h"

namespace dist::ps {

class AdagradOptimizer final : public Optimizer {
 public:
  using Optimizer::Optimizer;
  void apply(float* var, const float* grad, float* const* slots, size_t count, int64_t step) const override;
  void apply(double* var, const double* grad, double* const* slots, size_t count, int64_t step) const override;
  double initial_slot_value() const override { return config_.initial_accumulator_value; }
};

}  // namespace dist::ps
