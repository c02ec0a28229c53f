/* Optimizer options with a kind and a learning rate, every other
 * hyperparameter at its default: what most tests need. Shared by the C suites
 * and the multi-process workers. */
#ifndef DIST_TEST_OPTIMIZER_OPTIONS_H
#define DIST_TEST_OPTIMIZER_OPTIONS_H

#include <distribute/c_api.h>

static inline dist_optimizer_options_t optimizer_options(dist_optimizer_kind_t kind, double learning_rate) {
  dist_optimizer_options_t options = DIST_OPTIMIZER_OPTIONS_INIT;
  options.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE;
  options.kind = kind;
  options.learning_rate = learning_rate;
  return options;
}

#endif /* DIST_TEST_OPTIMIZER_OPTIONS_H */
