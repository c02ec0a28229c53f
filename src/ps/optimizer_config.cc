#include "ps/optimizer_config.h"

#include <cmath>

#include "base/status.h"

namespace dist::ps {

const char* optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kNone: return "none";
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdagrad: return "adagrad";
    case OptimizerKind::kAdam: return "adam";
  }
  return "invalid";
}

OptimizerKind optimizer_kind_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(OptimizerKind::kAdam)) {
    fail_invalid("optimizer " + std::to_string(value) +
                 " is not one of 0 none, 1 sgd, 2 momentum, 3 adagrad, 4 adam");
  }
  return static_cast<OptimizerKind>(value);
}

namespace {

void require_range(double value, const char* field, double low, bool low_inclusive, double high) {
  bool ok = std::isfinite(value) && (low_inclusive ? value >= low : value > low) && value < high;
  if (!ok) {
    fail_invalid(std::string("optimizer: ") + field + " " + std::to_string(value) + " must be in " +
                 (low_inclusive ? "[" : "(") + std::to_string(low) + ", " +
                 (std::isinf(high) ? std::string("inf") : std::to_string(high)) + ")");
  }
}

}  // namespace

void validate(const OptimizerConfig& config) {
  optimizer_kind_from_int(static_cast<int32_t>(config.kind));
  const double inf = INFINITY;
  require_range(config.learning_rate, "learning_rate", 0.0, false, inf);
  require_range(config.momentum, "momentum", 0.0, true, 1.0);
  require_range(config.beta1, "beta1", 0.0, true, 1.0);
  require_range(config.beta2, "beta2", 0.0, true, 1.0);
  require_range(config.epsilon, "epsilon", 0.0, false, inf);
  require_range(config.initial_accumulator_value, "initial_accumulator_value", 0.0, true, inf);
}

int slot_count(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kMomentum:
    case OptimizerKind::kAdagrad: return 1;
    case OptimizerKind::kAdam: return 2;
    default: return 0;
  }
}

}  // namespace dist::ps
