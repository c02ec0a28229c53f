/* Multi-process suites whose ranks are the suite's own program: a cmocka test
 * starts n copies of it as "PROGRAM rank SCENARIO" on loopback, each joining
 * the cluster that TF_CONFIG describes, and checks how every copy exited. The
 * ranks are reaped (killed by PID at the bound) by launch_wait. One program,
 * one translation unit; link multiprocess/launch.c. */
#ifndef DIST_TEST_SELF_RANKS_H
#define DIST_TEST_SELF_RANKS_H

#include <stdint.h>

#include "multiprocess/launch.h"
#include "multiprocess/worker_support.h"
#include "test_support.h"

static const char* kSelfRanksToken = "self-ranks-test-token-0123456789";

/* Starts n ranks of `scenario` and fails the test unless rank r exits with
 * expected_exit[r] (0 for all when NULL; -9 for a rank that kills itself)
 * within `seconds`. */
static inline void run_ranks(int n, const char* scenario, const int* expected_exit, double seconds) {
  struct launch launch;
  launch_prepare(&launch, n);
  const char* args[] = {"/proc/self/exe", "rank", scenario, NULL};
  const char* env[] = {"DIST_ADDRESS=127.0.0.1", NULL};
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, kSelfRanksToken, env, args);
  const int finished = launch_wait(&launch, seconds) == 0;
  for (int r = 0; r < n; ++r) {
    const int expected = expected_exit != NULL ? expected_exit[r] : 0;
    if (!finished || launch.exit_codes[r] != expected) {
      fail_msg("%s: rank %d exited %d (expected %d)%s:\n%s", scenario, r, launch.exit_codes[r], expected,
               finished ? "" : " (killed at the bound)", launch_output(&launch, r));
    }
  }
}

/* Runs in a rank: a status compared with the expected one, and the last
 * error checked for every NULL-terminated needle. */
static inline void check_status(const char* what, dist_status_t got, dist_status_t expected, ...) {
  CHECK(got == expected, "%s returned %s, expected %s (%s)", what, dist_status_string(got),
        dist_status_string(expected), dist_last_error());
  if (got != expected || got == DIST_OK) return;
  va_list needles;
  va_start(needles, expected);
  for (const char* needle = va_arg(needles, const char*); needle != NULL; needle = va_arg(needles, const char*)) {
    CHECK(strstr(dist_last_error(), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, dist_last_error(),
          needle);
  }
  va_end(needles);
}
#define CHECK_STATUS(call, expected, ...) check_status(#call, (call), (expected), __VA_ARGS__, NULL)
#define CHECK_OK(call) check_status(#call, (call), DIST_OK, NULL)

static inline void set_timeout(dist_comm_t* comm, int64_t timeout_ms) {
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_TIMEOUT_MS;
  options.timeout_ms = timeout_ms;
  if (dist_comm_configure(comm, &options) != DIST_OK) {
    fprintf(stderr, "configure: %s\n", dist_last_error());
    exit(2);
  }
}

/* The world communicator with its per-call deadline set to timeout_ms. */
static inline dist_comm_t* world_with_timeout(dist_context_t* context, int64_t timeout_ms, int32_t* rank, int32_t* n) {
  dist_comm_t* world = world_of(context, rank, n);
  set_timeout(world, timeout_ms);
  return world;
}

/* A copy of `comm` (same ranks) with a short deadline, for calls meant to
 * time out, while `comm` keeps its own for the calls around them. */
static inline dist_comm_t* quick_copy(dist_comm_t* comm, int32_t rank, int64_t timeout_ms) {
  dist_comm_t* quick = NULL;
  if (dist_comm_split(comm, 0, rank, &quick) != DIST_OK) {
    fprintf(stderr, "split: %s\n", dist_last_error());
    exit(2);
  }
  set_timeout(quick, timeout_ms);
  return quick;
}

#endif /* DIST_TEST_SELF_RANKS_H */
