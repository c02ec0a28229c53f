#include "ps_trainer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct step_call {
  const struct ps_model* model;
  const float* xs;
  const int32_t* ys;
  uint64_t rows;
  float gradient_scale;
  double loss;
  int64_t correct;
};

static dist_status_t run_step(void* user_data) {
  struct step_call* c = user_data;
  c->loss = 0;
  c->correct = 0;
  return c->model->step(c->model->state, c->xs, c->ys, c->rows, c->gradient_scale, &c->loss, &c->correct);
}

struct evaluate_call {
  const struct ps_model* model;
  const struct digits* data;
  double accuracy;
};

static dist_status_t run_evaluate(void* user_data) {
  struct evaluate_call* c = user_data;
  const int train_rows = c->data->count - kDigitTestCount;
  return c->model->evaluate(c->model->state, c->data, train_rows, c->data->count, &c->accuracy);
}

static void pause_ms(int ms) {
  const struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  if (ms > 0) nanosleep(&pause, NULL);
}

/* This worker's epochs; totals receives its last epoch's loss sum, correct
 * count and rows. */
static dist_status_t run_epochs(const struct ps_session* session, const struct digits* data,
                                const struct ps_args* args, const struct ps_model* model, dist_input_context_t* input,
                                double totals[3]) {
  const int train_rows = data->count - kDigitTestCount;
  int* order = malloc(sizeof(int) * (size_t)train_rows);
  float* xs = malloc(sizeof(float) * kDigitPixels * kPsGlobalBatch);
  int32_t* ys = malloc(sizeof(int32_t) * kPsGlobalBatch);
  for (int i = 0; i < train_rows; ++i) order[i] = i;
  uint64_t shuffle = 42; /* the same batches on every worker */
  dist_status_t status = DIST_OK;
  for (int epoch = 1; status == DIST_OK && epoch <= args->epochs; ++epoch) {
    digits_shuffle(order, train_rows, &shuffle);
    struct step_call step = {model, xs, ys, 0, 0, 0, 0};
    double loss = 0;
    int64_t correct = 0, rows_seen = 0;
    for (int start = 0; status == DIST_OK && start < train_rows; start += kPsGlobalBatch) {
      const int rows = start + kPsGlobalBatch <= train_rows ? kPsGlobalBatch : train_rows - start;
      int64_t begin = 0, count = 0;
      status = dist_input_context_shard_range(input, rows, &begin, &count);
      if (status != DIST_OK || count == 0) continue;
      for (int64_t s = 0; s < count; ++s) {
        const int sample = order[start + begin + s];
        memcpy(xs + s * kDigitPixels, data->pixels + (size_t)sample * kDigitPixels, sizeof(float) * kDigitPixels);
        ys[s] = data->labels[sample];
      }
      step.rows = (uint64_t)count;
      step.gradient_scale = 1.0f / (float)rows;
      status = ps_session_retry(session, "a training step", run_step, &step);
      loss += step.loss;
      correct += step.correct;
      rows_seen += count;
      pause_ms(args->step_delay_ms);
    }
    if (status != DIST_OK) break;
    printf("epoch %2d  loss %.4f  train accuracy %.4f (this worker's %lld rows)", epoch, loss / (double)rows_seen,
           (double)correct / (double)rows_seen, (long long)rows_seen);
    if (session->worker == 0) {
      struct evaluate_call evaluate = {model, data, 0};
      status = ps_session_retry(session, "pulling the weights", run_evaluate, &evaluate);
      if (status == DIST_OK) printf("  test accuracy %.4f", evaluate.accuracy);
    }
    printf("\n");
    fflush(stdout);
    if (status == DIST_OK) status = ps_session_checkpoint(session, args->checkpoint_dir, epoch);
    totals[0] = loss;
    totals[1] = (double)correct;
    totals[2] = (double)rows_seen;
  }
  free(order);
  free(xs);
  free(ys);
  return status;
}

dist_status_t ps_train(const struct ps_session* session, const struct digits* data, const struct ps_args* args,
                       const struct ps_model* model, const char* label) {
  dist_input_context_t* input = NULL;
  dist_status_t status = dist_strategy_input_context(session->strategy, &input);
  double totals[3] = {0, 0, 0};
  if (status == DIST_OK) status = run_epochs(session, data, args, model, input, totals);
  dist_input_context_destroy(input);
  /* Waits for every worker; then the last epoch over all of them. */
  if (status == DIST_OK) status = ps_session_sum(session, totals, 3);
  if (status != DIST_OK || session->worker != 0) return status;
  struct evaluate_call evaluate = {model, data, 0};
  status = ps_session_retry(session, "pulling the weights", run_evaluate, &evaluate);
  if (status == DIST_OK) {
    printf("%s: final loss %.4f  train accuracy %.4f  test accuracy %.4f\n", label, totals[0] / totals[2],
           totals[1] / totals[2], evaluate.accuracy);
    fflush(stdout);
  }
  return status;
}

int ps_example_begin(int argc, char** argv, int default_epochs, struct ps_args* args, struct digits* data,
                     struct ps_session* session) {
  if (ps_args_parse(argc, argv, default_epochs, args) != 0) return 2;
  if (digits_load(args->data_path, data) != 0) return 1;
  if (ps_session_open(session, args->retry_seconds) != 0) {
    digits_free(data);
    return 1;
  }
  return 0;
}

void ps_example_end(struct digits* data, struct ps_session* session) {
  ps_session_close(session);
  digits_free(data);
}
