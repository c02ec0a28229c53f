/* The hierarchical path on one machine: ranks pose as several hosts through
 * the test hook DIST_HOST_ID_FOR_TESTS (topology/host_identity.h), one letter
 * per host, so that 2 x 2, 3 + 1 and 2 + 1 + 1 ranks (and the layouts that
 * stay point to point: 1 + 1, 4 x 1) run every collective, dtype, op, count
 * and in-place form against independently computed values (the collective
 * worker's matrix), choose the expected path and algorithms, detect a
 * mismatch between hosts, and fail every survivor when a rank dies. Every
 * rank is bounded in time and reaped by PID. */
#include <unistd.h>

#include "multiprocess/launch.h"
#include "test_support.h"

static const char* kToken = "test-token-hierarchical-0123456789";

static const char* worker_path(void) {
  const char* path = getenv("DIST_COLLECTIVE_WORKER");
  if (path == NULL) fail_msg("DIST_COLLECTIVE_WORKER is not set (run through ctest)");
  return path;
}

/* Each rank's environment: its host, the path it must find, whether the
 * hosts are even, and `extra` (may be NULL). */
struct rank_env {
  char host[64];
  char path[64];
  char even[64];
  const char* entries[5];
};

static int even_hosts(const char* hosts) {
  int counts[26] = {0};
  for (const char* h = hosts; *h; ++h) ++counts[*h - 'a'];
  int size = 0;
  for (int k = 0; k < 26; ++k) {
    if (counts[k] == 0) continue;
    if (size != 0 && counts[k] != size) return 0;
    size = counts[k];
  }
  return 1;
}

/* Runs `scenario [argument [argument2]]` with rank r on host hosts[r], every
 * rank expecting path `path`, and returns after all are reaped. */
static void run_layout_with(struct launch* launch, const char* hosts, int path, const char* scenario,
                            const char* argument, const char* argument2, const char* extra, double seconds) {
  const int n = (int)strlen(hosts);
  static struct rank_env env[kMaxRanks];
  launch_prepare(launch, n);
  const char* args[] = {worker_path(), scenario, argument, argument2, NULL};
  for (int r = 0; r < n; ++r) {
    snprintf(env[r].host, sizeof env[r].host, "DIST_HOST_ID_FOR_TESTS=host-%c", hosts[r]);
    snprintf(env[r].path, sizeof env[r].path, "DIST_TEST_EXPECT_PATH=%d", path);
    snprintf(env[r].even, sizeof env[r].even, "DIST_TEST_EVEN_HOSTS=%d", even_hosts(hosts));
    env[r].entries[0] = env[r].host;
    env[r].entries[1] = env[r].path;
    env[r].entries[2] = env[r].even;
    env[r].entries[3] = extra;
    env[r].entries[4] = NULL;
    launch_rank(launch, r, kToken, env[r].entries, args);
  }
  if (launch_wait(launch, seconds) != 0) {
    for (int r = 0; r < n; ++r) print_message("rank %d output:\n%s\n", r, launch_output(launch, r));
    fail_msg("%s on hosts %s did not finish within %.0f s", scenario, hosts, seconds);
  }
}

static void run_layout(struct launch* launch, const char* hosts, int path, const char* scenario,
                       const char* argument, const char* extra, double seconds) {
  run_layout_with(launch, hosts, path, scenario, argument, NULL, extra, seconds);
}

static void expect_all_succeed(struct launch* launch, const char* scenario, const char* hosts) {
  for (int r = 0; r < launch->n; ++r) {
    if (launch->exit_codes[r] != 0) {
      fail_msg("%s on hosts %s: rank %d exited %d:\n%s", scenario, hosts, r, launch->exit_codes[r],
               launch_output(launch, r));
    }
  }
}

struct layout {
  const char* hosts; /* rank r runs on host hosts[r] */
  int path;
};

/* 2 x 2 in host order and interleaved (rails whose ranks are not neighbours
 * in the communicator), 3 + 1 and 2 + 1 + 1 (leaders), and the layouts where
 * no host has two ranks. */
static const struct layout kLayouts[] = {
    {"aabb", DIST_COMM_PATH_HIERARCHICAL}, {"abab", DIST_COMM_PATH_HIERARCHICAL},
    {"aaab", DIST_COMM_PATH_HIERARCHICAL}, {"abac", DIST_COMM_PATH_HIERARCHICAL},
    {"ab", DIST_COMM_PATH_POINT_TO_POINT}, {"abcd", DIST_COMM_PATH_POINT_TO_POINT},
};

static void test_matrix(void** state) {
  (void)state;
  for (size_t k = 0; k < sizeof kLayouts / sizeof kLayouts[0]; ++k) {
    struct launch launch;
    run_layout(&launch, kLayouts[k].hosts, kLayouts[k].path, "matrix", NULL, NULL, 300);
    expect_all_succeed(&launch, "matrix", kLayouts[k].hosts);
  }
}

/* Messages of several MiB, through many steps of the host's segment and the
 * pipelined algorithms between hosts. */
static void test_large_messages(void** state) {
  (void)state;
  const char* hosts[] = {"aabb", "aaab"};
  for (size_t k = 0; k < 2; ++k) {
    struct launch launch;
    run_layout(&launch, hosts[k], DIST_COMM_PATH_HIERARCHICAL, "big", NULL, NULL, 300);
    expect_all_succeed(&launch, "big", hosts[k]);
  }
}

/* Non-blocking calls queue in call order, with a blocking one between. */
static void test_requests(void** state) {
  (void)state;
  const char* hosts[] = {"aabb", "abac"};
  for (size_t k = 0; k < 2; ++k) {
    struct launch launch;
    run_layout(&launch, hosts[k], DIST_COMM_PATH_HIERARCHICAL, "requests", NULL, NULL, 120);
    expect_all_succeed(&launch, "requests", hosts[k]);
  }
}

/* The hierarchical all-reduces forced by name, at every size: the rails and
 * the streamed all-reduce with 0, 1 and fewer elements than local ranks, in
 * place and not, the streamed one with many chunks of a few MiB, the leaders
 * with megabytes. */
static void test_forced_all_reduces(void** state) {
  (void)state;
  struct launch launch;
  run_layout(&launch, "abab", DIST_COMM_PATH_HIERARCHICAL, "matrix", NULL, "DIST_ALLREDUCE_ALGO=hier_rails", 300);
  expect_all_succeed(&launch, "matrix with hier_rails", "abab");
  run_layout(&launch, "abab", DIST_COMM_PATH_HIERARCHICAL, "matrix", NULL, "DIST_ALLREDUCE_ALGO=hier_streamed", 300);
  expect_all_succeed(&launch, "matrix with hier_streamed", "abab");
  run_layout(&launch, "aabb", DIST_COMM_PATH_HIERARCHICAL, "big", NULL, "DIST_ALLREDUCE_ALGO=hier_streamed", 300);
  expect_all_succeed(&launch, "big with hier_streamed", "aabb");
  run_layout(&launch, "aabb", DIST_COMM_PATH_HIERARCHICAL, "big", NULL, "DIST_ALLREDUCE_ALGO=hier_leaders", 300);
  expect_all_succeed(&launch, "big with hier_leaders", "aabb");
}

/* Tiny slots: every call takes many steps inside the host. */
static void test_small_slots(void** state) {
  (void)state;
  struct launch launch;
  run_layout(&launch, "abab", DIST_COMM_PATH_HIERARCHICAL, "matrix", NULL, "DIST_SHM_SLOT_BYTES=4096", 300);
  expect_all_succeed(&launch, "matrix with 4 KiB slots", "abab");
}

/* The path and the algorithms dist_comm_algorithm names; forcing the
 * hierarchical all-reduce, and the ring beside it. */
static void test_paths(void** state) {
  (void)state;
  for (size_t k = 0; k < sizeof kLayouts / sizeof kLayouts[0]; ++k) {
    char expected[16];
    snprintf(expected, sizeof expected, "%d", kLayouts[k].path);
    struct launch launch;
    run_layout(&launch, kLayouts[k].hosts, kLayouts[k].path, "path", expected, NULL, 120);
    expect_all_succeed(&launch, "path", kLayouts[k].hosts);
  }
  /* Three hosts of two ranks, interleaved: rails of three ranks. */
  struct launch three;
  run_layout(&three, "abcabc", DIST_COMM_PATH_HIERARCHICAL, "path", "3", NULL, 240);
  expect_all_succeed(&three, "path", "abcabc");
  /* Shared memory turned off: point to point across the hosts. */
  struct launch launch;
  run_layout(&launch, "aabb", DIST_COMM_PATH_POINT_TO_POINT, "path", "1", "DIST_SHM=0", 120);
  expect_all_succeed(&launch, "path without shared memory", "aabb");
}

/* Ranks that disagree about a call, inside a host or between hosts, all fail
 * with DIST_ERR_MISMATCH naming both sides. */
static void test_mismatch(void** state) {
  (void)state;
  const char* kinds[] = {"count", "op", "root", "kind"};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    struct launch launch;
    run_layout(&launch, k % 2 ? "abab" : "aabb", DIST_COMM_PATH_HIERARCHICAL, "mismatch", kinds[k], NULL, 120);
    expect_all_succeed(&launch, kinds[k], k % 2 ? "abab" : "aabb");
  }
}

/* A rank killed in the middle of 16 MiB all-reduces: every survivor, on its
 * host and on the other, fails naming it. */
static void test_killed_rank(void** state) {
  (void)state;
  struct launch launch;
  run_layout_with(&launch, "aabb", DIST_COMM_PATH_HIERARCHICAL, "kill", "2", "during", NULL, 60);
  assert_int_equal(launch.exit_codes[2], -9);
  for (int r = 0; r < 4; ++r) {
    if (r == 2) continue;
    if (launch.exit_codes[r] != 0) {
      fail_msg("survivor %d exited %d:\n%s", r, launch.exit_codes[r], launch_output(&launch, r));
    }
    assert_non_null(strstr(launch_output(&launch, r), "worker:2"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_paths),         cmocka_unit_test(test_matrix),   cmocka_unit_test(test_large_messages),
      cmocka_unit_test(test_forced_all_reduces), cmocka_unit_test(test_requests),      cmocka_unit_test(test_small_slots), cmocka_unit_test(test_mismatch),
      cmocka_unit_test(test_killed_rank),
  };
  return cmocka_run_group_tests_name("multiprocess_hierarchical", tests, NULL, NULL);
}
