/* MULTI_WORKER_MIRRORED across 2 real processes on loopback (2 local replicas
 * each): variable aggregation across workers and the chief's initial value,
 * reduce over the batch axis with a partial batch, fused == unfused all-reduce
 * bit for bit, identical weights on every worker after training, both fused
 * paths (one piecewise call, buckets) with 1 and 2 local replicas, a failing
 * replica that never leaves the other worker hanging, workers that disagree
 * on their replicas, and deterministic sums whatever the bucket size. Every process is bounded in time and reaped. */
#include "multiprocess/launch.h"
#include "test_support.h"

static const char* kToken = "strategy-test-token-0123456789";

static void run_n_workers_with(struct launch* launch, int n, const char* scenario, const char* argument,
                               const char* second_argument, double seconds) {
  const char* worker = getenv("DIST_STRATEGY_WORKER");
  if (worker == NULL) fail_msg("DIST_STRATEGY_WORKER is not set (run through ctest)");
  launch_prepare(launch, n);
  const char* args[] = {worker, scenario, argument, second_argument, NULL};
  for (int r = 0; r < n; ++r) launch_rank(launch, r, kToken, NULL, args);
  if (launch_wait(launch, seconds) != 0) {
    for (int r = 0; r < n; ++r) print_message("worker %d output:\n%s\n", r, launch_output(launch, r));
    fail_msg("%s did not finish within %.0f s", scenario, seconds);
  }
  for (int r = 0; r < n; ++r) {
    if (launch->exit_codes[r] != 0) {
      fail_msg("%s: worker %d exited %d:\n%s", scenario, r, launch->exit_codes[r], launch_output(launch, r));
    }
  }
}

static void run_workers_with(struct launch* launch, const char* scenario, const char* argument,
                             const char* second_argument, double seconds) {
  run_n_workers_with(launch, 2, scenario, argument, second_argument, seconds);
}

static void run_workers(struct launch* launch, const char* scenario, double seconds) {
  run_workers_with(launch, scenario, NULL, NULL, seconds);
}

/* The line of worker r's output that starts with `prefix`, into line[size]. */
static void output_line(struct launch* launch, int r, const char* prefix, char* line, size_t size) {
  const char* found = strstr(launch_output(launch, r), prefix);
  /* cmocka does not declare fail_msg noreturn: without the else GCC sees a null
   * `found` reach snprintf. */
  if (found == NULL) {
    fail_msg("worker %d printed no '%s' line:\n%s", r, prefix, launch_output(launch, r));
  } else {
    snprintf(line, size, "%.*s", (int)strcspn(found, "\n"), found);
  }
}

static void test_variables(void** state) {
  (void)state;
  struct launch launch;
  run_workers(&launch, "variables", 60);
}

static void test_reduce_and_fusion(void** state) {
  (void)state;
  struct launch launch;
  run_workers(&launch, "reduce", 60);
}

static void test_weights_identical_after_training(void** state) {
  (void)state;
  struct launch launch;
  run_workers(&launch, "train", 120);
  char weights[2][256];
  for (int r = 0; r < 2; ++r) output_line(&launch, r, "weights ", weights[r], sizeof weights[r]);
  assert_int_equal(strlen(weights[0]), 8 + 8 * 8); /* "weights " and 8 floats in hex */
  assert_string_equal(weights[0], weights[1]);
}

static void test_replica_error(void** state) {
  (void)state;
  struct launch launch;
  run_workers(&launch, "replica_error", 60);
}

static void test_replica_count_mismatch(void** state) {
  (void)state;
  struct launch launch;
  run_workers(&launch, "mismatch", 60);
}

/* The fused paths, with 1 and with 2 local replicas per worker: the one-call
 * path (shared memory) and the bucketed one (ring forced) both match the
 * references, and every optimizer leaves the same bits on every worker by
 * either path (the sums are taken in the same order on both; on one host
 * each update is made by one worker and shared, and the slots are made whole
 * when a call changes which worker updates what). */
static void test_fusion_paths(void** state) {
  (void)state;
  const char* paths[2] = {"auto", "ring"};
  const char* locals[2] = {"1", "2"};
  enum { kOptimizers = 4 };
  const char* optimizers[kOptimizers] = {"adam weights ", "sgd weights ", "momentum weights ", "adagrad weights "};
  for (int l = 0; l < 2; ++l) {
    char hashes[2][kOptimizers][2][64]; /* [path][optimizer][worker] */
    for (int p = 0; p < 2; ++p) {
      struct launch launch;
      run_workers_with(&launch, "fusion", paths[p], locals[l], 60);
      for (int o = 0; o < kOptimizers; ++o) {
        for (int r = 0; r < 2; ++r) output_line(&launch, r, optimizers[o], hashes[p][o][r], sizeof hashes[p][o][r]);
        assert_string_equal(hashes[p][o][0], hashes[p][o][1]);
      }
    }
    for (int o = 0; o < kOptimizers; ++o) assert_string_equal(hashes[0][o][0], hashes[1][o][0]);
  }
  /* Three workers on one host: the worker that updates a part gets the
   * gradients already reduced (a finisher adds up at most two inputs), a
   * path of its own. The workers' own checks hold it to the test's
   * rank-order arithmetic, and every worker ends with the same bits. (The
   * ring is not compared here: with three ranks it adds each block's
   * contributions starting from a different rank, not in rank order.) */
  struct launch launch;
  run_n_workers_with(&launch, 3, "fusion", "auto", "1", 90);
  for (int o = 0; o < kOptimizers; ++o) {
    char hashes[3][64];
    for (int r = 0; r < 3; ++r) output_line(&launch, r, optimizers[o], hashes[r], sizeof hashes[r]);
    for (int r = 1; r < 3; ++r) assert_string_equal(hashes[0], hashes[r]);
  }
}

/* strategy_worker deterministic on n workers with env: returns worker 0's bits
 * line, or NULL when a worker failed (its output then in `failure`). */
static int run_deterministic(int n, const char* const* env, char* bits, size_t size, char* failure, size_t failure_size) {
  const char* worker = getenv("DIST_STRATEGY_WORKER");
  if (worker == NULL) fail_msg("DIST_STRATEGY_WORKER is not set (run through ctest)");
  struct launch launch;
  launch_prepare(&launch, n);
  const char* args[] = {worker, "deterministic", NULL};
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, env, args);
  if (launch_wait(&launch, 180) != 0) fail_msg("deterministic did not finish in time");
  for (int r = 0; r < n; ++r) {
    if (launch.exit_codes[r] != 0) {
      snprintf(failure, failure_size, "%s", launch_output(&launch, r));
      return 0;
    }
  }
  output_line(&launch, 0, "deterministic bits ", bits, size);
  return 1;
}

/* DIST_DETERMINISTIC=1: batch_all_reduce's sums have the in-order bits (each
 * worker checks) whatever the bucket size and communication, on shared memory
 * and point to point alike, on 2 and 3 workers. Without it, 3 workers on a
 * ring differ from the in-order sum: what the mode is for, and proof that the
 * check can tell. */
static void test_deterministic_buckets(void** state) {
  (void)state;
  char failure[8192];
  for (int n = 2; n <= 3; ++n) {
    const char* shm[] = {"DIST_DETERMINISTIC=1", NULL};
    const char* p2p[] = {"DIST_DETERMINISTIC=1", "DIST_SHM=0", NULL};
    char first[128], second[128];
    if (!run_deterministic(n, shm, first, sizeof first, failure, sizeof failure)) fail_msg("%d workers:\n%s", n, failure);
    if (!run_deterministic(n, p2p, second, sizeof second, failure, sizeof failure)) fail_msg("%d workers, point to point:\n%s", n, failure);
    if (strcmp(first, second) != 0) fail_msg("%d workers: '%s' on shared memory, '%s' point to point", n, first, second);
  }
  const char* free_ring[] = {"DIST_SHM=0", NULL};
  char bits[128];
  if (run_deterministic(3, free_ring, bits, sizeof bits, failure, sizeof failure) ||
      strstr(failure, "differ from the in-order sum") == NULL) {
    fail_msg("without the mode, 3 workers on a ring matched the in-order sum:\n%s", failure);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_variables),
      cmocka_unit_test(test_reduce_and_fusion),
      cmocka_unit_test(test_weights_identical_after_training),
      cmocka_unit_test(test_replica_error),
      cmocka_unit_test(test_replica_count_mismatch),
      cmocka_unit_test(test_fusion_paths),
      cmocka_unit_test(test_deterministic_buckets),
  };
  return cmocka_run_group_tests_name("strategy_multiprocess", tests, NULL, NULL);
}
