// dist_optimizer_options_t as the optimizer configuration of the workers'
// optimizer (dist_optimizer_create) and of the parameter servers' optimizer
// (a PARAMETER_SERVER variable's options.optimizer).
#pragma once

#include "c_api.h"
#include "ps/optimizer_config.h"
#include "variables/optimizer.h"

namespace dist {

inline OptimizerConfig read_optimizer_options(const dist_optimizer_options_t* in) {
  OptimizerConfig out;
  if (in == nullptr) return out;
  auto has = [in](uint64_t bit) { return (in->field_mask & bit) != 0; };
  if (has(DIST_OPTIMIZER_OPT_KIND)) out.kind = optimizer_kind_from_int(in->kind);
  if (out.kind == OptimizerKind::kAdam) out.learning_rate = 0.001;
  if (has(DIST_OPTIMIZER_OPT_LEARNING_RATE)) out.learning_rate = in->learning_rate;
  if (has(DIST_OPTIMIZER_OPT_MOMENTUM)) out.momentum = in->momentum;
  if (has(DIST_OPTIMIZER_OPT_NESTEROV)) out.nesterov = in->nesterov != 0;
  if (has(DIST_OPTIMIZER_OPT_BETA_1)) out.beta_1 = in->beta_1;
  if (has(DIST_OPTIMIZER_OPT_BETA_2)) out.beta_2 = in->beta_2;
  if (has(DIST_OPTIMIZER_OPT_EPSILON)) out.epsilon = in->epsilon;
  if (has(DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE)) out.initial_accumulator_value = in->initial_accumulator_value;
  return out;
}

// The same settings for the servers' optimizer, validated there as here.
inline ps::OptimizerConfig server_optimizer_options(const dist_optimizer_options_t* in) {
  const OptimizerConfig worker = read_optimizer_options(in);
  check_optimizer_config(worker);  // its messages name the C API's fields
  ps::OptimizerConfig out;
  switch (worker.kind) {
    case OptimizerKind::kSgd: out.kind = ps::OptimizerKind::kSgd; break;
    case OptimizerKind::kMomentum: out.kind = ps::OptimizerKind::kMomentum; break;
    case OptimizerKind::kAdam: out.kind = ps::OptimizerKind::kAdam; break;
    case OptimizerKind::kAdagrad: out.kind = ps::OptimizerKind::kAdagrad; break;
  }
  out.learning_rate = worker.learning_rate;
  out.momentum = worker.momentum;
  out.nesterov = worker.nesterov;
  out.beta1 = worker.beta_1;
  out.beta2 = worker.beta_2;
  out.epsilon = worker.epsilon;
  out.initial_accumulator_value = worker.initial_accumulator_value;
  ps::validate(out);
  return out;
}

}  // namespace dist
