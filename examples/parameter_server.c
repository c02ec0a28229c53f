/* ParameterServerStrategy: the digits MLP (examples/digits/mlp.c) with its
 * weights on the parameter servers. Each worker pulls the weights, computes
 * the gradient of its share of every global batch and pushes it; the servers
 * apply it with their own momentum optimizer, asynchronously to the other
 * workers. The first layer's kernel is split across both servers, the other
 * weights are placed round robin. After each epoch worker 0 tests the weights
 * the servers hold and, given a directory, saves a checkpoint there; a server
 * that goes away is waited for (see digits/ps_session.c).
 *
 *   dist-run -n 2 --ps 2 --ps-server -- build/examples/parameter_server [epochs]
 *            [--checkpoint-dir DIR] [--data digits.csv.gz] [--step-delay-ms MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digits/mlp.h"
#include "digits/ps_session.h"

enum { kGlobalBatch = 64 };

struct model {
  dist_variable_t* vars[kMlpParams];
};

struct create_call {
  dist_strategy_t* strategy;
  dist_variable_options_t options;
  dist_variable_t** variable;
};

static dist_status_t create_variable(void* user_data) {
  struct create_call* call = user_data;
  return dist_variable_create(call->strategy, &call->options, call->variable);
}

/* Every worker creates the same variables in the same order, so they place
 * them alike; the first creation on the servers sets the initial value. */
static dist_status_t create_model(const struct ps_session* session, struct model* model) {
  static struct mlp_params init;
  mlp_init(&init, 1234); /* the weights worker 0 of the mirrored examples starts from */
  dist_optimizer_options_t momentum = DIST_OPTIMIZER_OPTIONS_INIT;
  momentum.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE | DIST_OPTIMIZER_OPT_MOMENTUM;
  momentum.kind = DIST_OPTIMIZER_MOMENTUM;
  momentum.learning_rate = 0.05;
  momentum.momentum = 0.9;
  for (int i = 0; i < kMlpParams; ++i) {
    struct create_call call = {session->strategy, DIST_VARIABLE_OPTIONS_INIT, &model->vars[i]};
    call.options.field_mask =
        DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_OPTIMIZER;
    call.options.name = kMlpParamName[i];
    call.options.shape = kMlpParamShape[i];
    call.options.rank = kMlpParamShape[i][1] == 0 ? 1 : 2;
    call.options.initial_value = init.p[i];
    call.options.optimizer = &momentum;
    if (i == kMlpW1) { /* the largest weight: half of its rows on each server */
      call.options.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS;
      call.options.num_shards = 2;
    }
    const dist_status_t status = ps_session_retry(session, "creating a variable", create_variable, &call);
    if (status != DIST_OK) return status;
  }
  return DIST_OK;
}

static dist_status_t print_placement(const struct model* model) {
  for (int i = 0; i < kMlpParams; ++i) {
    int32_t shards = 0;
    dist_status_t status = dist_variable_num_shards(model->vars[i], &shards);
    printf("%-14s", kMlpParamName[i]);
    for (int32_t s = 0; status == DIST_OK && s < shards; ++s) {
      int32_t server = 0;
      uint64_t first = 0, rows = 0;
      status = dist_variable_shard(model->vars[i], s, &server, &first, &rows);
      printf("  rows %2llu-%2llu on ps:%d", (unsigned long long)first, (unsigned long long)(first + rows - 1),
             (int)server);
    }
    printf("\n");
    if (status != DIST_OK) return status;
  }
  fflush(stdout);
  return DIST_OK;
}

/* One step: pull, compute on this worker's rows, push. Retried as a whole
 * while a server is down, so its outputs are set only by a complete attempt. */
struct step_call {
  const struct model* model;
  const float* xs;
  const int32_t* ys;
  uint64_t rows;
  float gradient_scale; /* 1 / global batch rows: the workers' pushes add up to the batch's mean gradient */
  struct mlp_params weights, grads;
  double loss;
  int64_t correct;
};

static dist_status_t pull_weights(const struct model* model, struct mlp_params* weights) {
  mlp_bind(weights);
  for (int i = 0; i < kMlpParams; ++i) {
    const dist_buffer_t b = {weights->p[i], kMlpParamCount[i], DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    const dist_status_t status = dist_variable_read(model->vars[i], NULL, &b);
    if (status != DIST_OK) return status;
  }
  return DIST_OK;
}

static dist_status_t train_step(void* user_data) {
  struct step_call* step = user_data;
  dist_status_t status = pull_weights(step->model, &step->weights);
  if (status != DIST_OK) return status;
  mlp_bind(&step->grads);
  step->loss = 0;
  step->correct = 0;
  mlp_backward(&step->weights, step->xs, step->ys, step->rows, &step->grads, &step->loss, &step->correct);
  for (int i = 0; i < kMlpAllParams; ++i) step->grads.storage[i] *= step->gradient_scale;
  for (int i = 0; status == DIST_OK && i < kMlpParams; ++i) {
    const dist_buffer_t g = {step->grads.p[i], kMlpParamCount[i], DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    status = dist_variable_apply_gradient(step->model->vars[i], NULL, &g);
  }
  return status;
}

struct pull_call {
  const struct model* model;
  struct mlp_params weights;
};

static dist_status_t pull_step(void* user_data) {
  struct pull_call* call = user_data;
  return pull_weights(call->model, &call->weights);
}

static void pause_ms(int ms) {
  const struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  if (ms > 0) nanosleep(&pause, NULL);
}

/* The epochs of this worker: the same shuffled global batches on every
 * worker, each worker taking its contiguous share of every batch. totals
 * receives this worker's last-epoch loss sum, correct count and rows. */
static dist_status_t train(const struct ps_session* session, const struct model* model, const struct digits* data,
                           const struct ps_args* args, double totals[3]) {
  const int train_rows = data->count - kDigitTestCount;
  dist_input_context_t* input = NULL;
  dist_status_t status = dist_strategy_input_context(session->strategy, &input);
  int* order = malloc(sizeof(int) * (size_t)train_rows);
  float* xs = malloc(sizeof(float) * kDigitPixels * kGlobalBatch);
  int32_t* ys = malloc(sizeof(int32_t) * kGlobalBatch);
  struct step_call* step = calloc(1, sizeof *step);
  struct pull_call* pull = calloc(1, sizeof *pull);
  for (int i = 0; i < train_rows; ++i) order[i] = i;
  uint64_t shuffle = 42;
  for (int epoch = 1; status == DIST_OK && epoch <= args->epochs; ++epoch) {
    digits_shuffle(order, train_rows, &shuffle);
    double loss = 0;
    int64_t correct = 0, rows_seen = 0;
    for (int start = 0; status == DIST_OK && start < train_rows; start += kGlobalBatch) {
      const int rows = start + kGlobalBatch <= train_rows ? kGlobalBatch : train_rows - start;
      int64_t begin = 0, count = 0;
      status = dist_input_context_shard_range(input, rows, &begin, &count);
      if (status != DIST_OK || count == 0) continue;
      for (int64_t s = 0; s < count; ++s) {
        const int sample = order[start + begin + s];
        memcpy(xs + s * kDigitPixels, data->pixels + (size_t)sample * kDigitPixels, sizeof(float) * kDigitPixels);
        ys[s] = data->labels[sample];
      }
      step->model = model;
      step->xs = xs;
      step->ys = ys;
      step->rows = (uint64_t)count;
      step->gradient_scale = 1.0f / (float)rows;
      status = ps_session_retry(session, "a training step", train_step, step);
      loss += step->loss;
      correct += step->correct;
      rows_seen += count;
      pause_ms(args->step_delay_ms);
    }
    if (status != DIST_OK) break;
    printf("epoch %2d  loss %.4f  train accuracy %.4f (this worker's %lld rows)", epoch, loss / (double)rows_seen,
           (double)correct / (double)rows_seen, (long long)rows_seen);
    if (session->worker == 0) {
      pull->model = model;
      status = ps_session_retry(session, "pulling the weights", pull_step, pull);
      if (status == DIST_OK) printf("  test accuracy %.4f", mlp_accuracy(&pull->weights, data, train_rows, data->count));
    }
    printf("\n");
    fflush(stdout);
    if (status == DIST_OK) status = ps_session_checkpoint(session, args->checkpoint_dir, epoch);
    totals[0] = loss;
    totals[1] = (double)correct;
    totals[2] = (double)rows_seen;
  }
  dist_input_context_destroy(input);
  free(order);
  free(xs);
  free(ys);
  free(step);
  free(pull);
  return status;
}

int main(int argc, char** argv) {
  struct ps_args args;
  if (ps_args_parse(argc, argv, 20, &args) != 0) return 2;
  struct digits data;
  if (digits_load(args.data_path, &data) != 0) return 1;
  struct ps_session session;
  if (ps_session_open(&session, args.retry_seconds) != 0) {
    digits_free(&data);
    return 1;
  }
  struct model model;
  memset(&model, 0, sizeof model);
  int exit_code = 0;
  dist_status_t status = create_model(&session, &model);
  if (status == DIST_OK && session.worker == 0) {
    printf("%d workers; the weights on the parameter servers:\n", (int)session.workers);
    status = print_placement(&model);
  }
  double totals[3] = {0, 0, 0};
  if (status == DIST_OK) status = train(&session, &model, &data, &args, totals);
  /* Waits for every worker; then the last epoch's loss and accuracy over all of them. */
  if (status == DIST_OK) status = ps_session_sum(&session, totals, 3);
  struct pull_call final_weights = {&model, {{0}, {0}}};
  if (status == DIST_OK && session.worker == 0) status = ps_session_retry(&session, "pulling the weights", pull_step, &final_weights);
  if (status != DIST_OK) {
    exit_code = ps_session_fail("parameter_server", status);
  } else if (session.worker == 0) {
    const int train_rows = data.count - kDigitTestCount;
    printf("parameter_server: final loss %.4f  train accuracy %.4f  test accuracy %.4f\n", totals[0] / totals[2],
           totals[1] / totals[2], mlp_accuracy(&final_weights.weights, &data, train_rows, data.count));
  } else {
    printf("worker %d: done\n", (int)session.worker);
  }
  fflush(stdout);
  for (int i = 0; i < kMlpParams; ++i) dist_variable_destroy(model.vars[i]);
  ps_session_close(&session);
  digits_free(&data);
  return exit_code;
}
