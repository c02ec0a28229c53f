// The one optimizer of libdistribute, as the workers' apply_gradients and the
// parameter servers both run it: which rule (kind) and its hyperparameters.
// Keras' formulations and defaults; update_rules.h holds the arithmetic.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace dist {

// The values are the C ABI's DIST_OPTIMIZER_* constants (c_api/optimizer_options.h
// checks that they agree). The parameter-server protocol numbers kinds its
// own older way; ps/spec_codec.cc translates.
enum class OptimizerKind : int32_t { kSgd = 0, kMomentum = 1, kAdam = 2, kAdagrad = 3 };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double learning_rate = 0.01;
  double momentum = 0.9;                   // Momentum
  bool nesterov = false;                   // Momentum
  double beta_1 = 0.9;                     // Adam
  double beta_2 = 0.999;                   // Adam
  double epsilon = 1e-7;                   // Adam, Adagrad
  double initial_accumulator_value = 0.1;  // Adagrad
};

// `value` (a DIST_OPTIMIZER_* number) as a kind; throws invalid-argument naming it.
OptimizerKind optimizer_kind_from_int(int32_t value);

// "sgd", "momentum", "adam", "adagrad"; "invalid" outside the enum.
const char* optimizer_name(OptimizerKind kind);

// Throws invalid-argument naming the first field out of range: the kind, a
// learning rate that is not finite and > 0, momentum or a beta outside
// [0, 1), epsilon not finite and > 0, an initial accumulator not finite and >= 0.
void check_optimizer_config(const OptimizerConfig& config);

// The dtypes the update rules run in: f32 and f64.
bool optimizer_updates(DType dtype);

}  // namespace dist
