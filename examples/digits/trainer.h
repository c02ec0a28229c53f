/* A small MLP (64 -> 32 ReLU -> 10 softmax) trained on the digits with a
 * libdistribute strategy. The training code is the same for every strategy
 * kind: only the strategy handed to digits_train differs. */
#ifndef DIGITS_TRAINER_H
#define DIGITS_TRAINER_H

#include <stdint.h>

#include <distribute/c_api.h>
#include "digits.h"

struct train_options {
  int epochs;             /* default 20 */
  int global_batch_size;  /* default 64 */
  double learning_rate;   /* default 0.05, SGD with momentum 0.9 */
  int verbose;            /* print loss and accuracy per epoch */
};

struct train_report {
  double final_loss;       /* mean training loss of the last epoch */
  double train_accuracy;   /* of the last epoch */
  double test_accuracy;    /* on the 360 held-out digits */
  uint64_t weights_hash;   /* FNV-1a of every weight's bytes (every local copy) */
};

/* Trains on digits[0, count - 360) and tests on the rest. Collective for a
 * multi-worker strategy. Returns DIST_OK or the failing call's status. */
dist_status_t digits_train(dist_strategy_t* strategy, const struct digits* data, const struct train_options* options,
                           struct train_report* report);

/* Prints "<label>: test accuracy ... weights fnv1a64 ..." for the demo to compare. */
void digits_print_report(const char* label, const struct train_report* report);

/* The body of every example program: reads its command line
 * ([epochs] [path of digits.csv.gz]), loads the digits, trains under `strategy`
 * and prints the report under `label`. Returns main's exit status. */
int digits_example_main(int argc, char** argv, dist_strategy_t* strategy, const char* label);

/* Examples: prints the library's message and returns 1 from main on error. */
#define DIGITS_CHECK(call)                                                          \
  do {                                                                              \
    dist_status_t status_ = (call);                                                 \
    if (status_ != DIST_OK) {                                                       \
      fprintf(stderr, "%s: %s\n", dist_status_string(status_), dist_last_error()); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

#endif
