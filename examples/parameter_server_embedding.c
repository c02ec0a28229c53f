/* A sparse embedding model under ParameterServerStrategy, on the digits. The
 * 64 pixels' intensities (0..16) are categorical features with ids
 * pixel * 17 + level, 64 x 17 = 1088 ids; the embedding table holds one row of
 * 10 class scores per id and is split across both servers. An image's logits
 * are a class bias plus the sum of the rows of its features, thermometer-coded:
 * a pixel at level v contributes the rows of levels 0..v, so neighbouring
 * levels share what they learn (plain one-hot ids reach about 0.86 test
 * accuracy here, this about 0.90). It is a linear model on sparse features, as
 * the wide part of a recommender is. A step pulls only the rows its images use
 * (dist_variable_read_rows) and pushes gradients for those rows only
 * (dist_variable_apply_rows: the servers' Adam updates them and their moments,
 * nothing else).
 *
 *   dist-run -n 2 --ps 2 --ps-server -- build/examples/parameter_server_embedding [epochs]
 *            [--checkpoint-dir DIR] [--data digits.csv.gz] [--step-delay-ms MS]
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "digits/ps_trainer.h"

enum { kLevels = 17, kIds = kDigitPixels * kLevels };

struct model {
  dist_variable_t* table; /* [kIds][kDigitClasses] */
  dist_variable_t* bias;  /* [kDigitClasses] */
  /* One step's rows: the distinct ids its images use, in first-use order, and
   * where each id sits in that list (-1: unused). */
  int64_t ids[kIds];
  int32_t slot_of[kIds];
  float rows[kIds * kDigitClasses], row_grads[kIds * kDigitClasses];
  float bias_value[kDigitClasses], bias_grad[kDigitClasses];
  uint64_t steps, rows_pulled; /* for the average this prints at the end */
};

static int64_t feature_id(int pixel, float intensity) {
  return (int64_t)pixel * kLevels + (int64_t)lrintf(intensity * (kLevels - 1));
}

static dist_status_t create_model(const struct ps_session* session, struct model* model) {
  dist_optimizer_options_t adam = DIST_OPTIMIZER_OPTIONS_INIT;
  adam.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE;
  adam.kind = DIST_OPTIMIZER_ADAM;
  adam.learning_rate = 0.005;
  static const int64_t table_shape[2] = {kIds, kDigitClasses}, bias_shape[1] = {kDigitClasses};
  dist_variable_options_t table = DIST_VARIABLE_OPTIONS_INIT;
  table.field_mask =
      DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_OPTIMIZER | DIST_VARIABLE_OPT_NUM_SHARDS;
  table.name = "pixel_embedding";
  table.shape = table_shape;
  table.rank = 2;
  table.optimizer = &adam;
  table.num_shards = 2; /* ids 0..543 on one server, 544..1087 on the other */
  dist_variable_options_t bias = DIST_VARIABLE_OPTIONS_INIT;
  bias.field_mask = DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_OPTIMIZER;
  bias.name = "class_bias";
  bias.shape = bias_shape;
  bias.rank = 1;
  bias.optimizer = &adam;
  /* Zero initial values: the loss is convex, no symmetry to break. */
  dist_status_t status = ps_session_create_variable(session, &table, &model->table);
  if (status == DIST_OK) status = ps_session_create_variable(session, &bias, &model->bias);
  for (int i = 0; i < kIds; ++i) model->slot_of[i] = -1;
  return status;
}

/* Class probabilities of one image from its rows; returns its loss. */
static double image_probs(const struct model* model, const float* x, int32_t label, float* probs) {
  float top = -INFINITY, total = 0;
  for (int k = 0; k < kDigitClasses; ++k) probs[k] = model->bias_value[k];
  for (int i = 0; i < kDigitPixels; ++i) {
    for (int64_t id = feature_id(i, 0); id <= feature_id(i, x[i]); ++id) {
      const float* row = model->rows + (size_t)model->slot_of[id] * kDigitClasses;
      for (int k = 0; k < kDigitClasses; ++k) probs[k] += row[k];
    }
  }
  for (int k = 0; k < kDigitClasses; ++k) top = probs[k] > top ? probs[k] : top;
  for (int k = 0; k < kDigitClasses; ++k) total += probs[k] = expf(probs[k] - top);
  for (int k = 0; k < kDigitClasses; ++k) probs[k] /= total;
  return -log(probs[label] + 1e-12);
}

/* Collects the distinct ids xs[0, rows) use into model->ids; returns how many. */
static uint64_t collect_ids(struct model* model, const float* xs, uint64_t rows) {
  for (int i = 0; i < kIds; ++i) model->slot_of[i] = -1;
  uint64_t distinct = 0;
  for (uint64_t s = 0; s < rows; ++s) {
    for (int i = 0; i < kDigitPixels; ++i) {
      for (int64_t id = feature_id(i, 0); id <= feature_id(i, xs[s * kDigitPixels + i]); ++id) {
        if (model->slot_of[id] >= 0) continue;
        model->slot_of[id] = (int32_t)distinct;
        model->ids[distinct++] = id;
      }
    }
  }
  return distinct;
}

static dist_status_t pull(struct model* model, uint64_t distinct) {
  const dist_buffer_t rows = {model->rows, distinct * kDigitClasses, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  const dist_buffer_t bias = {model->bias_value, kDigitClasses, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  dist_status_t status = dist_variable_read_rows(model->table, NULL, model->ids, distinct, &rows);
  if (status == DIST_OK) status = dist_variable_read(model->bias, NULL, &bias);
  return status;
}

static dist_status_t train_step(void* state, const float* xs, const int32_t* ys, uint64_t rows, float gradient_scale,
                                double* loss, int64_t* correct) {
  struct model* model = state;
  const uint64_t distinct = collect_ids(model, xs, rows);
  dist_status_t status = pull(model, distinct);
  if (status != DIST_OK) return status;
  memset(model->row_grads, 0, sizeof(float) * distinct * kDigitClasses);
  memset(model->bias_grad, 0, sizeof model->bias_grad);
  for (uint64_t s = 0; s < rows; ++s) {
    const float* x = xs + s * kDigitPixels;
    float probs[kDigitClasses];
    *loss += image_probs(model, x, ys[s], probs);
    *correct += digits_argmax(probs) == ys[s];
    for (int k = 0; k < kDigitClasses; ++k) {
      const float dlogit = (probs[k] - (k == ys[s])) * gradient_scale;
      model->bias_grad[k] += dlogit;
      for (int i = 0; i < kDigitPixels; ++i) {
        for (int64_t id = feature_id(i, 0); id <= feature_id(i, x[i]); ++id) {
          model->row_grads[(size_t)model->slot_of[id] * kDigitClasses + k] += dlogit;
        }
      }
    }
  }
  const dist_buffer_t row_grads = {model->row_grads, distinct * kDigitClasses, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  const dist_buffer_t bias_grad = {model->bias_grad, kDigitClasses, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  status = dist_variable_apply_rows(model->table, NULL, model->ids, distinct, &row_grads);
  if (status == DIST_OK) status = dist_variable_apply_gradient(model->bias, NULL, &bias_grad);
  if (status == DIST_OK) {
    ++model->steps;
    model->rows_pulled += distinct;
  }
  return status;
}

/* Pulls the whole table (a dense read) and classifies data[first, last). */
static dist_status_t evaluate(void* state, const struct digits* data, int first, int last, double* accuracy) {
  struct model* model = state;
  for (int i = 0; i < kIds; ++i) {
    model->ids[i] = i;
    model->slot_of[i] = i;
  }
  const dist_buffer_t table = {model->rows, (uint64_t)kIds * kDigitClasses, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  const dist_buffer_t bias = {model->bias_value, kDigitClasses, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  dist_status_t status = dist_variable_read(model->table, NULL, &table);
  if (status == DIST_OK) status = dist_variable_read(model->bias, NULL, &bias);
  if (status != DIST_OK) return status;
  int right = 0;
  for (int s = first; s < last; ++s) {
    float probs[kDigitClasses];
    image_probs(model, data->pixels + (size_t)s * kDigitPixels, data->labels[s], probs);
    right += digits_argmax(probs) == data->labels[s];
  }
  *accuracy = last > first ? (double)right / (last - first) : 0;
  return DIST_OK;
}

int main(int argc, char** argv) {
  struct ps_args args;
  struct digits data;
  struct ps_session session;
  const int begun = ps_example_begin(argc, argv, 10, &args, &data, &session);
  if (begun != 0) return begun;
  static struct model model;
  dist_status_t status = create_model(&session, &model);
  if (status == DIST_OK && session.worker == 0) {
    int32_t server = 0;
    uint64_t first = 0, rows = 0;
    printf("%d workers; embedding table %d x %d:", (int)session.workers, kIds, kDigitClasses);
    for (int32_t s = 0; status == DIST_OK && s < 2; ++s) {
      status = dist_variable_shard(model.table, s, &server, &first, &rows);
      printf("  rows %llu-%llu on ps:%d", (unsigned long long)first, (unsigned long long)(first + rows - 1), (int)server);
    }
    printf("\n");
  }
  const struct ps_model ops = {&model, train_step, evaluate};
  if (status == DIST_OK) status = ps_train(&session, &data, &args, &ops, "parameter_server_embedding");
  if (status == DIST_OK && model.steps > 0) {
    printf("worker %d: a step pulled and pushed %.0f of the %d table rows on average\n", (int)session.worker,
           (double)model.rows_pulled / (double)model.steps, kIds);
  }
  const int exit_code = status == DIST_OK ? 0 : ps_session_fail("parameter_server_embedding", status);
  dist_variable_destroy(model.table);
  dist_variable_destroy(model.bias);
  ps_example_end(&data, &session);
  return exit_code;
}
