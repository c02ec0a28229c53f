/* One worker of a multi-process strategy test (MULTI_WORKER_MIRRORED, 2 local
 * replicas). Launched by test_strategy_multiprocess with TF_CONFIG and the
 * cluster token; runs one scenario and exits 0 only if every check held.
 *
 * One file past 500 lines: one program is launched per worker and picks its
 * scenario by name, so every scenario of the suite lives here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <distribute/c_api.h>
#include "checks.h"
#include "optimizer_options.h"
#include "regression_model.h"
#include "unfused_all_reduce.h"

#define MUST(call)                                                                              \
  do {                                                                                          \
    dist_status_t status_ = (call);                                                             \
    if (status_ != DIST_OK) {                                                                   \
      fprintf(stderr, "%s: %s: %s\n", #call, dist_status_string(status_), dist_last_error());   \
      exit(2);                                                                                  \
    }                                                                                           \
  } while (0)

enum { kLocal = 2 };

static dist_buffer_t buffer_of(void* data, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  return b;
}

static dist_context_t* context;
static int32_t worker, workers;

/* Joins the cluster and creates the strategy; local_replicas < 0 means
 * "1 + this worker's rank" (workers that disagree). NULL when creation fails. */
static dist_strategy_t* join(int32_t local_replicas, double timeout_seconds, dist_communication_t communication) {
  dist_cluster_t* cluster = NULL;
  MUST(dist_cluster_resolve(NULL, &cluster));
  MUST(dist_context_create(cluster, NULL, &context));
  dist_cluster_destroy(cluster);
  if (local_replicas < 0) {
    int32_t rank = 0;
    MUST(dist_context_rank(context, &rank));
    local_replicas = 1 + rank;
  }
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES | DIST_STRATEGY_OPT_BYTES_PER_PACK |
                       DIST_STRATEGY_OPT_TIMEOUT_SECONDS | DIST_STRATEGY_OPT_COMMUNICATION;
  options.communication = communication;
  options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
  options.num_cpu_devices = local_replicas;
  options.bytes_per_pack = 1000; /* many buckets, so that the pipeline overlaps */
  options.timeout_seconds = timeout_seconds;
  dist_strategy_t* strategy = NULL;
  dist_status_t status = dist_strategy_create(context, &options, &strategy);
  if (status != DIST_OK) {
    printf("create: %s: %s\n", dist_status_string(status), dist_last_error());
    fflush(stdout);
    return NULL;
  }
  MUST(dist_strategy_worker_index(strategy, &worker, &workers));
  return strategy;
}

static void leave(dist_strategy_t* strategy) {
  dist_strategy_destroy(strategy);
  dist_context_destroy(context);
}

/* ---- variables: aggregation across workers -------------------------------------- */

struct update_job {
  dist_variable_t* sum;
  dist_variable_t* mean;
  dist_variable_t* first;
  dist_variable_t* none;
  dist_variable_t* metric;
  dist_status_t none_status;
};

static dist_status_t update_all(dist_replica_context_t* replica, void* user_data) {
  struct update_job* job = user_data;
  int32_t id = 0;
  dist_replica_id(replica, &id);
  double value = 1.0 + id; /* replicas 0..3 give 1..4 */
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_F64);
  dist_status_t s = dist_variable_assign_add(job->sum, replica, &b);
  if (s == DIST_OK) s = dist_variable_assign(job->mean, replica, &b);
  if (s == DIST_OK) s = dist_variable_assign(job->first, replica, &b);
  if (s == DIST_OK) s = dist_variable_assign_add(job->metric, replica, &b);
  return s;
}

static dist_status_t update_none(dist_replica_context_t* replica, void* user_data) {
  struct update_job* job = user_data;
  double value = 1;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_F64);
  return dist_variable_assign(job->none, replica, &b);
}

static dist_variable_t* scalar(dist_strategy_t* strategy, dist_synchronization_t sync, dist_aggregation_t aggregation,
                               double initial) {
  dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
  options.field_mask = DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_SYNCHRONIZATION |
                       DIST_VARIABLE_OPT_AGGREGATION;
  options.dtype = DIST_DTYPE_F64;
  options.initial_value = &initial;
  options.synchronization = sync;
  options.aggregation = aggregation;
  dist_variable_t* v = NULL;
  MUST(dist_variable_create(strategy, &options, &v));
  return v;
}

static double read_scalar(dist_variable_t* v) {
  double x = NAN;
  dist_buffer_t b = buffer_of(&x, 1, DIST_DTYPE_F64);
  MUST(dist_variable_read(v, NULL, &b));
  return x;
}

static void scenario_variables(void) {
  dist_strategy_t* strategy = join(kLocal, 30, DIST_COMMUNICATION_AUTO);
  if (strategy == NULL) exit(2);
  int32_t in_sync = 0;
  MUST(dist_strategy_num_replicas_in_sync(strategy, &in_sync));
  CHECK(in_sync == kLocal * workers, "num_replicas_in_sync %d", (int)in_sync);
  const char* type = NULL;
  int32_t task = -1;
  MUST(dist_strategy_task_type(strategy, &type));
  MUST(dist_strategy_task_id(strategy, &task));
  CHECK(type && strcmp(type, "worker") == 0 && task == worker, "task %s:%d", type ? type : "NULL", (int)task);
  const dist_cluster_t* cluster = NULL;
  int32_t tasks = 0;
  const char* device = NULL;
  MUST(dist_strategy_cluster(strategy, &cluster));
  CHECK(cluster != NULL && dist_cluster_num_tasks(cluster, "worker", &tasks) == DIST_OK && tasks == workers,
        "the strategy's cluster has %d workers", (int)tasks);
  MUST(dist_strategy_device(strategy, 1, &device));
  char want[128];
  snprintf(want, sizeof want, "/job:worker/replica:0/task:%d/device:CPU:1", (int)worker);
  CHECK(strcmp(device, want) == 0, "device 1 is %s, expected %s", device, want);

  /* Each worker offers its own initial value; worker 0's wins everywhere. */
  struct update_job job;
  job.sum = scalar(strategy, DIST_SYNC_ON_WRITE, DIST_AGGREGATION_SUM, 100.0 + worker);
  job.mean = scalar(strategy, DIST_SYNC_AUTO, DIST_AGGREGATION_MEAN, 0);
  job.first = scalar(strategy, DIST_SYNC_ON_WRITE, DIST_AGGREGATION_ONLY_FIRST_REPLICA, 0);
  job.none = scalar(strategy, DIST_SYNC_ON_WRITE, DIST_AGGREGATION_NONE, 0);
  job.metric = scalar(strategy, DIST_SYNC_ON_READ, DIST_AGGREGATION_SUM, 0);
  CHECK(read_scalar(job.sum) == 100.0, "initial value %g, expected worker 0's 100", read_scalar(job.sum));

  MUST(dist_strategy_run(strategy, update_all, &job));
  const double total = in_sync * (in_sync + 1) / 2.0; /* 1 + 2 + ... + in_sync */
  CHECK(read_scalar(job.sum) == 100.0 + total, "SUM: %g, expected %g", read_scalar(job.sum), 100.0 + total);
  CHECK(read_scalar(job.mean) == total / in_sync, "MEAN: %g, expected %g", read_scalar(job.mean), total / in_sync);
  CHECK(read_scalar(job.first) == 1.0, "ONLY_FIRST_REPLICA: %g, expected replica 0's 1", read_scalar(job.first));
  /* ON_READ: each copy holds its replica's value; the read sums all workers'. */
  CHECK(read_scalar(job.metric) == total, "ON_READ SUM read %g, expected %g", read_scalar(job.metric), total);
  /* Cross-replica assign of a SUM ON_READ variable: reads back the value. */
  double seven = 7;
  dist_buffer_t b7 = buffer_of(&seven, 1, DIST_DTYPE_F64);
  MUST(dist_variable_assign(job.metric, NULL, &b7));
  CHECK(read_scalar(job.metric) == 7.0, "ON_READ after assign: %g", read_scalar(job.metric));

  dist_status_t status = dist_strategy_run(strategy, update_none, &job);
  CHECK(status == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "aggregation NONE"), "NONE: %s %s",
        dist_status_string(status), dist_last_error());

  dist_variable_destroy(job.sum);
  dist_variable_destroy(job.mean);
  dist_variable_destroy(job.first);
  dist_variable_destroy(job.none);
  dist_variable_destroy(job.metric);
  leave(strategy);
}

/* ---- reduce and the fused all-reduce across workers ---------------------------- */

enum { kTensors = 4 };
static const uint64_t kSizes[kTensors] = {3, 777, 1, 4100};

static int32_t element(int32_t replica_id, int i, uint64_t e) {
  return (int32_t)((uint32_t)e * 2654435761u + (uint32_t)(replica_id * 31 + i));
}

static void scenario_reduce(void) {
  dist_strategy_t* strategy = join(kLocal, 30, DIST_COMMUNICATION_AUTO);
  if (strategy == NULL) exit(2);
  /* axis 0 with a partial batch: worker w's replicas hold 2 and w rows of 2. */
  float rows[kLocal][4];
  dist_buffer_t values[kLocal];
  double want_sum[2] = {0, 0};
  int64_t total_rows = 0;
  for (int32_t w = 0; w < workers; ++w) {
    for (int r = 0; r < kLocal; ++r) {
      const int n = r == 0 ? 2 : w;
      for (int k = 0; k < n * 2; ++k) {
        const float v = (float)(w * 100 + r * 10 + k);
        want_sum[k % 2] += v;
        if (w == worker) rows[r][k] = v;
      }
      total_rows += n;
      if (w == worker) values[r] = buffer_of(rows[r], (uint64_t)n * 2, DIST_DTYPE_F32);
    }
  }
  float out[2];
  dist_buffer_t result = buffer_of(out, 2, DIST_DTYPE_F32);
  MUST(dist_strategy_reduce(strategy, DIST_OP_MEAN, values, kLocal, 0, &result));
  for (int k = 0; k < 2; ++k) {
    CHECK(fabs(out[k] - want_sum[k] / (double)total_rows) < 1e-4, "axis 0 MEAN[%d] = %g, expected %g", k, out[k],
          want_sum[k] / (double)total_rows);
  }
  MUST(dist_strategy_reduce(strategy, DIST_OP_SUM, values, kLocal, 0, &result));
  CHECK(out[0] == (float)want_sum[0], "axis 0 SUM = %g, expected %g", out[0], want_sum[0]);

  /* axis none: element-wise over the replicas of every worker; replica id i
   * holds {i, -2i}. */
  double mine[kLocal][2], across[2];
  for (int r = 0; r < kLocal; ++r) {
    const int32_t id = worker * kLocal + r;
    mine[r][0] = id;
    mine[r][1] = -2.0 * id;
    values[r] = buffer_of(mine[r], 2, DIST_DTYPE_F64);
  }
  dist_buffer_t across_result = buffer_of(across, 2, DIST_DTYPE_F64);
  const int32_t replicas = kLocal * workers;
  const double id_sum = replicas * (replicas - 1) / 2.0;
  MUST(dist_strategy_reduce(strategy, DIST_OP_MEAN, values, kLocal, DIST_AXIS_NONE, &across_result));
  CHECK(across[0] == id_sum / replicas && across[1] == -2.0 * id_sum / replicas, "axis none MEAN = {%g, %g}",
        across[0], across[1]);

  /* Fused batch all-reduce == one replica all-reduce per tensor, bit for bit. */
  struct unfused_all_reduce u = {kTensors, kSizes, {{NULL}}};
  dist_buffer_t fused[kLocal * kTensors];
  for (int r = 0; r < kLocal; ++r) {
    for (int i = 0; i < kTensors; ++i) {
      u.tensors[r][i] = malloc(kSizes[i] * sizeof(int32_t));
      int32_t* f = malloc(kSizes[i] * sizeof(int32_t));
      for (uint64_t e = 0; e < kSizes[i]; ++e) f[e] = u.tensors[r][i][e] = element(worker * kLocal + r, i, e);
      fused[r * kTensors + i] = buffer_of(f, kSizes[i], DIST_DTYPE_I32);
    }
  }
  MUST(dist_strategy_run(strategy, unfused_all_reduce_each, &u));
  MUST(dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, fused, kTensors));
  for (int r = 0; r < kLocal; ++r) {
    for (int i = 0; i < kTensors; ++i) {
      const int32_t* f = fused[r * kTensors + i].data;
      CHECK(memcmp(f, u.tensors[r][i], kSizes[i] * sizeof(int32_t)) == 0, "fused != unfused for tensor %d", i);
      for (uint64_t e = 0; e < kSizes[i]; ++e) {
        uint32_t want = 0;
        for (int32_t id = 0; id < kLocal * workers; ++id) want += (uint32_t)element(id, i, e);
        if ((uint32_t)f[e] != want) {
          CHECK(0, "tensor %d element %llu = %u, expected %u", i, (unsigned long long)e, (uint32_t)f[e], want);
          break;
        }
      }
      free(u.tensors[r][i]);
      free(fused[r * kTensors + i].data);
    }
  }
  leave(strategy);
}

/* ---- fusion by both paths: one piecewise call per dtype (one host), buckets ---- */

/* Replica id's value of element e of tensor i: small integers, so that sums
 * and means over 4 replicas are exact in every dtype used (u8 sums stay
 * below 256). */
static int32_t batch_value(int32_t id, int i, uint64_t e, dist_dtype_t dtype) {
  const int32_t v = (int32_t)((e * 7 + (uint64_t)i * 13 + (uint64_t)id * 5) % 101);
  return dtype == DIST_DTYPE_U8 ? v % 60 : v;
}

/* Tensors of several dtypes (one piecewise call per dtype), sizes 0, 1, odd,
 * and more than one shared-memory step, interleaved. */
enum { kBatchTensors = 9, kFusionMaxLocal = 2 };
static const uint64_t kBatchSizes[kBatchTensors] = {0, 1, 7, 70001, 3, 777, 65537, 100003, 2};
static const dist_dtype_t kBatchTypes[kBatchTensors] = {DIST_DTYPE_I32, DIST_DTYPE_I32, DIST_DTYPE_F64,
                                                        DIST_DTYPE_I32, DIST_DTYPE_U8,  DIST_DTYPE_F32,
                                                        DIST_DTYPE_F64, DIST_DTYPE_F32, DIST_DTYPE_I32};

static size_t dtype_bytes(dist_dtype_t dtype) {
  return dtype == DIST_DTYPE_U8 ? 1 : dtype == DIST_DTYPE_F64 ? 8 : 4;
}

static double batch_element(const dist_buffer_t* b, uint64_t e) {
  switch (b->dtype) {
    case DIST_DTYPE_I32: return ((const int32_t*)b->data)[e];
    case DIST_DTYPE_U8: return ((const uint8_t*)b->data)[e];
    case DIST_DTYPE_F32: return ((const float*)b->data)[e];
    default: return ((const double*)b->data)[e];
  }
}

/* buffers[r * kBatchTensors + i]: local replica r's tensor i. */
static void fill_batch(dist_buffer_t* buffers, int local) {
  for (int r = 0; r < local; ++r) {
    for (int i = 0; i < kBatchTensors; ++i) {
      dist_buffer_t* b = &buffers[r * kBatchTensors + i];
      *b = buffer_of(malloc(kBatchSizes[i] * dtype_bytes(kBatchTypes[i]) + 1), kBatchSizes[i], kBatchTypes[i]);
      for (uint64_t e = 0; e < kBatchSizes[i]; ++e) {
        const int32_t v = batch_value(worker * local + r, i, e, kBatchTypes[i]);
        switch (kBatchTypes[i]) {
          case DIST_DTYPE_I32: ((int32_t*)b->data)[e] = v; break;
          case DIST_DTYPE_U8: ((uint8_t*)b->data)[e] = (uint8_t)v; break;
          case DIST_DTYPE_F32: ((float*)b->data)[e] = (float)v; break;
          default: ((double*)b->data)[e] = v; break;
        }
      }
    }
  }
}

static void check_batch(dist_buffer_t* buffers, int local, dist_op_t op, const char* what) {
  const int32_t replicas = workers * local;
  for (int r = 0; r < local; ++r) {
    for (int i = 0; i < kBatchTensors; ++i) {
      dist_buffer_t* b = &buffers[r * kBatchTensors + i];
      const int integer = kBatchTypes[i] == DIST_DTYPE_I32 || kBatchTypes[i] == DIST_DTYPE_U8;
      for (uint64_t e = 0; e < kBatchSizes[i]; ++e) {
        double want = 0;
        for (int32_t id = 0; id < replicas; ++id) want += batch_value(id, i, e, kBatchTypes[i]);
        /* The sums are exact; a mean is rounded to the tensor's type (f32 by
         * an f32 division, as the library divides). */
        if (op == DIST_OP_MEAN) {
          if (integer) {
            want = floor(want / replicas);
          } else if (kBatchTypes[i] == DIST_DTYPE_F32) {
            want = (double)((float)want / (float)replicas);
          } else {
            want /= replicas;
          }
        }
        const double got = batch_element(b, e);
        if (got != want) {
          CHECK(0, "%s: replica %d tensor %d element %llu = %g, expected %g", what, r, i, (unsigned long long)e, got,
                want);
          break;
        }
      }
      free(b->data);
    }
  }
}

/* Every optimizer on f32 and f64 variables, against the test's own
 * arithmetic in double. The third call lists the variables in another order
 * and leaves one out: on one host each element then has another updating
 * worker, so the optimizers' slots, which each worker holds only for the
 * elements it updated, must first be made whole. */
enum { kTrainVars = 4, kTrainCalls = 5 };
static const uint64_t kTrainSizes[kTrainVars] = {1, 7, 70001, 40000};
static const dist_dtype_t kTrainTypes[kTrainVars] = {DIST_DTYPE_F32, DIST_DTYPE_F32, DIST_DTYPE_F32,
                                                     DIST_DTYPE_F64};
/* The variables of each call, in call order; -1 ends a list. */
static const int kTrainCallVars[kTrainCalls][kTrainVars + 1] = {
    {0, 1, 2, 3, -1}, {0, 1, 2, 3, -1}, {3, 2, 1, -1}, {0, 1, 2, 3, -1}, {0, 1, 2, 3, -1}};

static double train_gradient(int32_t id, int i, uint64_t e, int call) {
  return cos((double)(e * 3 + (uint64_t)(id + call + i)));
}

/* The mean gradient as the library forms it, in the variable's dtype: each
 * worker's replicas summed in order, then the workers' sums (two workers:
 * a + b either way round), then divided. Elements whose mean nearly cancels
 * would otherwise differ in Adam's m / sqrt(v). */
static double train_mean(int local, int i, uint64_t e, int call) {
  const int32_t replicas = workers * local;
  if (kTrainTypes[i] == DIST_DTYPE_F32) {
    float sum = 0;
    for (int32_t w = 0; w < workers; ++w) {
      float partial = (float)train_gradient(w * local, i, e, call);
      for (int r = 1; r < local; ++r) partial += (float)train_gradient(w * local + r, i, e, call);
      sum = w == 0 ? partial : sum + partial;
    }
    return (double)(sum / (float)replicas);
  }
  double sum = 0;
  for (int32_t w = 0; w < workers; ++w) {
    double partial = train_gradient(w * local, i, e, call);
    for (int r = 1; r < local; ++r) partial += train_gradient(w * local + r, i, e, call);
    sum = w == 0 ? partial : sum + partial;
  }
  return sum / replicas;
}

/* One element's update in double, with the library's default
 * hyperparameters (momentum 0.9, beta 0.9 / 0.999, epsilon 1e-7, Adagrad's
 * accumulators from 0.1). `step` is the optimizer's call count. */
static void reference_update(dist_optimizer_kind_t kind, double* w, double* s1, double* s2, double g, int step) {
  const double lr = 0.05;
  switch (kind) {
    case DIST_OPTIMIZER_SGD:
      *w -= lr * g;
      break;
    case DIST_OPTIMIZER_MOMENTUM:
      *s1 = 0.9 * *s1 - lr * g;
      *w += *s1;
      break;
    case DIST_OPTIMIZER_ADAGRAD:
      *s1 += g * g;
      *w -= lr * g / (sqrt(*s1) + 1e-7);
      break;
    default: { /* ADAM */
      const double alpha = lr * sqrt(1 - pow(0.999, step)) / (1 - pow(0.9, step));
      *s1 = 0.9 * *s1 + 0.1 * g;
      *s2 = 0.999 * *s2 + 0.001 * g * g;
      *w -= alpha * *s1 / (sqrt(*s2) + 1e-7);
    }
  }
}

/* Trains the variables with one optimizer (whose update one worker makes and
 * shares on one host) and prints "<name> weights <hash>". */
static void train_variables(dist_strategy_t* strategy, int local, dist_optimizer_kind_t kind, const char* name) {
  const dist_optimizer_options_t opt = optimizer_options(kind, 0.05);
  dist_optimizer_t* optimizer = NULL;
  MUST(dist_optimizer_create(&opt, &optimizer));
  dist_variable_t* vars[kTrainVars];
  dist_buffer_t grads[kFusionMaxLocal * kTrainVars];
  double* reference[kTrainVars];
  double* s1[kTrainVars];
  double* s2[kTrainVars];
  for (int i = 0; i < kTrainVars; ++i) {
    const size_t element = dtype_bytes(kTrainTypes[i]);
    void* initial = malloc(kTrainSizes[i] * element);
    reference[i] = malloc(kTrainSizes[i] * sizeof(double));
    s1[i] = malloc(kTrainSizes[i] * sizeof(double));
    s2[i] = calloc(kTrainSizes[i], sizeof(double));
    for (uint64_t e = 0; e < kTrainSizes[i]; ++e) {
      const double x = sin((double)(e + 1) * (i + 1));
      s1[i][e] = kind == DIST_OPTIMIZER_ADAGRAD ? 0.1 : 0.0;
      if (element == 4) reference[i][e] = ((float*)initial)[e] = (float)x;
      else reference[i][e] = ((double*)initial)[e] = x;
    }
    int64_t shape[1] = {(int64_t)kTrainSizes[i]};
    dist_variable_options_t vo = DIST_VARIABLE_OPTIONS_INIT;
    vo.field_mask = DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
    vo.dtype = kTrainTypes[i];
    vo.shape = shape;
    vo.rank = 1;
    vo.initial_value = initial;
    MUST(dist_variable_create(strategy, &vo, &vars[i]));
    free(initial);
    for (int r = 0; r < local; ++r) {
      grads[r * kTrainVars + i] = buffer_of(malloc(kTrainSizes[i] * element), kTrainSizes[i], kTrainTypes[i]);
    }
  }
  for (int call = 1; call <= kTrainCalls; ++call) {
    dist_variable_t* call_vars[kTrainVars];
    dist_buffer_t call_grads[kFusionMaxLocal * kTrainVars];
    size_t n = 0;
    while (kTrainCallVars[call - 1][n] >= 0) ++n;
    for (size_t k = 0; k < n; ++k) {
      const int i = kTrainCallVars[call - 1][k];
      call_vars[k] = vars[i];
      for (int r = 0; r < local; ++r) call_grads[r * n + k] = grads[r * kTrainVars + i];
      for (uint64_t e = 0; e < kTrainSizes[i]; ++e) {
        for (int r = 0; r < local; ++r) {
          const double g = train_gradient(worker * local + r, i, e, call);
          if (kTrainTypes[i] == DIST_DTYPE_F32) ((float*)grads[r * kTrainVars + i].data)[e] = (float)g;
          else ((double*)grads[r * kTrainVars + i].data)[e] = g;
        }
        reference_update(kind, &reference[i][e], &s1[i][e], &s2[i][e], train_mean(local, i, e, call), call);
      }
    }
    MUST(dist_strategy_apply_gradients(strategy, call_vars, call_grads, n, optimizer));
  }
  /* The test compares these bytes across workers and across paths. */
  uint64_t hash = 1469598103934665603ull;
  for (int i = 0; i < kTrainVars; ++i) {
    const size_t element = dtype_bytes(kTrainTypes[i]);
    unsigned char* got = malloc(kTrainSizes[i] * element);
    dist_buffer_t b = buffer_of(got, kTrainSizes[i], kTrainTypes[i]);
    MUST(dist_variable_read(vars[i], NULL, &b));
    for (uint64_t e = 0; e < kTrainSizes[i]; ++e) {
      const double x = element == 4 ? ((float*)got)[e] : ((double*)got)[e];
      if (fabs(x - reference[i][e]) > 1e-5) {
        CHECK(0, "%s var %d element %llu: %.9g, expected %.9g", name, i, (unsigned long long)e, x, reference[i][e]);
        break;
      }
    }
    for (size_t k = 0; k < kTrainSizes[i] * element; ++k) hash = (hash ^ got[k]) * 1099511628211ull;
    free(got);
    for (int r = 0; r < local; ++r) free(grads[r * kTrainVars + i].data);
    free(reference[i]);
    free(s1[i]);
    free(s2[i]);
    dist_variable_destroy(vars[i]);
  }
  printf("%s weights %016llx\n", name, (unsigned long long)hash);
  fflush(stdout);
  dist_optimizer_destroy(optimizer);
}

/* communication "auto" takes the one-call path on one host, "ring" the
 * bucketed one; both must give the same results, with 1 or 2 local replicas. */
static void scenario_fusion(const char* communication, const char* local_text) {
  const int ring = communication != NULL && strcmp(communication, "ring") == 0;
  const int local = local_text != NULL ? atoi(local_text) : 1;
  if (local < 1 || local > kFusionMaxLocal) {
    fprintf(stderr, "fusion: local replicas %s is not 1 or 2\n", local_text);
    exit(2);
  }
  dist_strategy_t* strategy = join(local, 30, ring ? DIST_COMMUNICATION_RING : DIST_COMMUNICATION_AUTO);
  if (strategy == NULL) exit(2);
  dist_buffer_t buffers[kFusionMaxLocal * kBatchTensors];
  fill_batch(buffers, local);
  MUST(dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, buffers, kBatchTensors));
  check_batch(buffers, local, DIST_OP_SUM, "SUM");
  fill_batch(buffers, local);
  MUST(dist_strategy_batch_all_reduce(strategy, DIST_OP_MEAN, buffers, kBatchTensors));
  check_batch(buffers, local, DIST_OP_MEAN, "MEAN");
  /* Bad input is refused on every worker before anything moves, and the
   * strategy still works afterwards. */
  int32_t one = 1;
  dist_buffer_t twice[2 * kFusionMaxLocal];
  for (int k = 0; k < 2 * local; ++k) twice[k] = buffer_of(&one, 1, DIST_DTYPE_I32);
  const dist_status_t status = dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, twice, 2);
  CHECK(status == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "overlaps"), "aliased tensors: %s %s",
        dist_status_string(status), dist_last_error());
  train_variables(strategy, local, DIST_OPTIMIZER_ADAM, "adam");
  train_variables(strategy, local, DIST_OPTIMIZER_SGD, "sgd");
  train_variables(strategy, local, DIST_OPTIMIZER_MOMENTUM, "momentum");
  train_variables(strategy, local, DIST_OPTIMIZER_ADAGRAD, "adagrad");
  leave(strategy);
}

/* ---- deterministic reductions: bucket sizes and fusion -------------------------- */

enum { kDetTensors = 3 };
static const uint64_t kDetSizes[kDetTensors] = {7, 1000, 4099};

/* Replica `global` (worker * kLocal + local index)'s element e of tensor t:
 * f32 values of far-apart exponents, so that sums round. */
static float det_value(int global, int t, uint64_t e) {
  uint64_t h = ((uint64_t)global << 48) ^ ((uint64_t)t << 40) ^ e;
  h += 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  const float unit = (float)((double)(h >> 40) * 0x1p-24);
  return ldexpf((h & 1) ? -unit : unit, (int)(h % 33) - 16);
}

/* With DIST_DETERMINISTIC=1, batch_all_reduce (SUM) of f32 tensors on 2 local
 * replicas per worker has the same bits whatever the bucket size (one
 * element, a few, one bucket for all) and communication (one call on one
 * host, or buckets on a ring): each worker's replicas in order, then the
 * workers in rank order. Prints a hash of its results. */
static void scenario_deterministic(void) {
  dist_cluster_t* cluster = NULL;
  MUST(dist_cluster_resolve(NULL, &cluster));
  MUST(dist_context_create(cluster, NULL, &context));
  dist_cluster_destroy(cluster);
  const int64_t packs[] = {4, 1000, 1 << 20};
  const dist_communication_t communications[] = {DIST_COMMUNICATION_AUTO, DIST_COMMUNICATION_RING};
  uint64_t first_hash = 0;
  for (int c = 0; c < 2; ++c) {
    for (int p = 0; p < 3; ++p) {
      dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
      options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES | DIST_STRATEGY_OPT_BYTES_PER_PACK |
                           DIST_STRATEGY_OPT_COMMUNICATION;
      options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
      options.num_cpu_devices = kLocal;
      options.bytes_per_pack = packs[p];
      options.communication = communications[c];
      dist_strategy_t* strategy = NULL;
      MUST(dist_strategy_create(context, &options, &strategy));
      MUST(dist_strategy_worker_index(strategy, &worker, &workers));
      dist_buffer_t buffers[kLocal * kDetTensors];
      for (int r = 0; r < kLocal; ++r) {
        for (int t = 0; t < kDetTensors; ++t) {
          float* data = malloc(kDetSizes[t] * sizeof(float));
          for (uint64_t e = 0; e < kDetSizes[t]; ++e) data[e] = det_value(worker * kLocal + r, t, e);
          buffers[r * kDetTensors + t] = buffer_of(data, kDetSizes[t], DIST_DTYPE_F32);
        }
      }
      MUST(dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, buffers, kDetTensors));
      uint64_t hash = 0xCBF29CE484222325ull;
      size_t wrong = 0;
      for (int t = 0; t < kDetTensors; ++t) {
        const float* got = buffers[t].data;
        for (uint64_t e = 0; e < kDetSizes[t]; ++e) {
          float expected = 0;
          for (int w = 0; w < workers; ++w) {
            const float local = det_value(w * kLocal, t, e) + det_value(w * kLocal + 1, t, e);
            expected = w == 0 ? local : expected + local;
          }
          uint32_t a, b;
          memcpy(&a, &got[e], 4);
          memcpy(&b, &expected, 4);
          wrong += a != b;
          for (int k = 0; k < 4; ++k) hash = (hash ^ ((a >> (8 * k)) & 0xFF)) * 0x100000001B3ull;
        }
      }
      CHECK(wrong == 0, "bytes_per_pack %lld, communication %d: %zu elements differ from the in-order sum",
            (long long)packs[p], communications[c], wrong);
      if (c == 0 && p == 0) first_hash = hash;
      CHECK(hash == first_hash, "bytes_per_pack %lld, communication %d: other bits than the first", (long long)packs[p],
            communications[c]);
      for (int k = 0; k < kLocal * kDetTensors; ++k) free(buffers[k].data);
      dist_strategy_destroy(strategy);
    }
  }
  printf("deterministic bits %016llx\n", (unsigned long long)first_hash);
  fflush(stdout);
  dist_context_destroy(context);
}

/* ---- training: weights identical across workers ------------------------------- */

static void scenario_train(void) {
  dist_strategy_t* strategy = join(kLocal, 30, DIST_COMMUNICATION_RING);
  if (strategy == NULL) exit(2);
  const dist_optimizer_options_t opt = optimizer_options(DIST_OPTIMIZER_ADAM, 0.2);
  float w[kRegressionFeatures];
  MUST(regression_train(strategy, &opt, 300, w));
  for (int f = 0; f < kRegressionFeatures; ++f) CHECK(fabsf(w[f] - (float)(f + 1)) < 0.1f, "w[%d] = %g", f, w[f]);
  /* The test compares these bytes across workers. */
  printf("weights ");
  for (int f = 0; f < kRegressionFeatures; ++f) {
    uint32_t bits;
    memcpy(&bits, &w[f], sizeof bits);
    printf("%08x", bits);
  }
  printf("\n");
  fflush(stdout);
  leave(strategy);
}

/* ---- a replica that fails while the other worker waits -------------------------- */

static dist_status_t fail_on_worker_1(dist_replica_context_t* replica, void* user_data) {
  (void)user_data;
  int32_t id = 0;
  dist_replica_id(replica, &id);
  if (id == 3) return DIST_ERR_INVALID_ARGUMENT; /* worker 1's second replica */
  float x = 1;
  dist_buffer_t b = buffer_of(&x, 1, DIST_DTYPE_F32);
  return dist_replica_all_reduce(replica, DIST_OP_SUM, &b);
}

static void scenario_replica_error(void) {
  dist_strategy_t* strategy = join(kLocal, 5, DIST_COMMUNICATION_AUTO);
  if (strategy == NULL) exit(2);
  dist_status_t status = dist_strategy_run(strategy, fail_on_worker_1, NULL);
  if (worker == 1) {
    CHECK(status == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "replica 3"), "worker 1: %s %s",
          dist_status_string(status), dist_last_error());
    /* Leaving closes this worker's connections: worker 0 must notice. */
  } else {
    CHECK(status == DIST_ERR_PEER_FAILED || status == DIST_ERR_TIMEOUT, "worker 0: %s %s",
          dist_status_string(status), dist_last_error());
  }
  printf("run: %s: %s\n", dist_status_string(status), dist_last_error());
  fflush(stdout);
  leave(strategy);
}

static void scenario_mismatch(void) {
  dist_strategy_t* strategy = join(-1, 10, DIST_COMMUNICATION_AUTO);
  CHECK(strategy == NULL, "workers with 1 and 2 local replicas created a strategy");
  CHECK(strstr(dist_last_error(), "workers disagree on the number of local replicas") != NULL, "message: %s",
        dist_last_error());
  dist_strategy_destroy(strategy);
  dist_context_destroy(context);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: strategy_worker variables|reduce|train|replica_error|mismatch|fusion [auto|ring] [1|2]\n");
    return 2;
  }
  if (strcmp(argv[1], "variables") == 0) scenario_variables();
  else if (strcmp(argv[1], "reduce") == 0) scenario_reduce();
  else if (strcmp(argv[1], "train") == 0) scenario_train();
  else if (strcmp(argv[1], "replica_error") == 0) scenario_replica_error();
  else if (strcmp(argv[1], "mismatch") == 0) scenario_mismatch();
  else if (strcmp(argv[1], "fusion") == 0) scenario_fusion(argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL);
  else if (strcmp(argv[1], "deterministic") == 0) scenario_deterministic();
  else {
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  return failures == 0 ? 0 : 1;
}
