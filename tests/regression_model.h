/* The training code of the strategy tests: linear regression towards the
 * weights 1, 2, ..., kRegressionFeatures on features sin(0.37 s (f + 1) + f)
 * (independent for different f). Each replica computes the mean gradient of
 * its share of the step's global batch into grads[local index]; the same code
 * runs under every strategy. Shared by the single-process suite and the
 * multi-process worker. */
#ifndef DIST_REGRESSION_MODEL_H
#define DIST_REGRESSION_MODEL_H

#include <math.h>
#include <string.h>

#include <distribute/c_api.h>

enum { kRegressionFeatures = 8, kRegressionBatch = 256, kRegressionMaxReplicas = 8 };

struct regression {
  dist_variable_t* w;
  int step; /* shifts the samples, so that every step sees a new batch */
  float grads[kRegressionMaxReplicas][kRegressionFeatures];
};

static inline float regression_feature(int sample, int f) { return (float)sin(sample * 0.37 * (f + 1) + f); }

/* A dist_replica_fn_t; user_data is a struct regression. */
static inline dist_status_t regression_step(dist_replica_context_t* replica, void* user_data) {
  struct regression* job = (struct regression*)user_data;
  int32_t id = 0, n = 1, r = 0;
  dist_status_t status = dist_replica_id(replica, &id);
  if (status == DIST_OK) status = dist_replica_local_index(replica, &r);
  if (status == DIST_OK) status = dist_replica_num_replicas_in_sync(replica, &n);
  float w[kRegressionFeatures];
  dist_buffer_t wb = {w, kRegressionFeatures, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  if (status == DIST_OK) status = dist_variable_read(job->w, replica, &wb);
  if (status != DIST_OK) return status;
  const int per = kRegressionBatch / n;
  memset(job->grads[r], 0, sizeof job->grads[r]);
  for (int k = id * per; k < (id + 1) * per; ++k) {
    float err = 0;
    for (int f = 0; f < kRegressionFeatures; ++f) err += (w[f] - (float)(f + 1)) * regression_feature(k + job->step, f);
    for (int f = 0; f < kRegressionFeatures; ++f) {
      job->grads[r][f] += 2 * err * regression_feature(k + job->step, f) / (float)per;
    }
  }
  return DIST_OK;
}

/* Trains a fresh variable for `steps` steps of run() + apply_gradients with
 * the given optimizer and reads the weights into `weights`. */
static inline dist_status_t regression_train(dist_strategy_t* strategy, const dist_optimizer_options_t* options,
                                             int steps, float weights[kRegressionFeatures]) {
  struct regression job;
  memset(&job, 0, sizeof job);
  int64_t shape[1] = {kRegressionFeatures};
  dist_variable_options_t vo = DIST_VARIABLE_OPTIONS_INIT;
  vo.field_mask = DIST_VARIABLE_OPT_SHAPE;
  vo.shape = shape;
  vo.rank = 1;
  dist_optimizer_t* optimizer = NULL;
  int32_t local = 0;
  dist_status_t status = dist_strategy_num_local_replicas(strategy, &local);
  if (status == DIST_OK && local > kRegressionMaxReplicas) status = DIST_ERR_INVALID_ARGUMENT;
  if (status == DIST_OK) status = dist_variable_create(strategy, &vo, &job.w);
  if (status == DIST_OK) status = dist_optimizer_create(options, &optimizer);
  dist_buffer_t grads[kRegressionMaxReplicas];
  for (int r = 0; r < local && r < kRegressionMaxReplicas; ++r) {
    grads[r] = (dist_buffer_t){job.grads[r], kRegressionFeatures, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  }
  for (job.step = 0; status == DIST_OK && job.step < steps; ++job.step) {
    status = dist_strategy_run(strategy, regression_step, &job);
    if (status == DIST_OK) status = dist_strategy_apply_gradients(strategy, &job.w, grads, 1, optimizer);
  }
  dist_buffer_t out = {weights, kRegressionFeatures, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  if (status == DIST_OK) status = dist_variable_read(job.w, NULL, &out);
  dist_optimizer_destroy(optimizer);
  dist_variable_destroy(job.w);
  return status;
}

#endif /* DIST_REGRESSION_MODEL_H */
