/* Strategies in one process: creation and queries, run() (one thread per
 * replica, an error in one replica releasing the others), replica all-reduce
 * and merge_call, reduce() with and without axis (partial last batch), the
 * fused batch all-reduce and apply_gradients against unfused references, the
 * input context, and the same training code under two strategies.
 *
 * One file past 500 lines: the cases share the strategies, buffers and
 * unfused references of strategy_test_support.h in one process. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>

#include "strategy_test_support.h"
#include "optimizer_options.h"
#include "regression_model.h"
#include "unfused_all_reduce.h"

static void test_create_and_query(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 4);
  int32_t n = 0, local = 0, index = -1, workers = 0, task_id = 0;
  dist_strategy_kind_t kind = -1;
  assert_dist_ok(dist_strategy_num_replicas_in_sync(strategy, &n));
  assert_dist_ok(dist_strategy_num_local_replicas(strategy, &local));
  assert_dist_ok(dist_strategy_kind(strategy, &kind));
  assert_dist_ok(dist_strategy_worker_index(strategy, &index, &workers));
  assert_int_equal(n, 4);
  assert_int_equal(local, 4);
  assert_int_equal(kind, DIST_STRATEGY_MIRRORED);
  assert_int_equal(index, 0);
  assert_int_equal(workers, 1);
  const char* device = NULL;
  assert_dist_ok(dist_strategy_device(strategy, 3, &device));
  assert_string_equal(device, "/job:localhost/replica:0/task:0/device:CPU:3");
  assert_dist_error(dist_strategy_device(strategy, 4, &device), DIST_ERR_INVALID_ARGUMENT, "device index 4");
  const dist_cluster_t* cluster = (const dist_cluster_t*)strategy;
  const char* type = "x";
  assert_dist_ok(dist_strategy_cluster(strategy, &cluster));
  assert_null(cluster);
  assert_dist_ok(dist_strategy_task_type(strategy, &type));
  assert_null(type);
  assert_dist_ok(dist_strategy_task_id(strategy, &task_id));
  assert_int_equal(task_id, -1);
  dist_strategy_destroy(strategy);
  dist_strategy_destroy(NULL);

  /* Defaults: ONE_DEVICE, one replica. */
  assert_dist_ok(dist_strategy_create(NULL, NULL, &strategy));
  assert_dist_ok(dist_strategy_num_replicas_in_sync(strategy, &n));
  assert_dist_ok(dist_strategy_kind(strategy, &kind));
  assert_int_equal(n, 1);
  assert_int_equal(kind, DIST_STRATEGY_ONE_DEVICE);
  dist_strategy_destroy(strategy);

  /* MULTI_WORKER_MIRRORED without a context is one worker alone. */
  strategy = make_strategy(DIST_STRATEGY_MULTI_WORKER_MIRRORED, 2);
  assert_dist_ok(dist_strategy_num_replicas_in_sync(strategy, &n));
  assert_int_equal(n, 2);
  dist_strategy_destroy(strategy);
}

static void test_bad_options(void** state) {
  (void)state;
  dist_strategy_t* strategy = NULL;
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND;
  options.kind = 5; /* one past the last kind, PARAMETER_SERVER */
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "strategy kind 5");
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
  options.kind = DIST_STRATEGY_MIRRORED;
  options.num_cpu_devices = 0;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "num_cpu_devices 0");
  options.kind = DIST_STRATEGY_ONE_DEVICE;
  options.num_cpu_devices = 2;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "exactly one device");
  options.field_mask = DIST_STRATEGY_OPT_COMMUNICATION;
  options.communication = DIST_COMMUNICATION_NCCL;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_UNSUPPORTED, "NCCL");
  options.communication = 7;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "communication 7");
  options.field_mask = DIST_STRATEGY_OPT_TIMEOUT_SECONDS;
  options.timeout_seconds = -1;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "timeout_seconds");
  assert_null(strategy);
  assert_dist_error(dist_strategy_create(NULL, NULL, NULL), DIST_ERR_INVALID_ARGUMENT, "strategy is NULL");
  assert_dist_error(dist_strategy_run(NULL, NULL, NULL), DIST_ERR_INVALID_ARGUMENT, "strategy is NULL");
}

/* TF's cross-device ops: which one a strategy uses, and the settings its
 * replicas cannot take. Here every replica is a CPU device (GPU replicas:
 * tests/gpu/test_gpu_strategy.c). */
static dist_status_t create_with(dist_strategy_kind_t kind, int32_t ops, const char* reduce_to, dist_strategy_t** out) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
  options.kind = kind;
  options.num_cpu_devices = kind == DIST_STRATEGY_ONE_DEVICE ? 1 : 2;
  if (ops >= 0) {
    options.field_mask |= DIST_STRATEGY_OPT_CROSS_DEVICE_OPS;
    options.cross_device_ops = ops;
  }
  if (reduce_to != NULL) {
    options.field_mask |= DIST_STRATEGY_OPT_REDUCE_TO_DEVICE;
    options.reduce_to_device = reduce_to;
  }
  return dist_strategy_create(NULL, &options, out);
}

static dist_status_t record_device(dist_replica_context_t* replica, void* user_data) {
  int32_t* devices = user_data;
  int32_t index = 0, device = -2;
  void* stream = (void*)&index;
  dist_status_t status = dist_replica_local_index(replica, &index);
  if (status == DIST_OK) status = dist_replica_device(replica, &device);
  if (status == DIST_OK) status = dist_replica_stream(replica, &stream);
  devices[index] = stream == NULL ? device : -3;
  return status;
}

static void test_cross_device_ops_on_cpus(void** state) {
  (void)state;
  dist_strategy_t* strategy = NULL;
  dist_cross_device_ops_t ops = -1;
  /* AUTO on CPU replicas is TF's ReductionToOneDevice. */
  assert_dist_ok(create_with(DIST_STRATEGY_MIRRORED, -1, NULL, &strategy));
  assert_dist_ok(dist_strategy_cross_device_ops(strategy, &ops));
  assert_int_equal(ops, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE);
  int32_t devices[2] = {0, 0};
  assert_dist_ok(dist_strategy_run(strategy, record_device, devices));
  assert_int_equal(devices[0], -1);
  assert_int_equal(devices[1], -1);
  assert_dist_error(dist_strategy_cross_device_ops(strategy, NULL), DIST_ERR_INVALID_ARGUMENT, "ops is NULL");
  dist_strategy_destroy(strategy);
  strategy = NULL;
  for (const char* const* host = (const char* const[]){"CPU:0", "/cpu:0", "/device:CPU:0", NULL}; *host; ++host) {
    assert_dist_ok(create_with(DIST_STRATEGY_MULTI_WORKER_MIRRORED, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE,
                               *host, &strategy));
    assert_dist_ok(dist_strategy_cross_device_ops(strategy, &ops));
    assert_int_equal(ops, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE);
    dist_strategy_destroy(strategy);
    strategy = NULL;
  }
  assert_dist_error(create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE, NULL, &strategy),
                    DIST_ERR_INVALID_ARGUMENT, "NcclAllReduce combines GPU replicas");
  assert_dist_error(create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY, NULL, &strategy),
                    DIST_ERR_INVALID_ARGUMENT, "HierarchicalCopyAllReduce combines GPU replicas");
  assert_dist_error(create_with(DIST_STRATEGY_MIRRORED, 4, NULL, &strategy), DIST_ERR_INVALID_ARGUMENT,
                    "cross_device_ops 4 is not one of");
  assert_dist_error(create_with(DIST_STRATEGY_CENTRAL_STORAGE, DIST_CROSS_DEVICE_OPS_AUTO, NULL, &strategy),
                    DIST_ERR_INVALID_ARGUMENT, "cross_device_ops is for MIRRORED and MULTI_WORKER_MIRRORED");
  assert_dist_error(create_with(DIST_STRATEGY_ONE_DEVICE, -1, "CPU:0", &strategy), DIST_ERR_INVALID_ARGUMENT,
                    "reduce_to_device is for MIRRORED");
  assert_dist_error(create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_AUTO, "CPU:0", &strategy),
                    DIST_ERR_INVALID_ARGUMENT, "reduce_to_device is for cross_device_ops REDUCTION_TO_ONE_DEVICE");
  assert_dist_error(
      create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "GPU:0", &strategy),
      DIST_ERR_INVALID_ARGUMENT, "\"GPU:0\" names a GPU");
  assert_dist_error(
      create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "CPU:1", &strategy),
      DIST_ERR_INVALID_ARGUMENT, "\"CPU:1\" is not CPU:0 or GPU:<replica>");
  assert_dist_error(
      create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "TPU:0", &strategy),
      DIST_ERR_INVALID_ARGUMENT, "TPU:0");
  assert_dist_error(create_with(DIST_STRATEGY_MIRRORED, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "", &strategy),
                    DIST_ERR_INVALID_ARGUMENT, "reduce_to_device \"\"");
  /* num_packs belongs to the NCCL and hierarchical-copy ops, which CPU replicas never use. */
  dist_strategy_options_t packs = DIST_STRATEGY_OPTIONS_INIT;
  packs.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES | DIST_STRATEGY_OPT_NUM_PACKS;
  packs.kind = DIST_STRATEGY_MIRRORED;
  packs.num_cpu_devices = 2;
  packs.num_packs = 2;
  assert_dist_error(dist_strategy_create(NULL, &packs, &strategy), DIST_ERR_INVALID_ARGUMENT,
                    "num_packs is for cross_device_ops NcclAllReduce and HierarchicalCopyAllReduce, and this "
                    "strategy's are ReductionToOneDevice");
  assert_null(strategy);
}

/* Each replica records its id and thread; all must differ. */
struct ids {
  int32_t id[8];
  pthread_t thread[8];
  int32_t in_sync[8];
};

static dist_status_t record_ids(dist_replica_context_t* replica, void* user_data) {
  struct ids* ids = user_data;
  int32_t index = 0;
  dist_status_t status = dist_replica_local_index(replica, &index);
  if (status != DIST_OK) return status;
  ids->thread[index] = pthread_self();
  status = dist_replica_num_replicas_in_sync(replica, &ids->in_sync[index]);
  return status != DIST_OK ? status : dist_replica_id(replica, &ids->id[index]);
}

static void test_run_threads_and_ids(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 4);
  struct ids ids;
  memset(&ids, 0, sizeof ids);
  assert_dist_ok(dist_strategy_run(strategy, record_ids, &ids));
  for (int r = 0; r < 4; ++r) {
    assert_int_equal(ids.id[r], r);
    assert_int_equal(ids.in_sync[r], 4);
    for (int q = 0; q < r; ++q) assert_false(pthread_equal(ids.thread[r], ids.thread[q]));
  }
  dist_strategy_destroy(strategy);
}

/* Replica 2 fails while the others wait for it in an all-reduce. */
static dist_status_t fail_one(dist_replica_context_t* replica, void* user_data) {
  (void)user_data;
  int32_t id = 0;
  dist_replica_id(replica, &id);
  if (id == 2) {
    dist_buffer_t bad = buffer_of(NULL, 5, DIST_DTYPE_F32); /* a real library error */
    return dist_replica_all_reduce(replica, DIST_OP_SUM, &bad);
  }
  float x = 1;
  dist_buffer_t b = buffer_of(&x, 1, DIST_DTYPE_F32);
  return dist_replica_all_reduce(replica, DIST_OP_SUM, &b);
}

static dist_status_t user_failure(dist_replica_context_t* replica, void* user_data) {
  (void)user_data;
  int32_t id = 0;
  dist_replica_id(replica, &id);
  return id == 1 ? DIST_ERR_SYSTEM : DIST_OK;
}

static dist_status_t sum_ids(dist_replica_context_t* replica, void* user_data) {
  int32_t id = 0;
  dist_replica_id(replica, &id);
  double value[3] = {id, 10.0 * id, -1};
  dist_buffer_t b = buffer_of(value, 3, DIST_DTYPE_F64);
  dist_status_t status = dist_replica_all_reduce(replica, *(dist_op_t*)user_data, &b);
  if (status != DIST_OK) return status;
  return dist_replica_set_result(replica, &b);
}

static void test_run_error_in_one_replica(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 4);
  assert_dist_error(dist_strategy_run(strategy, fail_one, NULL), DIST_ERR_INVALID_ARGUMENT, "replica 2",
                    "data is NULL for count 5");
  assert_dist_error(dist_strategy_run(strategy, user_failure, NULL), DIST_ERR_SYSTEM, "replica 1",
                    "returned DIST_ERR_SYSTEM");
  /* The strategy works again afterwards. */
  dist_op_t op = DIST_OP_MEAN;
  assert_dist_ok(dist_strategy_run(strategy, sum_ids, &op));
  const dist_buffer_t* results = NULL;
  int32_t count = 0;
  assert_dist_ok(dist_strategy_local_results(strategy, &results, &count));
  assert_int_equal(count, 4);
  for (int r = 0; r < 4; ++r) {
    const double* v = results[r].data;
    assert_int_equal(results[r].count, 3);
    assert_true(v[0] == 1.5 && v[1] == 15.0 && v[2] == -1.0);
  }
  dist_strategy_destroy(strategy);
}

static dist_status_t mismatched_all_reduce(dist_replica_context_t* replica, void* user_data) {
  (void)user_data;
  int32_t id = 0;
  dist_replica_id(replica, &id);
  float x[2] = {1, 2};
  dist_buffer_t b = buffer_of(x, id == 1 ? 2 : 1, DIST_DTYPE_F32);
  return dist_replica_all_reduce(replica, DIST_OP_SUM, &b);
}

static void test_replica_mismatch(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 3);
  assert_dist_error(dist_strategy_run(strategy, mismatched_all_reduce, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "local replicas disagree", "count=2");
  dist_strategy_destroy(strategy);
}

struct merge_job {
  int calls;
  double seen[4];
  dist_strategy_t* strategy;
};

static dist_status_t merge_fn(dist_strategy_t* strategy, void* const* values, int32_t n, void* user_data) {
  struct merge_job* job = user_data;
  if (strategy != job->strategy) return DIST_ERR_INTERNAL;
  job->calls++;
  for (int32_t i = 0; i < n; ++i) job->seen[i] = *(double*)values[i];
  return DIST_OK;
}

static dist_status_t call_merge(dist_replica_context_t* replica, void* user_data) {
  int32_t id = 0;
  dist_replica_id(replica, &id);
  double mine = 100.0 + id;
  return dist_replica_merge_call(replica, merge_fn, &mine, user_data);
}

static void test_merge_call(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 4);
  struct merge_job job;
  memset(&job, 0, sizeof job);
  job.strategy = strategy;
  assert_dist_ok(dist_strategy_run(strategy, call_merge, &job));
  assert_int_equal(job.calls, 1);
  for (int i = 0; i < 4; ++i) assert_true(job.seen[i] == 100.0 + i);
  job.strategy = NULL; /* the merge function now fails: every replica reports it */
  assert_dist_error(dist_strategy_run(strategy, call_merge, &job), DIST_ERR_INTERNAL, "merge function");
  dist_strategy_destroy(strategy);
}

/* Cross-replica calls are refused inside a replica function (they would race
 * the other replicas) and work inside a merge call. */
struct context_job {
  dist_variable_t* v;
  dist_status_t in_replica[3][3]; /* [replica][call] */
};

static dist_status_t assign_sum(dist_strategy_t* strategy, void* const* values, int32_t n, void* user_data) {
  (void)strategy;
  struct context_job* job = user_data;
  float sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += *(float*)values[i];
  dist_buffer_t b = buffer_of(&sum, 1, DIST_DTYPE_F32);
  return dist_variable_assign(job->v, NULL, &b); /* cross-replica: every copy */
}

static dist_status_t try_cross_replica_calls(dist_replica_context_t* replica, void* user_data) {
  struct context_job* job = user_data;
  int32_t id = 0;
  dist_replica_id(replica, &id);
  dist_strategy_t* strategy = NULL;
  dist_replica_strategy(replica, &strategy);
  float x = 0;
  dist_buffer_t b = buffer_of(&x, 1, DIST_DTYPE_F32);
  dist_variable_t* created = NULL;
  job->in_replica[id][0] = dist_variable_read(job->v, NULL, &b);
  job->in_replica[id][1] = dist_variable_create(strategy, NULL, &created);
  job->in_replica[id][2] = dist_strategy_reduce(strategy, DIST_OP_SUM, &b, 1, DIST_AXIS_NONE, &b);
  float mine = (float)(id + 1);
  return dist_replica_merge_call(replica, assign_sum, &mine, job);
}

static void test_cross_replica_context_rules(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 3);
  struct context_job job;
  assert_dist_ok(dist_variable_create(strategy, NULL, &job.v));
  assert_dist_ok(dist_strategy_run(strategy, try_cross_replica_calls, &job));
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 3; ++i) assert_int_equal(job.in_replica[r][i], DIST_ERR_INVALID_ARGUMENT);
  }
  float got[3] = {0, 0, 0};
  for (int32_t c = 0; c < 3; ++c) {
    dist_buffer_t b = buffer_of(&got[c], 1, DIST_DTYPE_F32);
    assert_dist_ok(dist_variable_read_copy(job.v, c, &b));
    assert_true(got[c] == 6.0f); /* 1 + 2 + 3, assigned once in the merge call */
  }
  dist_variable_destroy(job.v);
  dist_strategy_destroy(strategy);
}

static void test_reduce(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 3);
  /* axis none: element-wise over replicas. */
  double a[3][2] = {{1, 2}, {3, 4}, {5, 6.5}};
  dist_buffer_t values[3];
  for (int r = 0; r < 3; ++r) values[r] = buffer_of(a[r], 2, DIST_DTYPE_F64);
  double out[2];
  dist_buffer_t result = buffer_of(out, 2, DIST_DTYPE_F64);
  assert_dist_ok(dist_strategy_reduce(strategy, DIST_OP_SUM, values, 3, DIST_AXIS_NONE, &result));
  assert_true(out[0] == 9 && out[1] == 12.5);
  assert_dist_ok(dist_strategy_reduce(strategy, DIST_OP_MEAN, values, 3, DIST_AXIS_NONE, &result));
  assert_true(out[0] == 3 && out[1] == 12.5 / 3);

  /* axis 0, a partial last batch: rows 3, 3 and 1 of 2 elements. */
  float rows[3][6] = {{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}, {13, 14, 0, 0, 0, 0}};
  const uint64_t counts[3] = {6, 6, 2};
  double sum[2] = {0, 0};
  for (int r = 0; r < 3; ++r) {
    values[r] = buffer_of(rows[r], counts[r], DIST_DTYPE_F32);
    for (uint64_t i = 0; i < counts[r]; ++i) sum[i % 2] += rows[r][i];
  }
  float f[2];
  result = buffer_of(f, 2, DIST_DTYPE_F32);
  assert_dist_ok(dist_strategy_reduce(strategy, DIST_OP_SUM, values, 3, 0, &result));
  assert_true(f[0] == (float)sum[0] && f[1] == (float)sum[1]);
  assert_dist_ok(dist_strategy_reduce(strategy, DIST_OP_MEAN, values, 3, 0, &result));
  /* The true global row count is 7, not 3 replicas * 3 rows. */
  assert_true(fabsf(f[0] - (float)(sum[0] / 7)) < 1e-6f && fabsf(f[1] - (float)(sum[1] / 7)) < 1e-6f);

  /* An empty batch on one replica is fine; an empty group is not. */
  values[2] = buffer_of(NULL, 0, DIST_DTYPE_F32);
  assert_dist_ok(dist_strategy_reduce(strategy, DIST_OP_MEAN, values, 3, 0, &result));
  assert_true(f[0] == (float)((1 + 3 + 5 + 7 + 9 + 11) / 6.0));
  for (int r = 0; r < 3; ++r) values[r] = buffer_of(NULL, 0, DIST_DTYPE_F32);
  assert_dist_error(dist_strategy_reduce(strategy, DIST_OP_MEAN, values, 3, 0, &result), DIST_ERR_INVALID_ARGUMENT,
                    "empty batch");

  /* Bad input. */
  for (int r = 0; r < 3; ++r) values[r] = buffer_of(rows[r], 5, DIST_DTYPE_F32);
  assert_dist_error(dist_strategy_reduce(strategy, DIST_OP_SUM, values, 3, 0, &result), DIST_ERR_INVALID_ARGUMENT,
                    "values[0] has count 5, not whole rows of 2");
  assert_dist_error(dist_strategy_reduce(strategy, DIST_OP_SUM, values, 3, DIST_AXIS_NONE, &result),
                    DIST_ERR_INVALID_ARGUMENT, "values[0] has count 5, expected 2");
  assert_dist_error(dist_strategy_reduce(strategy, DIST_OP_MAX, values, 3, 0, &result), DIST_ERR_INVALID_ARGUMENT,
                    "not SUM or MEAN");
  assert_dist_error(dist_strategy_reduce(strategy, DIST_OP_SUM, values, 3, 1, &result), DIST_ERR_INVALID_ARGUMENT,
                    "axis 1");
  assert_dist_error(dist_strategy_reduce(strategy, DIST_OP_SUM, values, 2, 0, &result), DIST_ERR_INVALID_ARGUMENT,
                    "2 values given for 3 local replicas");
  dist_strategy_destroy(strategy);
}

/* Fused batch all-reduce of i32 tensors equals a replica all-reduce per tensor,
 * bit for bit, across bucket sizes that pack, split and straddle. */
enum { kTensors = 5 };
static const uint64_t kSizes[kTensors] = {1, 300, 7, 2049, 64};

static void test_fused_equals_unfused(void** state) {
  (void)state;
  const uint64_t packs[] = {4, 64, 1000, 1 << 20};
  for (size_t p = 0; p < sizeof packs / sizeof packs[0]; ++p) {
    dist_strategy_t* strategy = create_strategy(DIST_STRATEGY_MIRRORED, 2, packs[p], 0);
    struct unfused_all_reduce unfused = {kTensors, kSizes, {{NULL}}};
    dist_buffer_t fused[2 * kTensors];
    int32_t* fused_data[2][kTensors];
    for (int r = 0; r < 2; ++r) {
      for (int i = 0; i < kTensors; ++i) {
        unfused.tensors[r][i] = malloc(kSizes[i] * sizeof(int32_t));
        fused_data[r][i] = malloc(kSizes[i] * sizeof(int32_t));
        for (uint64_t e = 0; e < kSizes[i]; ++e) {
          unfused.tensors[r][i][e] = (int32_t)(e * 2654435761u + (uint32_t)(r * 7 + i));
          fused_data[r][i][e] = unfused.tensors[r][i][e];
        }
        fused[r * kTensors + i] = buffer_of(fused_data[r][i], kSizes[i], DIST_DTYPE_I32);
      }
    }
    assert_dist_ok(dist_strategy_run(strategy, unfused_all_reduce_each, &unfused));
    assert_dist_ok(dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, fused, kTensors));
    for (int r = 0; r < 2; ++r) {
      for (int i = 0; i < kTensors; ++i) {
        assert_memory_equal(fused_data[r][i], unfused.tensors[r][i], kSizes[i] * sizeof(int32_t));
        /* And both equal the sum the test computes itself (wrapping in uint32). */
        for (uint64_t e = 0; e < kSizes[i]; ++e) {
          const uint32_t want = (uint32_t)(e * 2654435761u + (uint32_t)i) + (uint32_t)(e * 2654435761u + (uint32_t)(7 + i));
          assert_int_equal((uint32_t)fused_data[r][i][e], want);
        }
        free(unfused.tensors[r][i]);
        free(fused_data[r][i]);
      }
    }
    assert_dist_error(dist_strategy_batch_all_reduce(strategy, DIST_OP_PROD, fused, kTensors),
                      DIST_ERR_INVALID_ARGUMENT, "not SUM or MEAN");
    dist_strategy_destroy(strategy);
  }
}

/* Tensors of several dtypes in one call: each dtype is its own stream of
 * buckets; MEAN divides by the replicas (integers truncate). */
static void test_fused_mixed_dtypes(void** state) {
  (void)state;
  dist_strategy_t* strategy = create_strategy(DIST_STRATEGY_MIRRORED, 2, 64, 0);
  float f[2][40];
  double d[2][3];
  int64_t i[2][5];
  for (int r = 0; r < 2; ++r) {
    for (int e = 0; e < 40; ++e) f[r][e] = (float)(e + 10 * r) * 0.5f;
    for (int e = 0; e < 3; ++e) d[r][e] = (double)(e * 3 + r) / 7.0;
    for (int e = 0; e < 5; ++e) i[r][e] = (int64_t)e * 11 - 3 * r;
  }
  float fw[40];
  double dw[3];
  int64_t iw[5];
  for (int e = 0; e < 40; ++e) fw[e] = (f[0][e] + f[1][e]) / 2.0f;
  for (int e = 0; e < 3; ++e) dw[e] = (d[0][e] + d[1][e]) / 2.0;
  for (int e = 0; e < 5; ++e) iw[e] = (i[0][e] + i[1][e]) / 2;
  dist_buffer_t buffers[6];
  for (int r = 0; r < 2; ++r) {
    buffers[r * 3 + 0] = buffer_of(f[r], 40, DIST_DTYPE_F32);
    buffers[r * 3 + 1] = buffer_of(i[r], 5, DIST_DTYPE_I64);
    buffers[r * 3 + 2] = buffer_of(d[r], 3, DIST_DTYPE_F64);
  }
  assert_dist_ok(dist_strategy_batch_all_reduce(strategy, DIST_OP_MEAN, buffers, 3));
  for (int r = 0; r < 2; ++r) {
    assert_memory_equal(f[r], fw, sizeof fw);
    assert_memory_equal(d[r], dw, sizeof dw);
    assert_memory_equal(i[r], iw, sizeof iw);
  }
  dist_strategy_destroy(strategy);
}

/* apply_gradients (fused, mean, SGD/Momentum/Adam) against the test's own
 * unfused arithmetic in double precision. */
static void test_apply_gradients_matches_reference(void** state) {
  (void)state;
  enum { kVars = 3, kSteps = 4 };
  const uint64_t sizes[kVars] = {5, 1000, 33};
  const dist_optimizer_kind_t kinds[3] = {DIST_OPTIMIZER_SGD, DIST_OPTIMIZER_MOMENTUM, DIST_OPTIMIZER_ADAM};
  for (int k = 0; k < 3; ++k) {
    dist_strategy_t* strategy = create_strategy(DIST_STRATEGY_MIRRORED, 3, 256, 0);
    const dist_optimizer_options_t opt = optimizer_options(kinds[k], 0.05);
    dist_optimizer_t* optimizer = NULL;
    assert_dist_ok(dist_optimizer_create(&opt, &optimizer));
    dist_variable_t* vars[kVars];
    double* reference[kVars];
    double* slot_m[kVars];
    double* slot_v[kVars];
    float* grads[3][kVars];
    dist_buffer_t grad_buffers[3 * kVars];
    for (int i = 0; i < kVars; ++i) {
      float* initial = malloc(sizes[i] * sizeof(float));
      reference[i] = calloc(sizes[i], sizeof(double));
      slot_m[i] = calloc(sizes[i], sizeof(double));
      slot_v[i] = calloc(sizes[i], sizeof(double));
      for (uint64_t e = 0; e < sizes[i]; ++e) reference[i][e] = initial[e] = (float)sin((double)(e + 1) * (i + 1));
      int64_t shape[1] = {(int64_t)sizes[i]};
      dist_variable_options_t vo = DIST_VARIABLE_OPTIONS_INIT;
      vo.field_mask = DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
      vo.shape = shape;
      vo.rank = 1;
      vo.initial_value = initial;
      assert_dist_ok(dist_variable_create(strategy, &vo, &vars[i]));
      free(initial);
      for (int r = 0; r < 3; ++r) {
        grads[r][i] = malloc(sizes[i] * sizeof(float));
        grad_buffers[r * kVars + i] = buffer_of(grads[r][i], sizes[i], DIST_DTYPE_F32);
      }
    }
    for (int step = 1; step <= kSteps; ++step) {
      for (int i = 0; i < kVars; ++i) {
        for (uint64_t e = 0; e < sizes[i]; ++e) {
          double mean = 0;
          for (int r = 0; r < 3; ++r) {
            grads[r][i][e] = (float)cos((double)(e * 3 + (uint64_t)r + (uint64_t)step));
            mean += grads[r][i][e];
          }
          mean /= 3;
          if (kinds[k] == DIST_OPTIMIZER_SGD) {
            reference[i][e] -= 0.05 * mean;
          } else if (kinds[k] == DIST_OPTIMIZER_MOMENTUM) {
            slot_m[i][e] = 0.9 * slot_m[i][e] - 0.05 * mean;
            reference[i][e] += slot_m[i][e];
          } else {
            slot_m[i][e] = 0.9 * slot_m[i][e] + 0.1 * mean;
            slot_v[i][e] = 0.999 * slot_v[i][e] + 0.001 * mean * mean;
            const double lr = 0.05 * sqrt(1 - pow(0.999, step)) / (1 - pow(0.9, step));
            reference[i][e] -= lr * slot_m[i][e] / (sqrt(slot_v[i][e]) + 1e-7);
          }
        }
      }
      assert_dist_ok(dist_strategy_apply_gradients(strategy, vars, grad_buffers, kVars, optimizer));
    }
    int64_t iterations = 0;
    assert_dist_ok(dist_optimizer_iterations(optimizer, &iterations));
    assert_int_equal(iterations, kSteps);
    for (int i = 0; i < kVars; ++i) {
      float* copy0 = malloc(sizes[i] * sizeof(float));
      float* copy = malloc(sizes[i] * sizeof(float));
      dist_buffer_t b0 = buffer_of(copy0, sizes[i], DIST_DTYPE_F32);
      dist_buffer_t b = buffer_of(copy, sizes[i], DIST_DTYPE_F32);
      assert_dist_ok(dist_variable_read_copy(vars[i], 0, &b0));
      for (int c = 1; c < 3; ++c) {
        assert_dist_ok(dist_variable_read_copy(vars[i], c, &b));
        assert_memory_equal(copy, copy0, sizes[i] * sizeof(float)); /* mirrored copies stay identical */
      }
      for (uint64_t e = 0; e < sizes[i]; ++e) {
        if (fabs(copy0[e] - reference[i][e]) > 1e-5) {
          fail_msg("optimizer %d var %d element %llu: %.9g, expected %.9g", k, i, (unsigned long long)e, copy0[e],
                   reference[i][e]);
        }
      }
      free(copy0);
      free(copy);
      free(reference[i]);
      free(slot_m[i]);
      free(slot_v[i]);
      for (int r = 0; r < 3; ++r) free(grads[r][i]);
      dist_variable_destroy(vars[i]);
    }
    dist_optimizer_destroy(optimizer);
    dist_strategy_destroy(strategy);
  }
}

/* SGD's step is exactly w - lr * (sum / replicas) in float, bit for bit, for
 * a replica count that is a power of two (where the library multiplies by the
 * exact reciprocal instead of dividing) and one that is not. */
static void test_apply_gradients_mean_is_exact(void** state) {
  (void)state;
  enum { kCount = 1001 };
  const int counts[2] = {3, 4};
  for (int c = 0; c < 2; ++c) {
    const int n = counts[c];
    dist_strategy_t* strategy = create_strategy(DIST_STRATEGY_MIRRORED, n, 0, 0);
    const dist_optimizer_options_t opt = optimizer_options(DIST_OPTIMIZER_SGD, 0.1);
    dist_optimizer_t* optimizer = NULL;
    assert_dist_ok(dist_optimizer_create(&opt, &optimizer));
    static float initial[kCount], grads[4][kCount], want[kCount], got[kCount];
    dist_buffer_t grad_buffers[4];
    for (int e = 0; e < kCount; ++e) {
      initial[e] = (float)sin(e * 0.7);
      float sum = 0;
      for (int r = 0; r < n; ++r) {
        grads[r][e] = (float)cos(e * 1.3 + r) / 3.0f;
        sum = r == 0 ? grads[r][e] : sum + grads[r][e]; /* in replica order, as reduce_many */
      }
      want[e] = initial[e] - 0.1f * (sum / (float)n);
    }
    for (int r = 0; r < n; ++r) grad_buffers[r] = buffer_of(grads[r], kCount, DIST_DTYPE_F32);
    int64_t shape[1] = {kCount};
    dist_variable_options_t vo = DIST_VARIABLE_OPTIONS_INIT;
    vo.field_mask = DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
    vo.shape = shape;
    vo.rank = 1;
    vo.initial_value = initial;
    dist_variable_t* v = NULL;
    assert_dist_ok(dist_variable_create(strategy, &vo, &v));
    assert_dist_ok(dist_strategy_apply_gradients(strategy, &v, grad_buffers, 1, optimizer));
    dist_buffer_t out = buffer_of(got, kCount, DIST_DTYPE_F32);
    assert_dist_ok(dist_variable_read(v, NULL, &out));
    for (int e = 0; e < kCount; ++e) {
      if (memcmp(&got[e], &want[e], sizeof(float)) != 0) {
        fail_msg("%d replicas, element %d: %.9g, expected %.9g", n, e, got[e], want[e]);
      }
    }
    dist_variable_destroy(v);
    dist_optimizer_destroy(optimizer);
    dist_strategy_destroy(strategy);
  }
}

static void test_apply_gradients_arguments(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 2);
  dist_strategy_t* other = make_strategy(DIST_STRATEGY_MIRRORED, 2);
  dist_optimizer_t* optimizer = NULL;
  dist_optimizer_options_t opt = DIST_OPTIMIZER_OPTIONS_INIT;
  opt.field_mask = DIST_OPTIMIZER_OPT_LEARNING_RATE;
  opt.learning_rate = 0;
  assert_dist_error(dist_optimizer_create(&opt, &optimizer), DIST_ERR_INVALID_ARGUMENT, "learning_rate");
  opt.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_BETA_2;
  opt.kind = DIST_OPTIMIZER_ADAM;
  opt.beta_2 = 1.0;
  assert_dist_error(dist_optimizer_create(&opt, &optimizer), DIST_ERR_INVALID_ARGUMENT, "beta_2");
  opt.field_mask = DIST_OPTIMIZER_OPT_KIND;
  opt.kind = 9;
  assert_dist_error(dist_optimizer_create(&opt, &optimizer), DIST_ERR_INVALID_ARGUMENT, "optimizer kind 9");
  assert_dist_ok(dist_optimizer_create(NULL, &optimizer));

  dist_variable_t* v = NULL;
  dist_variable_t* foreign = NULL;
  dist_variable_t* on_read = NULL;
  dist_variable_t* integer = NULL;
  assert_dist_ok(dist_variable_create(strategy, NULL, &v));
  assert_dist_ok(dist_variable_create(other, NULL, &foreign));
  dist_variable_options_t vo = DIST_VARIABLE_OPTIONS_INIT;
  vo.field_mask = DIST_VARIABLE_OPT_SYNCHRONIZATION;
  vo.synchronization = DIST_SYNC_ON_READ;
  assert_dist_ok(dist_variable_create(strategy, &vo, &on_read));
  vo.field_mask = DIST_VARIABLE_OPT_DTYPE;
  vo.dtype = DIST_DTYPE_I32;
  assert_dist_ok(dist_variable_create(strategy, &vo, &integer));
  float g[2] = {1, 1};
  int32_t gi[2] = {1, 1};
  dist_buffer_t grads[2] = {buffer_of(&g[0], 1, DIST_DTYPE_F32), buffer_of(&g[1], 1, DIST_DTYPE_F32)};
  dist_buffer_t igrads[2] = {buffer_of(&gi[0], 1, DIST_DTYPE_I32), buffer_of(&gi[1], 1, DIST_DTYPE_I32)};
  assert_dist_error(dist_strategy_apply_gradients(strategy, &foreign, grads, 1, optimizer), DIST_ERR_INVALID_ARGUMENT,
                    "another strategy");
  assert_dist_error(dist_strategy_apply_gradients(strategy, &on_read, grads, 1, optimizer), DIST_ERR_INVALID_ARGUMENT,
                    "ON_READ");
  assert_dist_error(dist_strategy_apply_gradients(strategy, &integer, igrads, 1, optimizer), DIST_ERR_INVALID_ARGUMENT,
                    "f32 and f64");
  assert_dist_error(dist_strategy_apply_gradients(strategy, &v, igrads, 1, optimizer), DIST_ERR_INVALID_ARGUMENT,
                    "is f32 but replica 0's gradient of vars[0] is i32");
  assert_dist_error(dist_strategy_apply_gradients(strategy, &v, grads, 1, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "optimizer is NULL");
  dist_buffer_t mismatched[2] = {buffer_of(&g[0], 1, DIST_DTYPE_F32), buffer_of(g, 2, DIST_DTYPE_F32)};
  assert_dist_error(dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, mismatched, 1), DIST_ERR_INVALID_ARGUMENT,
                    "replica 1's tensor 0 is f32[2]");
  dist_variable_t* twice[2] = {v, v};
  float g4[4] = {1, 1, 1, 1};
  dist_buffer_t two_grads[4] = {buffer_of(&g4[0], 1, DIST_DTYPE_F32), buffer_of(&g4[1], 1, DIST_DTYPE_F32),
                                buffer_of(&g4[2], 1, DIST_DTYPE_F32), buffer_of(&g4[3], 1, DIST_DTYPE_F32)};
  assert_dist_error(dist_strategy_apply_gradients(strategy, twice, two_grads, 2, optimizer),
                    DIST_ERR_INVALID_ARGUMENT, "vars[0] and vars[1] are the same variable");
  dist_buffer_t aliased[2] = {buffer_of(g4, 2, DIST_DTYPE_F32), buffer_of(&g4[1], 2, DIST_DTYPE_F32)};
  assert_dist_error(dist_strategy_batch_all_reduce(strategy, DIST_OP_SUM, aliased, 1), DIST_ERR_INVALID_ARGUMENT,
                    "replica 1's tensor 0 overlaps replica 0's tensor 0");
  /* Nothing failed half-way: v is untouched, and no step was counted. */
  int64_t iterations = -1;
  assert_dist_ok(dist_optimizer_iterations(optimizer, &iterations));
  assert_int_equal(iterations, 0);
  assert_dist_ok(dist_strategy_apply_gradients(strategy, &v, grads, 1, optimizer));
  float value = 0;
  dist_buffer_t out = buffer_of(&value, 1, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_read(v, NULL, &out));
  assert_true(value == -0.01f);
  dist_variable_destroy(v);
  dist_variable_destroy(foreign);
  dist_variable_destroy(on_read);
  dist_variable_destroy(integer);
  dist_optimizer_destroy(optimizer);
  dist_optimizer_destroy(NULL);
  dist_strategy_destroy(strategy);
  dist_strategy_destroy(other);
}

static void test_input_context(void** state) {
  (void)state;
  dist_input_context_t* input = NULL;
  assert_dist_ok(dist_input_context_create(3, 1, 6, &input));
  int64_t per = 0, begin = -1, count = -1, files[8];
  assert_dist_ok(dist_input_context_per_replica_batch_size(input, 48, &per));
  assert_int_equal(per, 8);
  assert_dist_error(dist_input_context_per_replica_batch_size(input, 50, &per), DIST_ERR_INVALID_ARGUMENT,
                    "50 is not divisible", "(6)");
  assert_dist_ok(dist_input_context_shard_files(input, 8, files, 8, &count));
  assert_int_equal(count, 3);
  assert_true(files[0] == 1 && files[1] == 4 && files[2] == 7);
  assert_dist_error(dist_input_context_shard_files(input, 2, files, 8, &count), DIST_ERR_INVALID_ARGUMENT,
                    "2 files cannot be sharded across 3 input pipelines", "pipelines 2..2 would get none");
  assert_dist_error(dist_input_context_shard_files(input, 8, files, 2, &count), DIST_ERR_INVALID_ARGUMENT,
                    "room for 2 files");
  /* 10 = 4 + 3 + 3: pipeline 1 gets [4, 7). */
  assert_dist_ok(dist_input_context_shard_range(input, 10, &begin, &count));
  assert_true(begin == 4 && count == 3);
  /* Fewer indices than pipelines: pipeline 1 of 3 gets 1 of 2, pipeline 2 none. */
  assert_dist_ok(dist_input_context_shard_range(input, 2, &begin, &count));
  assert_true(begin == 1 && count == 1);
  dist_input_context_destroy(input);
  assert_dist_ok(dist_input_context_create(3, 2, 3, &input));
  assert_dist_ok(dist_input_context_shard_range(input, 2, &begin, &count));
  assert_int_equal(count, 0);
  dist_input_context_destroy(input);
  dist_input_context_destroy(NULL);
  assert_dist_error(dist_input_context_create(2, 2, 1, &input), DIST_ERR_INVALID_ARGUMENT, "input_pipeline_id 2");
  assert_dist_error(dist_input_context_create(0, 0, 1, &input), DIST_ERR_INVALID_ARGUMENT, "num_input_pipelines 0");

  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 4);
  assert_dist_ok(dist_strategy_input_context(strategy, &input));
  int32_t pipelines = 0, id = -1, replicas = 0;
  assert_dist_ok(dist_input_context_num_input_pipelines(input, &pipelines));
  assert_dist_ok(dist_input_context_input_pipeline_id(input, &id));
  assert_dist_ok(dist_input_context_num_replicas_in_sync(input, &replicas));
  assert_true(pipelines == 1 && id == 0 && replicas == 4);
  dist_input_context_destroy(input);

  /* A partial batch of 10 rows of 3 on 4 replicas: 3, 3, 3, 1 rows. */
  float batch[30];
  for (int i = 0; i < 30; ++i) batch[i] = (float)i;
  dist_buffer_t whole = buffer_of(batch, 30, DIST_DTYPE_F32);
  dist_buffer_t parts[4];
  assert_dist_ok(dist_strategy_split_batch(strategy, &whole, 10, parts, 4));
  const uint64_t want[4] = {9, 9, 9, 3};
  for (int r = 0; r < 4; ++r) {
    assert_int_equal(parts[r].count, want[r]);
    assert_ptr_equal(parts[r].data, batch + 9 * r);
  }
  /* 2 rows on 4 replicas: the last two get none. */
  assert_dist_ok(dist_strategy_split_batch(strategy, &whole, 2, parts, 4));
  assert_true(parts[0].count == 15 && parts[1].count == 15 && parts[2].count == 0 && parts[3].count == 0);
  assert_dist_error(dist_strategy_split_batch(strategy, &whole, 7, parts, 4), DIST_ERR_INVALID_ARGUMENT,
                    "not whole rows");
  assert_dist_error(dist_strategy_split_batch(strategy, &whole, 10, parts, 3), DIST_ERR_INVALID_ARGUMENT,
                    "3 entries for 4 local replicas");
  dist_strategy_destroy(strategy);
}

/* The same training code (linear regression, one gradient per replica on its
 * share of the global batch) under ONE_DEVICE and MIRRORED(4) reaches the same
 * weights: the mean of per-replica mean gradients is the global mean. */
static void train_regression(dist_strategy_t* strategy, float weights[kRegressionFeatures]) {
  dist_optimizer_options_t opt = DIST_OPTIMIZER_OPTIONS_INIT;
  opt.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE;
  opt.kind = DIST_OPTIMIZER_MOMENTUM;
  opt.learning_rate = 0.02;
  assert_dist_ok(regression_train(strategy, &opt, 300, weights));
}

static void test_strategy_switch_keeps_training_code(void** state) {
  (void)state;
  float one[kRegressionFeatures], mirrored[kRegressionFeatures], central[kRegressionFeatures];
  dist_strategy_t* s = make_strategy(DIST_STRATEGY_ONE_DEVICE, 1);
  train_regression(s, one);
  dist_strategy_destroy(s);
  s = make_strategy(DIST_STRATEGY_MIRRORED, 4);
  train_regression(s, mirrored);
  dist_strategy_destroy(s);
  s = make_strategy(DIST_STRATEGY_CENTRAL_STORAGE, 2);
  train_regression(s, central);
  dist_strategy_destroy(s);
  for (int f = 0; f < kRegressionFeatures; ++f) {
    assert_true(fabsf(one[f] - mirrored[f]) < 1e-4f);
    assert_true(fabsf(one[f] - central[f]) < 1e-4f);
    /* And training worked: the weights approach y's coefficients f + 1. */
    assert_true(fabsf(one[f] - (float)(f + 1)) < 0.05f);
  }
}

/* bind_threads: each replica thread is pinned to one PU, different PUs when
 * the process may use enough of them. */
struct affinity {
  int count[2];
  int first[2];
};

static dist_status_t record_affinity(dist_replica_context_t* replica, void* user_data) {
  struct affinity* a = user_data;
  int32_t r = 0;
  dist_replica_local_index(replica, &r);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return DIST_ERR_SYSTEM;
  a->count[r] = CPU_COUNT(&set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      a->first[r] = cpu;
      break;
    }
  }
  return DIST_OK;
}

static void test_bind_threads(void** state) {
  (void)state;
  if ((dist_build_features() & DIST_FEATURE_HWLOC) == 0) skip();
  dist_strategy_t* strategy = create_strategy(DIST_STRATEGY_MIRRORED, 2, 0, 1);
  struct affinity a;
  memset(&a, 0, sizeof a);
  assert_dist_ok(dist_strategy_run(strategy, record_affinity, &a));
  assert_int_equal(a.count[0], 1);
  assert_int_equal(a.count[1], 1);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) >= 2) assert_int_not_equal(a.first[0], a.first[1]);
  dist_strategy_destroy(strategy);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_and_query),
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_cross_device_ops_on_cpus),
      cmocka_unit_test(test_run_threads_and_ids),
      cmocka_unit_test(test_bind_threads),
      cmocka_unit_test(test_run_error_in_one_replica),
      cmocka_unit_test(test_replica_mismatch),
      cmocka_unit_test(test_merge_call),
      cmocka_unit_test(test_cross_replica_context_rules),
      cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_fused_equals_unfused),
      cmocka_unit_test(test_fused_mixed_dtypes),
      cmocka_unit_test(test_apply_gradients_matches_reference),
      cmocka_unit_test(test_apply_gradients_mean_is_exact),
      cmocka_unit_test(test_apply_gradients_arguments),
      cmocka_unit_test(test_input_context),
      cmocka_unit_test(test_strategy_switch_keeps_training_code),
  };
  return cmocka_run_group_tests_name("strategy", tests, NULL, NULL);
}
