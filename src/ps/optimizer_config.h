// Which server-side optimizer a variable uses and its hyperparameters. Each
// variable carries its own, so two variables on one server can train with
// different optimizers and learning rates. Defaults follow Keras.
#pragma once

#include <cstdint>
#include <string>

namespace dist::ps {

enum class OptimizerKind : int32_t {
  kNone = 0,  // apply_gradient is refused: the variable is only read and assigned
  kSgd = 1,
  kMomentum = 2,
  kAdagrad = 3,
  kAdam = 4,
};

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kNone;
  double learning_rate = 0.01;
  double momentum = 0.9;                   // Momentum
  bool nesterov = false;                   // Momentum
  double initial_accumulator_value = 0.1;  // Adagrad
  double beta1 = 0.9;                      // Adam
  double beta2 = 0.999;                    // Adam
  double epsilon = 1e-7;                   // Adagrad, Adam
};

// "none", "sgd", "momentum", "adagrad", "adam"; "invalid" otherwise.
const char* optimizer_name(OptimizerKind kind);

// The kind for a wire/ABI value; throws invalid-argument naming the value.
OptimizerKind optimizer_kind_from_int(int32_t value);

// Throws invalid-argument naming the hyperparameter that is out of range
// (learning rate must be finite and > 0, momentum and betas in [0, 1),
// epsilon > 0, initial accumulator >= 0).
void validate(const OptimizerConfig& config);

// Slot buffers the optimizer keeps per element: 0 (SGD), 1 (Momentum's
// velocity, Adagrad's accumulator) or 2 (Adam's m and v).
int slot_count(OptimizerKind kind);

}  // namespace dist::ps
