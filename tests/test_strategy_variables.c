/* Distributed variables in one process: every synchronization x aggregation x
 * update kind, in replica context (3 local replicas of a MIRRORED strategy,
 * CENTRAL_STORAGE and ONE_DEVICE) and in cross-replica context, against
 * expected values this file computes from tf.distribute's rules. */
#include "strategy_test_support.h"

enum { kReplicas = 3, kCount = 2 };
static const double kInitial[kCount] = {10.0, 20.0};
static const double kCrossValue[kCount] = {5.0, 7.0};

static dist_buffer_t f64(double* data, uint64_t count) {
  dist_buffer_t b = {data, count, DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
  return b;
}

static dist_variable_t* make_variable(dist_strategy_t* strategy, dist_synchronization_t sync,
                                      dist_aggregation_t aggregation) {
  static const int64_t shape[1] = {kCount};
  dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
  options.field_mask = DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_SHAPE |
                       DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_SYNCHRONIZATION |
                       DIST_VARIABLE_OPT_AGGREGATION;
  options.name = "v";
  options.dtype = DIST_DTYPE_F64;
  options.shape = shape;
  options.rank = 1;
  options.initial_value = kInitial;
  options.synchronization = sync;
  options.aggregation = aggregation;
  dist_variable_t* variable = NULL;
  assert_dist_ok(dist_variable_create(strategy, &options, &variable));
  return variable;
}

/* x op= value, as the test's own reference. */
static double updated(double x, double value, int kind) {
  return kind == 0 ? value : kind == 1 ? x + value : x - value;
}

typedef dist_status_t (*update_fn)(dist_variable_t*, dist_replica_context_t*, const dist_buffer_t*);
static const update_fn kUpdates[3] = {dist_variable_assign, dist_variable_assign_add, dist_variable_assign_sub};

/* Replica r contributes {r + 1, 2 (r + 1)}. */
static double replica_value(int32_t replica, int i) { return (double)(replica + 1) * (double)(i + 1); }

struct replica_update {
  dist_variable_t* variable;
  int kind;
  double read_back[kReplicas][kCount]; /* what each replica reads right after */
};

static dist_status_t update_in_replica(dist_replica_context_t* replica, void* user_data) {
  struct replica_update* job = user_data;
  int32_t id = -1;
  dist_status_t status = dist_replica_id(replica, &id);
  if (status != DIST_OK) return status;
  double value[kCount];
  for (int i = 0; i < kCount; ++i) value[i] = replica_value(id, i);
  dist_buffer_t b = f64(value, kCount);
  status = kUpdates[job->kind](job->variable, replica, &b);
  if (status != DIST_OK) return status;
  dist_buffer_t out = f64(job->read_back[id], kCount);
  return dist_variable_read(job->variable, replica, &out);
}

static void expect_copies(dist_variable_t* variable, double expected[][kCount], int32_t copies) {
  int32_t got = 0;
  assert_dist_ok(dist_variable_num_copies(variable, &got));
  assert_int_equal(got, copies);
  for (int32_t c = 0; c < copies; ++c) {
    double value[kCount];
    dist_buffer_t out = f64(value, kCount);
    assert_dist_ok(dist_variable_read_copy(variable, c, &out));
    for (int i = 0; i < kCount; ++i) {
      if (value[i] != expected[c][i]) fail_msg("copy %d element %d = %g, expected %g", c, i, value[i], expected[c][i]);
    }
  }
}

/* The aggregate of the replicas' values {1,2,3} * (i + 1) by `aggregation`. */
static double aggregate(dist_aggregation_t aggregation, int i, int32_t replicas) {
  double sum = 0;
  for (int32_t r = 0; r < replicas; ++r) sum += replica_value(r, i);
  if (aggregation == DIST_AGGREGATION_SUM) return sum;
  if (aggregation == DIST_AGGREGATION_MEAN) return sum / replicas;
  return replica_value(0, i);
}

static void check_replica_context(dist_strategy_kind_t kind, int32_t replicas, int32_t mirrored_copies) {
  const dist_aggregation_t aggregations[] = {DIST_AGGREGATION_NONE, DIST_AGGREGATION_SUM, DIST_AGGREGATION_MEAN,
                                             DIST_AGGREGATION_ONLY_FIRST_REPLICA};
  const dist_synchronization_t syncs[] = {DIST_SYNC_AUTO, DIST_SYNC_ON_WRITE, DIST_SYNC_ON_READ};
  for (size_t s = 0; s < 3; ++s) {
    for (size_t a = 0; a < 4; ++a) {
      for (int k = 0; k < 3; ++k) {
        dist_strategy_t* strategy = make_strategy(kind, replicas);
        dist_variable_t* variable = make_variable(strategy, syncs[s], aggregations[a]);
        struct replica_update job;
        memset(&job, 0, sizeof job);
        job.variable = variable;
        job.kind = k;
        dist_status_t status = dist_strategy_run(strategy, update_in_replica, &job);
        double expected[kReplicas][kCount];
        const int on_read = syncs[s] == DIST_SYNC_ON_READ;
        if (!on_read && aggregations[a] == DIST_AGGREGATION_NONE && replicas > 1) {
          check_error("run", status, DIST_ERR_INVALID_ARGUMENT, "aggregation NONE", "replica context", NULL);
          for (int32_t c = 0; c < mirrored_copies; ++c) memcpy(expected[c], kInitial, sizeof kInitial);
          expect_copies(variable, expected, mirrored_copies);
        } else if (!on_read) {
          assert_dist_ok(status);
          for (int32_t c = 0; c < mirrored_copies; ++c) {
            for (int i = 0; i < kCount; ++i) {
              const double value = aggregations[a] == DIST_AGGREGATION_NONE ? replica_value(0, i)
                                                                            : aggregate(aggregations[a], i, replicas);
              expected[c][i] = updated(kInitial[i], value, k);
            }
          }
          expect_copies(variable, expected, mirrored_copies);
          for (int32_t r = 0; r < replicas; ++r) assert_memory_equal(job.read_back[r], expected[0], sizeof expected[0]);
        } else {
          /* ON_READ: each replica updates and reads its own copy only. */
          assert_dist_ok(status);
          for (int32_t r = 0; r < replicas; ++r) {
            for (int i = 0; i < kCount; ++i) expected[r][i] = updated(kInitial[i], replica_value(r, i), k);
            assert_memory_equal(job.read_back[r], expected[r], sizeof expected[r]);
          }
          expect_copies(variable, expected, replicas);
          /* Cross-replica read aggregates the copies. */
          double read[kCount];
          dist_buffer_t out = f64(read, kCount);
          if (aggregations[a] == DIST_AGGREGATION_NONE) {
            assert_dist_error(dist_variable_read(variable, NULL, &out), DIST_ERR_INVALID_ARGUMENT, "aggregation NONE",
                              "cross-replica");
          } else {
            assert_dist_ok(dist_variable_read(variable, NULL, &out));
            for (int i = 0; i < kCount; ++i) {
              double sum = 0;
              for (int32_t r = 0; r < replicas; ++r) sum += expected[r][i];
              const double want = aggregations[a] == DIST_AGGREGATION_SUM    ? sum
                                  : aggregations[a] == DIST_AGGREGATION_MEAN ? sum / replicas
                                                                             : expected[0][i];
              assert_true(read[i] == want);
            }
          }
        }
        dist_variable_destroy(variable);
        dist_strategy_destroy(strategy);
      }
    }
  }
}

static void test_mirrored_replica_context(void** state) {
  (void)state;
  check_replica_context(DIST_STRATEGY_MIRRORED, kReplicas, kReplicas);
}

static void test_central_storage_replica_context(void** state) {
  (void)state;
  check_replica_context(DIST_STRATEGY_CENTRAL_STORAGE, kReplicas, 1);
}

static void test_one_device_replica_context(void** state) {
  (void)state;
  /* One replica in sync: NONE updates directly, as a plain variable. */
  check_replica_context(DIST_STRATEGY_ONE_DEVICE, 1, 1);
}

static void check_cross_replica_context(dist_strategy_kind_t kind, int32_t mirrored_copies) {
  const dist_aggregation_t aggregations[] = {DIST_AGGREGATION_NONE, DIST_AGGREGATION_SUM, DIST_AGGREGATION_MEAN,
                                             DIST_AGGREGATION_ONLY_FIRST_REPLICA};
  const dist_synchronization_t syncs[] = {DIST_SYNC_ON_WRITE, DIST_SYNC_ON_READ};
  for (size_t s = 0; s < 2; ++s) {
    for (size_t a = 0; a < 4; ++a) {
      for (int k = 0; k < 3; ++k) {
        dist_strategy_t* strategy = make_strategy(kind, kReplicas);
        dist_variable_t* variable = make_variable(strategy, syncs[s], aggregations[a]);
        double value[kCount];
        memcpy(value, kCrossValue, sizeof value);
        dist_buffer_t b = f64(value, kCount);
        dist_status_t status = kUpdates[k](variable, NULL, &b);
        double expected[kReplicas][kCount];
        const int sum_on_read = syncs[s] == DIST_SYNC_ON_READ && aggregations[a] == DIST_AGGREGATION_SUM;
        if (sum_on_read && k != 0) {
          check_error("update", status, DIST_ERR_INVALID_ARGUMENT, "ON_READ", "SUM", "only assign", NULL);
          for (int r = 0; r < kReplicas; ++r) memcpy(expected[r], kInitial, sizeof kInitial);
        } else {
          assert_dist_ok(status);
          for (int r = 0; r < kReplicas; ++r) {
            for (int i = 0; i < kCount; ++i) {
              /* SUM ON_READ stores value / replicas so that reading sums back to value. */
              expected[r][i] = sum_on_read ? kCrossValue[i] / kReplicas : updated(kInitial[i], kCrossValue[i], k);
            }
          }
        }
        expect_copies(variable, expected, syncs[s] == DIST_SYNC_ON_READ ? kReplicas : mirrored_copies);
        if (syncs[s] == DIST_SYNC_ON_WRITE) {
          double read[kCount];
          dist_buffer_t out = f64(read, kCount);
          assert_dist_ok(dist_variable_read(variable, NULL, &out));
          assert_memory_equal(read, expected[0], sizeof read);
        }
        dist_variable_destroy(variable);
        dist_strategy_destroy(strategy);
      }
    }
  }
}

static void test_cross_replica_context(void** state) {
  (void)state;
  check_cross_replica_context(DIST_STRATEGY_MIRRORED, kReplicas);
  check_cross_replica_context(DIST_STRATEGY_CENTRAL_STORAGE, 1);
}

/* Integer MEAN truncates, and assign_sub wraps like the reference. */
static dist_status_t add_i32(dist_replica_context_t* replica, void* user_data) {
  int32_t id = 0;
  dist_replica_id(replica, &id);
  int32_t value = id == 0 ? -7 : id == 1 ? 2 : INT32_MAX;
  dist_buffer_t b = {&value, 1, DIST_DTYPE_I32, DIST_MEMORY_HOST, NULL};
  return dist_variable_assign_sub((dist_variable_t*)user_data, replica, &b);
}

static void test_integer_variables(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, kReplicas);
  const dist_aggregation_t aggregations[2] = {DIST_AGGREGATION_SUM, DIST_AGGREGATION_MEAN};
  for (int a = 0; a < 2; ++a) {
    dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
    options.field_mask = DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_AGGREGATION;
    options.dtype = DIST_DTYPE_I32;
    options.aggregation = aggregations[a];
    dist_variable_t* variable = NULL;
    assert_dist_ok(dist_variable_create(strategy, &options, &variable));
    assert_dist_ok(dist_strategy_run(strategy, add_i32, variable));
    /* Sum of -7, 2, INT32_MAX wraps modulo 2^32; C's int64 arithmetic is the reference. */
    const int64_t sum = -7 + 2 + (int64_t)INT32_MAX;
    const int32_t wrapped_sum = (int32_t)(uint32_t)(uint64_t)sum;
    const int32_t aggregated = a == 0 ? wrapped_sum : wrapped_sum / kReplicas;
    int32_t got = 0;
    dist_buffer_t out = {&got, 1, DIST_DTYPE_I32, DIST_MEMORY_HOST, NULL};
    assert_dist_ok(dist_variable_read(variable, NULL, &out));
    assert_int_equal(got, (int32_t)(uint32_t)(0u - (uint32_t)aggregated));
    dist_variable_destroy(variable);
  }
  dist_strategy_destroy(strategy);
}

static void test_variable_arguments(void** state) {
  (void)state;
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_MIRRORED, 2);
  dist_variable_t* variable = NULL;
  dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
  options.field_mask = DIST_VARIABLE_OPT_SYNCHRONIZATION;
  options.synchronization = DIST_SYNC_NONE;
  assert_dist_error(dist_variable_create(strategy, &options, &variable), DIST_ERR_INVALID_ARGUMENT,
                    "synchronization NONE is not supported");
  options.synchronization = 9;
  assert_dist_error(dist_variable_create(strategy, &options, &variable), DIST_ERR_INVALID_ARGUMENT,
                    "synchronization 9");
  options.field_mask = DIST_VARIABLE_OPT_AGGREGATION;
  options.aggregation = -1;
  assert_dist_error(dist_variable_create(strategy, &options, &variable), DIST_ERR_INVALID_ARGUMENT, "aggregation -1");
  int64_t shape[2] = {3, -1};
  options.field_mask = DIST_VARIABLE_OPT_SHAPE;
  options.shape = shape;
  options.rank = 2;
  assert_dist_error(dist_variable_create(strategy, &options, &variable), DIST_ERR_INVALID_ARGUMENT, "shape[1] = -1");
  options.rank = 9;
  assert_dist_error(dist_variable_create(strategy, &options, &variable), DIST_ERR_INVALID_ARGUMENT, "rank 9");
  options.field_mask = DIST_VARIABLE_OPT_NAME;
  options.name = NULL;
  assert_dist_error(dist_variable_create(strategy, &options, &variable), DIST_ERR_INVALID_ARGUMENT, "name is NULL");
  assert_null(variable);
  assert_dist_error(dist_variable_create(NULL, NULL, &variable), DIST_ERR_INVALID_ARGUMENT, "strategy is NULL");

  /* A default variable: a scalar f32 "Variable", ON_WRITE, NONE. */
  assert_dist_ok(dist_variable_create(strategy, NULL, &variable));
  const char* name = NULL;
  dist_synchronization_t sync = -1;
  dist_dtype_t dtype = -1;
  const int64_t* dims = NULL;
  int32_t rank = -1;
  assert_dist_ok(dist_variable_name(variable, &name));
  assert_string_equal(name, "Variable");
  assert_dist_ok(dist_variable_synchronization(variable, &sync));
  assert_int_equal(sync, DIST_SYNC_ON_WRITE);
  assert_dist_ok(dist_variable_dtype(variable, &dtype));
  assert_int_equal(dtype, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_shape(variable, &dims, &rank));
  assert_int_equal(rank, 0);
  uint64_t count = 0;
  dist_aggregation_t aggregation = -1;
  assert_dist_ok(dist_variable_count(variable, &count));
  assert_int_equal(count, 1);
  assert_dist_ok(dist_variable_aggregation(variable, &aggregation));
  assert_int_equal(aggregation, DIST_AGGREGATION_NONE);
  double wrong = 0;
  dist_buffer_t b = f64(&wrong, 1);
  assert_dist_error(dist_variable_read(variable, NULL, &b), DIST_ERR_INVALID_ARGUMENT, "is f32 but the output buffer is f64");
  float two[2] = {0, 0};
  dist_buffer_t too_long = {two, 2, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  assert_dist_error(dist_variable_assign(variable, NULL, &too_long), DIST_ERR_INVALID_ARGUMENT, "has 1 elements but the value has 2");
  assert_dist_error(dist_variable_read_copy(variable, 2, &too_long), DIST_ERR_INVALID_ARGUMENT, "copy 2 is out of range");
  assert_dist_error(dist_variable_assign(NULL, NULL, &too_long), DIST_ERR_INVALID_ARGUMENT, "variable is NULL");
  dist_variable_destroy(variable);
  dist_variable_destroy(NULL);

  /* ONE_DEVICE accepts synchronization NONE: a plain variable. */
  dist_strategy_t* one = make_strategy(DIST_STRATEGY_ONE_DEVICE, 1);
  options.field_mask = DIST_VARIABLE_OPT_SYNCHRONIZATION;
  options.synchronization = DIST_SYNC_NONE;
  assert_dist_ok(dist_variable_create(one, &options, &variable));
  /* The variable keeps its strategy alive after the handle goes. */
  dist_strategy_destroy(one);
  float x = 4.0f;
  dist_buffer_t bx = {&x, 1, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  assert_dist_ok(dist_variable_assign_add(variable, NULL, &bx));
  assert_dist_ok(dist_variable_read(variable, NULL, &bx));
  assert_true(x == 4.0f);
  dist_variable_destroy(variable);
  dist_strategy_destroy(strategy);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mirrored_replica_context),
      cmocka_unit_test(test_central_storage_replica_context),
      cmocka_unit_test(test_one_device_replica_context),
      cmocka_unit_test(test_cross_replica_context),
      cmocka_unit_test(test_integer_variables),
      cmocka_unit_test(test_variable_arguments),
  };
  return cmocka_run_group_tests_name("strategy_variables", tests, NULL, NULL);
}
