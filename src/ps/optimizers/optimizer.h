// A server-side optimizer: turns one gradient into an update of a variable's
// elements and of its slot buffers (one file per optimizer). Dense updates
// pass the whole shard; sparse updates call apply once per selected row with
// the matching rows of the slots, so rows not named are never touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ps/optimizer_config.h"

namespace dist::ps {

class Optimizer {
 public:
  explicit Optimizer(const OptimizerConfig& config) : config_(config) {}
  virtual ~Optimizer() = default;

  // `slots[k]` points at the same `count` elements of slot k as `var`.
  // `step` is the 1-based number of this update on the variable (Adam's t).
  virtual void apply(float* var, const float* grad, float* const* slots, size_t count, int64_t step) const = 0;
  virtual void apply(double* var, const double* grad, double* const* slots, size_t count, int64_t step) const = 0;

  // The value every slot element starts at (Adagrad's initial accumulator).
  virtual double initial_slot_value() const { return 0.0; }

  const OptimizerConfig& config() const { return config_; }

 protected:
  OptimizerConfig config_;
};

// The optimizer for `config` (validated); nullptr for OptimizerKind::kNone.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace dist::ps
