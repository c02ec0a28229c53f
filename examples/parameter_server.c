/* ParameterServerStrategy: the digits MLP (examples/digits/mlp.c) with its
 * weights on the parameter servers. Each worker pulls the weights, computes
 * the gradient of its share of every global batch and pushes it; the servers
 * apply it with their own momentum optimizer, asynchronously to the other
 * workers. The first layer's kernel is split across both servers, the other
 * weights are placed round robin. The training loop, worker 0's test and
 * checkpoint after each epoch, and waiting out a server that goes away are in
 * digits/ps_trainer.c and digits/ps_session.c.
 *
 *   dist-run -n 2 --ps 2 --ps-server -- build/examples/parameter_server [epochs]
 *            [--checkpoint-dir DIR] [--data digits.csv.gz] [--step-delay-ms MS]
 */
#include <stdio.h>
#include <string.h>

#include "digits/mlp.h"
#include "digits/ps_trainer.h"

struct model {
  dist_variable_t* vars[kMlpParams];
  struct mlp_params weights, grads; /* this worker's pulled copy and its gradients */
};

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
    dist_variable_options_t v = DIST_VARIABLE_OPTIONS_INIT;
    v.field_mask =
        DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_OPTIMIZER;
    v.name = kMlpParamName[i];
    v.shape = kMlpParamShape[i];
    v.rank = kMlpParamShape[i][1] == 0 ? 1 : 2;
    v.initial_value = init.p[i];
    v.optimizer = &momentum;
    if (i == kMlpW1) { /* the largest weight: half of its rows on each server */
      v.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS;
      v.num_shards = 2;
    }
    const dist_status_t status = ps_session_create_variable(session, &v, &model->vars[i]);
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

static dist_status_t pull_weights(const struct model* model, struct mlp_params* weights) {
  mlp_bind(weights);
  for (int i = 0; i < kMlpParams; ++i) {
    const dist_buffer_t b = {weights->p[i], kMlpParamCount[i], DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    const dist_status_t status = dist_variable_read(model->vars[i], NULL, &b);
    if (status != DIST_OK) return status;
  }
  return DIST_OK;
}

/* Pull every weight, backpropagate this worker's rows, push every gradient. */
static dist_status_t train_step(void* state, const float* xs, const int32_t* ys, uint64_t rows, float gradient_scale,
                                double* loss, int64_t* correct) {
  struct model* model = state;
  dist_status_t status = pull_weights(model, &model->weights);
  if (status != DIST_OK) return status;
  mlp_bind(&model->grads);
  mlp_backward(&model->weights, xs, ys, rows, &model->grads, loss, correct);
  for (int i = 0; i < kMlpAllParams; ++i) model->grads.storage[i] *= gradient_scale;
  for (int i = 0; status == DIST_OK && i < kMlpParams; ++i) {
    const dist_buffer_t g = {model->grads.p[i], kMlpParamCount[i], DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    status = dist_variable_apply_gradient(model->vars[i], NULL, &g);
  }
  return status;
}

static dist_status_t evaluate(void* state, const struct digits* data, int first, int last, double* accuracy) {
  struct model* model = state;
  const dist_status_t status = pull_weights(model, &model->weights);
  if (status == DIST_OK) *accuracy = mlp_accuracy(&model->weights, data, first, last);
  return status;
}

int main(int argc, char** argv) {
  struct ps_args args;
  struct digits data;
  struct ps_session session;
  const int begun = ps_example_begin(argc, argv, 20, &args, &data, &session);
  if (begun != 0) return begun;
  static struct model model;
  dist_status_t status = create_model(&session, &model);
  if (status == DIST_OK && session.worker == 0) {
    printf("%d workers; the weights on the parameter servers:\n", (int)session.workers);
    status = print_placement(&model);
  }
  const struct ps_model ops = {&model, train_step, evaluate};
  if (status == DIST_OK) status = ps_train(&session, &data, &args, &ops, "parameter_server");
  const int exit_code = status == DIST_OK ? 0 : ps_session_fail("parameter_server", status);
  for (int i = 0; i < kMlpParams; ++i) dist_variable_destroy(model.vars[i]);
  ps_example_end(&data, &session);
  return exit_code;
}
