#include "trainer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"
#ifdef DIGITS_HAVE_CUDA
#include "mlp_cuda.h"
#endif

enum { kMaxReplicas = 64 };

#define TRY(call)                                        \
  do {                                                   \
    dist_status_t status_ = (call);                      \
    if (status_ != DIST_OK) return status_;              \
  } while (0)

static dist_buffer_t f32_buffer(float* data, uint64_t count) {
  dist_buffer_t b = {data, count, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  return b;
}

/* What every replica of one step shares: its inputs and gradient outputs. */
struct step {
  dist_variable_t* vars[kMlpParams];
  dist_variable_t* loss_sum; /* ON_READ, SUM: the epoch's summed loss */
  dist_variable_t* correct;  /* ON_READ, SUM: the epoch's correct predictions */
  dist_buffer_t x[kMaxReplicas], y[kMaxReplicas]; /* this step's rows per replica */
  double gradient_scale;   /* replicas in sync / global rows: MEAN then gives the global mean */
  struct mlp_params grads[kMaxReplicas];
  int max_rows;            /* the global batch size: no replica gets more rows */
#ifdef DIGITS_HAVE_CUDA
  /* A GPU replica's weights, gradients and rows on its device, made by its
   * first step on its thread (where its device is current). */
  struct gpu_replica {
    int ready;
    float *params, *grads, *xs;
    int32_t* ys;
    struct mlp_cuda* mlp;
    void* stream; /* the replica's, dist_replica_stream */
  } gpu[kMaxReplicas];
#endif
};

#ifdef DIGITS_HAVE_CUDA
static dist_status_t cuda_failed(const char* what, cudaError_t error) {
  fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
  return DIST_ERR_INTERNAL;
}

#define CUDA_TRY(what, call)                                       \
  do {                                                             \
    cudaError_t error_ = (call);                                   \
    if (error_ != cudaSuccess) return cuda_failed((what), error_); \
  } while (0)

/* replica_step on a GPU replica: the weights read into device memory, the
 * rows copied there, the pass run by the device (mlp_cuda.h); the gradients
 * stay on the device for apply_gradients. Everything on the replica's stream. */
static dist_status_t replica_step_on_gpu(dist_replica_context_t* replica, struct step* step, int r) {
  struct gpu_replica* g = &step->gpu[r];
  if (!g->ready) {
    TRY(dist_replica_stream(replica, &g->stream));
    CUDA_TRY("cudaMalloc", cudaMalloc((void**)&g->params, sizeof(float) * kMlpAllParams));
    CUDA_TRY("cudaMalloc", cudaMalloc((void**)&g->grads, sizeof(float) * kMlpAllParams));
    CUDA_TRY("cudaMalloc", cudaMalloc((void**)&g->xs, sizeof(float) * kDigitPixels * (size_t)step->max_rows));
    CUDA_TRY("cudaMalloc", cudaMalloc((void**)&g->ys, sizeof(int32_t) * (size_t)step->max_rows));
    CUDA_TRY("mlp_cuda_create", mlp_cuda_create(step->max_rows, &g->mlp));
    g->ready = 1;
  }
  cudaStream_t stream = (cudaStream_t)g->stream;
  float* at = g->params;
  for (int i = 0; i < kMlpParams; ++i) {
    dist_buffer_t b = {at, kMlpParamCount[i], DIST_DTYPE_F32, DIST_MEMORY_CUDA, g->stream};
    TRY(dist_variable_read(step->vars[i], replica, &b));
    at += kMlpParamCount[i];
  }
  const int rows = (int)step->y[r].count;
  CUDA_TRY("cudaMemcpyAsync", cudaMemcpyAsync(g->xs, step->x[r].data, sizeof(float) * kDigitPixels * (size_t)rows,
                                              cudaMemcpyHostToDevice, stream));
  CUDA_TRY("cudaMemcpyAsync",
           cudaMemcpyAsync(g->ys, step->y[r].data, sizeof(int32_t) * (size_t)rows, cudaMemcpyHostToDevice, stream));
  double loss = 0;
  int64_t correct = 0;
  CUDA_TRY("the digits pass on the GPU", mlp_cuda_backward(g->mlp, g->params, g->xs, g->ys, rows,
                                                           (float)step->gradient_scale, g->grads, &loss, &correct,
                                                           stream));
  dist_buffer_t lb = {&loss, 1, DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
  dist_buffer_t cb = {&correct, 1, DIST_DTYPE_I64, DIST_MEMORY_HOST, NULL};
  TRY(dist_variable_assign_add(step->loss_sum, replica, &lb));
  return dist_variable_assign_add(step->correct, replica, &cb);
}

static void free_gpu_replicas(struct step* step) {
  for (int r = 0; r < kMaxReplicas; ++r) {
    struct gpu_replica* g = &step->gpu[r];
    if (!g->ready) continue;
    cudaFree(g->params);
    cudaFree(g->grads);
    cudaFree(g->xs);
    cudaFree(g->ys);
    mlp_cuda_destroy(g->mlp);
    g->ready = 0;
  }
}
#endif

/* One replica: read the mirrored weights, forward and backward its rows. */
static dist_status_t replica_step(dist_replica_context_t* replica, void* user_data) {
  struct step* step = user_data;
  int32_t r = 0;
  TRY(dist_replica_local_index(replica, &r));
#ifdef DIGITS_HAVE_CUDA
  int32_t device = -1;
  TRY(dist_replica_device(replica, &device));
  if (device >= 0) return replica_step_on_gpu(replica, step, r);
#endif
  struct mlp_params m;
  mlp_bind(&m);
  for (int i = 0; i < kMlpParams; ++i) {
    dist_buffer_t b = f32_buffer(m.p[i], kMlpParamCount[i]);
    TRY(dist_variable_read(step->vars[i], replica, &b));
  }
  struct mlp_params* g = &step->grads[r];
  mlp_bind(g);
  double loss = 0;
  int64_t correct = 0;
  mlp_backward(&m, step->x[r].data, step->y[r].data, step->y[r].count, g, &loss, &correct);
  for (int i = 0; i < kMlpAllParams; ++i) g->storage[i] *= (float)step->gradient_scale;
  /* Metrics: each replica adds to its own copy; reads aggregate them. */
  dist_buffer_t lb = {&loss, 1, DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
  dist_buffer_t cb = {&correct, 1, DIST_DTYPE_I64, DIST_MEMORY_HOST, NULL};
  TRY(dist_variable_assign_add(step->loss_sum, replica, &lb));
  return dist_variable_assign_add(step->correct, replica, &cb);
}

static uint64_t fnv1a(uint64_t hash, const void* data, size_t bytes) {
  const unsigned char* p = data;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

/* FNV-1a of copy 0 of every weight; fails if another local copy differs. */
static dist_status_t hash_weights(struct step* step, uint64_t* hash) {
  *hash = 1469598103934665603ull;
  static float first[kDigitPixels * kMlpHidden], other[kDigitPixels * kMlpHidden];
  for (int i = 0; i < kMlpParams; ++i) {
    int32_t copies = 0;
    TRY(dist_variable_num_copies(step->vars[i], &copies));
    dist_buffer_t b0 = f32_buffer(first, kMlpParamCount[i]), b = f32_buffer(other, kMlpParamCount[i]);
    TRY(dist_variable_read_copy(step->vars[i], 0, &b0));
    for (int32_t c = 1; c < copies; ++c) {
      TRY(dist_variable_read_copy(step->vars[i], c, &b));
      if (memcmp(first, other, sizeof(float) * kMlpParamCount[i]) != 0) {
        fprintf(stderr, "copy %d of weight %d differs from copy 0\n", (int)c, i);
        return DIST_ERR_INTERNAL;
      }
    }
    *hash = fnv1a(*hash, first, sizeof(float) * kMlpParamCount[i]);
  }
  return DIST_OK;
}

static dist_status_t create_model(dist_strategy_t* strategy, struct step* step) {
  int32_t worker = 0, workers = 1;
  TRY(dist_strategy_worker_index(strategy, &worker, &workers));
  /* Each worker draws different initial weights; creation broadcasts worker 0's. */
  uint64_t seed = 1234 + (uint64_t)worker;
  struct mlp_params init;
  mlp_init(&init, seed);
  for (int i = 0; i < kMlpParams; ++i) {
    dist_variable_options_t v = DIST_VARIABLE_OPTIONS_INIT;
    v.field_mask = DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
    v.name = kMlpParamName[i];
    v.shape = kMlpParamShape[i];
    v.rank = kMlpParamShape[i][1] == 0 ? 1 : 2;
    v.initial_value = init.p[i];
    TRY(dist_variable_create(strategy, &v, &step->vars[i]));
  }
  dist_variable_options_t metric = DIST_VARIABLE_OPTIONS_INIT;
  metric.field_mask = DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_SYNCHRONIZATION |
                      DIST_VARIABLE_OPT_AGGREGATION;
  metric.synchronization = DIST_SYNC_ON_READ;
  metric.aggregation = DIST_AGGREGATION_SUM;
  metric.name = "loss_sum";
  metric.dtype = DIST_DTYPE_F64;
  TRY(dist_variable_create(strategy, &metric, &step->loss_sum));
  metric.name = "correct";
  metric.dtype = DIST_DTYPE_I64;
  return dist_variable_create(strategy, &metric, &step->correct);
}

static double test_accuracy(struct step* step, const struct digits* data, int first) {
  struct mlp_params m;
  mlp_bind(&m);
  for (int i = 0; i < kMlpParams; ++i) {
    dist_buffer_t b = f32_buffer(m.p[i], kMlpParamCount[i]);
    if (dist_variable_read(step->vars[i], NULL, &b) != DIST_OK) return -1;
  }
  return mlp_accuracy(&m, data, first, data->count);
}

/* Runs one epoch of global batches over the shuffled training set. */
static dist_status_t run_epoch(dist_strategy_t* strategy, struct step* step, dist_optimizer_t* optimizer,
                               const struct digits* data, const int* order, int train, int batch_size,
                               dist_input_context_t* input, float* xbuf, int32_t* ybuf) {
  int32_t replicas = 0, in_sync = 0;
  TRY(dist_strategy_num_local_replicas(strategy, &replicas));
  TRY(dist_strategy_num_replicas_in_sync(strategy, &in_sync));
  dist_buffer_t grads[kMaxReplicas * kMlpParams];
  for (int r = 0; r < replicas; ++r) {
    mlp_bind(&step->grads[r]);
    for (int i = 0; i < kMlpParams; ++i) grads[r * kMlpParams + i] = f32_buffer(step->grads[r].p[i], kMlpParamCount[i]);
  }
  for (int start = 0; start < train; start += batch_size) {
    const int rows = start + batch_size <= train ? batch_size : train - start; /* the last batch is partial */
    /* This worker's share of the global batch, then split over its replicas. */
    int64_t begin = 0, count = 0;
    TRY(dist_input_context_shard_range(input, rows, &begin, &count));
    for (int64_t s = 0; s < count; ++s) {
      const int sample = order[start + begin + s];
      memcpy(xbuf + s * kDigitPixels, data->pixels + (size_t)sample * kDigitPixels, sizeof(float) * kDigitPixels);
      ybuf[s] = data->labels[sample];
    }
    dist_buffer_t xs = f32_buffer(xbuf, (uint64_t)count * kDigitPixels);
    dist_buffer_t ys = {ybuf, (uint64_t)count, DIST_DTYPE_I32, DIST_MEMORY_HOST, NULL};
    TRY(dist_strategy_split_batch(strategy, &xs, (uint64_t)count, step->x, replicas));
    TRY(dist_strategy_split_batch(strategy, &ys, (uint64_t)count, step->y, replicas));
    step->gradient_scale = (double)in_sync / rows;
    TRY(dist_strategy_run(strategy, replica_step, step));
#ifdef DIGITS_HAVE_CUDA
    /* A GPU replica's gradients are on its device. */
    for (int r = 0; r < replicas; ++r) {
      const struct gpu_replica* g = &step->gpu[r];
      if (!g->ready) continue;
      const float* at = g->grads;
      for (int i = 0; i < kMlpParams; ++i) {
        dist_buffer_t b = {(void*)at, kMlpParamCount[i], DIST_DTYPE_F32, DIST_MEMORY_CUDA, g->stream};
        grads[r * kMlpParams + i] = b;
        at += kMlpParamCount[i];
      }
    }
#endif
    TRY(dist_strategy_apply_gradients(strategy, step->vars, grads, kMlpParams, optimizer));
  }
  return DIST_OK;
}

dist_status_t digits_train(dist_strategy_t* strategy, const struct digits* data, const struct train_options* options,
                           struct train_report* report) {
  const int epochs = options->epochs > 0 ? options->epochs : 20;
  const int batch_size = options->global_batch_size > 0 ? options->global_batch_size : 64;
  const int train = data->count - kDigitTestCount;
  struct step* step = calloc(1, sizeof *step);
  int* order = malloc(sizeof(int) * (size_t)train);
  float* xbuf = malloc(sizeof(float) * kDigitPixels * (size_t)batch_size);
  int32_t* ybuf = malloc(sizeof(int32_t) * (size_t)batch_size);
  dist_optimizer_t* optimizer = NULL;
  dist_input_context_t* input = NULL;
  dist_optimizer_options_t opt = DIST_OPTIMIZER_OPTIONS_INIT;
  opt.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE | DIST_OPTIMIZER_OPT_MOMENTUM;
  opt.kind = DIST_OPTIMIZER_MOMENTUM;
  opt.learning_rate = options->learning_rate > 0 ? options->learning_rate : 0.05;
  opt.momentum = 0.9;
  step->max_rows = batch_size;
  dist_status_t status = create_model(strategy, step);
  if (status == DIST_OK) status = dist_optimizer_create(&opt, &optimizer);
  if (status == DIST_OK) status = dist_strategy_input_context(strategy, &input);
  int32_t worker = 0, workers = 1;
  if (status == DIST_OK) status = dist_strategy_worker_index(strategy, &worker, &workers);
  for (int i = 0; i < train; ++i) order[i] = i;
  uint64_t shuffle = 42; /* the same permutation on every worker */
  for (int epoch = 1; status == DIST_OK && epoch <= epochs; ++epoch) {
    digits_shuffle(order, train, &shuffle);
    double zero = 0;
    int64_t none = 0;
    dist_buffer_t lb = {&zero, 1, DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
    dist_buffer_t cb = {&none, 1, DIST_DTYPE_I64, DIST_MEMORY_HOST, NULL};
    status = dist_variable_assign(step->loss_sum, NULL, &lb);
    if (status == DIST_OK) status = dist_variable_assign(step->correct, NULL, &cb);
    if (status == DIST_OK) status = run_epoch(strategy, step, optimizer, data, order, train, batch_size, input, xbuf, ybuf);
    double loss = 0;
    int64_t correct = 0;
    lb.data = &loss;
    cb.data = &correct;
    /* Cross-replica reads of ON_READ metrics sum every replica of every worker. */
    if (status == DIST_OK) status = dist_variable_read(step->loss_sum, NULL, &lb);
    if (status == DIST_OK) status = dist_variable_read(step->correct, NULL, &cb);
    if (status != DIST_OK) break;
    report->final_loss = loss / train;
    report->train_accuracy = (double)correct / train;
    report->test_accuracy = test_accuracy(step, data, train);
    if (options->verbose && worker == 0) {
      printf("epoch %2d  loss %.4f  train accuracy %.4f  test accuracy %.4f\n", epoch, report->final_loss,
             report->train_accuracy, report->test_accuracy);
      fflush(stdout);
    }
  }
  if (status == DIST_OK) status = hash_weights(step, &report->weights_hash);
#ifdef DIGITS_HAVE_CUDA
  free_gpu_replicas(step);
#endif
  for (int i = 0; i < kMlpParams; ++i) dist_variable_destroy(step->vars[i]);
  dist_variable_destroy(step->loss_sum);
  dist_variable_destroy(step->correct);
  dist_optimizer_destroy(optimizer);
  dist_input_context_destroy(input);
  free(step);
  free(order);
  free(xbuf);
  free(ybuf);
  return status;
}

void digits_print_report(const char* label, const struct train_report* report) {
  printf("%s: final loss %.4f  train accuracy %.4f  test accuracy %.4f  weights fnv1a64 %016llx\n", label,
         report->final_loss, report->train_accuracy, report->test_accuracy,
         (unsigned long long)report->weights_hash);
  fflush(stdout);
}

int digits_example_main(int argc, char** argv, dist_strategy_t* strategy, const char* label) {
  struct train_options options;
  memset(&options, 0, sizeof options);
  options.verbose = 1;
  options.epochs = argc > 1 ? atoi(argv[1]) : 20;
  struct digits data;
  if (digits_load(argc > 2 ? argv[2] : DIGITS_DEFAULT_PATH, &data) != 0) return 1;
  struct train_report report;
  const dist_status_t status = digits_train(strategy, &data, &options, &report);
  digits_free(&data);
  DIGITS_CHECK(status);
  digits_print_report(label, &report);
  return 0;
}
