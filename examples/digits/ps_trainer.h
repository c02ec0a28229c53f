/* Asynchronous training against parameter servers, shared by the
 * parameter-server examples: every worker walks the same shuffled global
 * batches of the digits and takes its contiguous share of each; a step pulls
 * what it needs, computes and pushes, and is retried as a whole while a server
 * is down (so a push that reached a healthy server before the failure is
 * applied again: at least once, as asynchronous training tolerates). After
 * each epoch worker 0 evaluates the weights the servers hold and saves a
 * checkpoint when asked. */
#ifndef DIGITS_PS_TRAINER_H
#define DIGITS_PS_TRAINER_H

#include "digits.h"
#include "ps_session.h"

enum { kPsGlobalBatch = 64 };

struct ps_model {
  void* state;
  /* One attempt of a step on `rows` images: pull, compute the gradient of the
   * summed loss times gradient_scale, push. Sets *loss (summed) and *correct
   * for these rows. */
  dist_status_t (*step)(void* state, const float* xs, const int32_t* ys, uint64_t rows, float gradient_scale,
                        double* loss, int64_t* correct);
  /* Pulls the weights and classifies digits[first, last). */
  dist_status_t (*evaluate)(void* state, const struct digits* data, int first, int last, double* accuracy);
};

/* Trains for args->epochs epochs (gradient_scale = 1 / global batch rows, so
 * the workers' pushes of one batch add up to its mean gradient), waits for
 * every worker, and worker 0 prints "<label>: final loss L  train accuracy A
 * test accuracy T" (the last epoch's loss and accuracy over all workers; the
 * test accuracy of the final weights). */
dist_status_t ps_train(const struct ps_session* session, const struct digits* data, const struct ps_args* args,
                       const struct ps_model* model, const char* label);

/* How each example's main() begins: its command line, the digits and the
 * session. Returns 0, or main's exit code (2: bad usage, 1: no data or no
 * session) with nothing left to free. ps_example_end frees both. */
int ps_example_begin(int argc, char** argv, int default_epochs, struct ps_args* args, struct digits* data,
                     struct ps_session* session);
void ps_example_end(struct digits* data, struct ps_session* session);

#endif
