// dist_optimizer_options_t as an optimizer configuration, read and checked
// here for both users: the workers' optimizer (dist_optimizer_create) and the
// parameter servers' optimizer (a PARAMETER_SERVER variable's
// options.optimizer).
#pragma once

#include <distribute/c_api.h>
#include "optimizers/optimizer_config.h"

namespace dist {

static_assert(static_cast<int32_t>(OptimizerKind::kSgd) == DIST_OPTIMIZER_SGD &&
                  static_cast<int32_t>(OptimizerKind::kMomentum) == DIST_OPTIMIZER_MOMENTUM &&
                  static_cast<int32_t>(OptimizerKind::kAdam) == DIST_OPTIMIZER_ADAM &&
                  static_cast<int32_t>(OptimizerKind::kAdagrad) == DIST_OPTIMIZER_ADAGRAD,
              "OptimizerKind must number kinds as the C ABI does");

// Unset fields take their documented defaults (Adam's learning rate: 0.001).
// Throws invalid-argument naming the first field out of range.
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
  check_optimizer_config(out);
  return out;
}

}  // namespace dist
