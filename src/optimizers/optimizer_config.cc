#include "optimizers/optimizer_config.h"

#include <cmath>
#include <string>

#include "base/status.h"

namespace dist {

OptimizerKind optimizer_kind_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(OptimizerKind::kAdagrad)) {
    fail_invalid("optimizer kind " + std::to_string(value) + " is not one of SGD, MOMENTUM, ADAM, ADAGRAD");
  }
  return static_cast<OptimizerKind>(value);
}

const char* optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdagrad: return "adagrad";
  }
  return "invalid";
}

void check_optimizer_config(const OptimizerConfig& c) {
  optimizer_kind_from_int(static_cast<int32_t>(c.kind));
  auto in_unit = [](double v) { return v >= 0.0 && v < 1.0; };
  if (!(c.learning_rate > 0.0) || !std::isfinite(c.learning_rate)) {
    fail_invalid("learning_rate " + std::to_string(c.learning_rate) + " must be positive and finite");
  }
  if (!in_unit(c.momentum)) fail_invalid("momentum " + std::to_string(c.momentum) + " is outside [0, 1)");
  if (!in_unit(c.beta_1)) fail_invalid("beta_1 " + std::to_string(c.beta_1) + " is outside [0, 1)");
  if (!in_unit(c.beta_2)) fail_invalid("beta_2 " + std::to_string(c.beta_2) + " is outside [0, 1)");
  if (!(c.epsilon > 0.0) || !std::isfinite(c.epsilon)) {
    fail_invalid("epsilon " + std::to_string(c.epsilon) + " must be positive and finite");
  }
  if (!(c.initial_accumulator_value >= 0.0) || !std::isfinite(c.initial_accumulator_value)) {
    fail_invalid("initial_accumulator_value " + std::to_string(c.initial_accumulator_value) +
                 " must be non-negative and finite");
  }
}

bool optimizer_updates(DType dtype) { return dtype == DType::F32 || dtype == DType::F64; }

}  // namespace dist
