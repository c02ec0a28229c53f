/* Collectives across real processes on loopback: correctness against
 * independently computed values for N = 1..4, non-blocking requests, comm_split,
 * mismatch detection, a rank killed mid-way and abort (a wrong cluster token
 * and strangers at a listening rank: test_wrong_token). Every rank is bounded
 * in time and reaped by PID. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <sched.h>

#include "multiprocess/launch.h"
#include "test_support.h"

static const char* worker_path(void) {
  const char* path = getenv("DIST_COLLECTIVE_WORKER");
  if (path == NULL) fail_msg("DIST_COLLECTIVE_WORKER is not set (run through ctest)");
  return path;
}

static const char* kToken = "test-token-0123456789abcdef";

/* Runs `scenario [argument]` on n ranks and returns after all are reaped. */
static void run_ranks(struct launch* launch, int n, const char* scenario, const char* argument, double seconds) {
  launch_prepare(launch, n);
  const char* args[] = {worker_path(), scenario, argument, NULL};
  for (int r = 0; r < n; ++r) launch_rank(launch, r, kToken, NULL, args);
  if (launch_wait(launch, seconds) != 0) {
    for (int r = 0; r < n; ++r) print_message("rank %d output:\n%s\n", r, launch_output(launch, r));
    fail_msg("%s on %d ranks did not finish within %.0f s", scenario, n, seconds);
  }
}

static void expect_all_succeed(struct launch* launch, const char* scenario) {
  for (int r = 0; r < launch->n; ++r) {
    if (launch->exit_codes[r] != 0) {
      fail_msg("%s: rank %d exited %d:\n%s", scenario, r, launch->exit_codes[r], launch_output(launch, r));
    }
  }
}

/* The matrix on 2 and 3 ranks with the "NAME=value" entries of env (what the
 * messages call `what`). */
static void run_matrix_with(const char* const* env, const char* what) {
  for (int n = 2; n <= 3; ++n) {
    struct launch launch;
    launch_prepare(&launch, n);
    const char* args[] = {worker_path(), "matrix", NULL};
    for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, env, args);
    if (launch_wait(&launch, 240) != 0) fail_msg("matrix with %s on %d ranks did not finish in time", what, n);
    for (int r = 0; r < n; ++r) {
      if (launch.exit_codes[r] != 0) {
        fail_msg("matrix with %s: rank %d exited %d:\n%s", what, r, launch.exit_codes[r], launch_output(&launch, r));
      }
    }
  }
}

static void test_matrix(void** state) {
  (void)state;
  for (int n = 1; n <= 4; ++n) {
    struct launch launch;
    run_ranks(&launch, n, "matrix", NULL, 240);
    expect_all_succeed(&launch, "matrix");
  }
}

/* The all-reduce that reads the peers' inputs and writes their results runs
 * AUTO only in place from 64 KiB: forced, it runs every dtype, op and count of
 * the matrix, in place and not, on 2 and 3 ranks (3 share the 2 cores). */
static void test_matrix_read_write(void** state) {
  (void)state;
  const char* env[] = {"DIST_ALLREDUCE_ALGO=shm_read_write", NULL};
  run_matrix_with(env, "shm_read_write");
}

static void test_large_messages(void** state) {
  (void)state;
  for (int n = 2; n <= 3; ++n) {
    struct launch launch;
    run_ranks(&launch, n, "big", NULL, 240);
    expect_all_succeed(&launch, "big");
  }
}

static void test_requests(void** state) {
  (void)state;
  struct launch launch;
  run_ranks(&launch, 3, "requests", NULL, 60);
  expect_all_succeed(&launch, "requests");
}

static void test_split(void** state) {
  (void)state;
  struct launch launch;
  run_ranks(&launch, 4, "split", NULL, 60);
  expect_all_succeed(&launch, "split");
}

static void test_mismatch(void** state) {
  (void)state;
  const char* kinds[] = {"count", "op", "dtype", "root", "kind"};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    for (int n = 2; n <= 3; ++n) {
      struct launch launch;
      run_ranks(&launch, n, "mismatch", kinds[k], 60);
      expect_all_succeed(&launch, kinds[k]);
    }
  }
}

static void test_killed_rank(void** state) {
  (void)state;
  struct launch launch;
  run_ranks(&launch, 3, "kill", "1", 60);
  assert_int_equal(launch.exit_codes[1], -9);
  for (int r = 0; r < 3; ++r) {
    if (r == 1) continue;
    if (launch.exit_codes[r] != 0) fail_msg("survivor %d exited %d:\n%s", r, launch.exit_codes[r], launch_output(&launch, r));
    assert_non_null(strstr(launch_output(&launch, r), "worker:1"));
  }
}

/* Restricted to TCP, large payloads travel on endpoints of their own,
 * without UCX's error handling, by zero-copy rendezvous in 1 MiB chunks: the
 * whole matrix and the large messages stay exact, and a rank killed in the
 * middle of a call still fails every survivor's call, which learns of it on
 * the endpoints that carry the headers. */
static void test_tcp_bulk_endpoints(void** state) {
  (void)state;
  const char* tcp[] = {"UCX_TLS=tcp", NULL};
  const char* scenarios[] = {"matrix", "big"};
  for (size_t s = 0; s < 2; ++s) {
    for (int n = 2; n <= 3; ++n) {
      struct launch launch;
      launch_prepare(&launch, n);
      const char* args[] = {worker_path(), scenarios[s], NULL};
      for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, tcp, args);
      if (launch_wait(&launch, 240) != 0) fail_msg("%s over TCP on %d ranks did not finish in time", scenarios[s], n);
      expect_all_succeed(&launch, scenarios[s]);
    }
  }
  struct launch launch;
  launch_prepare(&launch, 3);
  const char* args[] = {worker_path(), "kill", "1", "during", NULL};
  for (int r = 0; r < 3; ++r) launch_rank(&launch, r, kToken, tcp, args);
  if (launch_wait(&launch, 60) != 0) fail_msg("a rank killed during a call over TCP: the others did not finish");
  assert_int_equal(launch.exit_codes[1], -9);
  for (int r = 0; r < 3; r += 2) {
    if (launch.exit_codes[r] != 0) fail_msg("survivor %d exited %d:\n%s", r, launch.exit_codes[r], launch_output(&launch, r));
    assert_non_null(strstr(launch_output(&launch, r), "worker:1"));
  }
}

static void test_abort(void** state) {
  (void)state;
  struct launch launch;
  run_ranks(&launch, 3, "abort", NULL, 60);
  expect_all_succeed(&launch, "abort");
}

/* Runs `path EXPECTED` on n ranks with extra environment. */
static void run_path(int n, const char* const* env, const char* expected) {
  struct launch launch;
  launch_prepare(&launch, n);
  const char* args[] = {worker_path(), "path", expected, NULL};
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, env, args);
  if (launch_wait(&launch, 120) != 0) fail_msg("path %s did not finish in time", expected);
  expect_all_succeed(&launch, "path");
}

/* A run restricted to TCP stays off shared memory; tiny shared-memory slots
 * (many steps per call) still give exact results. */
static void test_paths(void** state) {
  (void)state;
  const char* tcp[] = {"UCX_TLS=tcp", NULL};
  run_path(2, tcp, "1");
  const char* shm = getenv("DIST_SHM");
  if (shm != NULL && strcmp(shm, "0") == 0) return;  /* the point-to-point run of this suite */
  const char* small_slots[] = {"DIST_SHM_SLOT_BYTES=4096", NULL};
  run_path(3, small_slots, "2");
}

/* Runs single_copy on n ranks, rank `opting_out` (-1: none) with
 * DIST_SHM_SINGLE_COPY=0, and returns the "algorithms ..." line all ranks
 * printed, which must be the same on every rank. */
static void run_single_copy(int n, int opting_out, char* line, size_t size) {
  struct launch launch;
  launch_prepare(&launch, n);
  const char* args[] = {worker_path(), "single_copy", NULL};
  const char* off[] = {"DIST_SHM_SINGLE_COPY=0", NULL};
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, r == opting_out ? off : NULL, args);
  if (launch_wait(&launch, 120) != 0) fail_msg("single_copy on %d ranks did not finish in time", n);
  expect_all_succeed(&launch, "single_copy");
  line[0] = '\0';
  for (int r = 0; r < n; ++r) {
    const char* output = launch_output(&launch, r);
    const char* found = strstr(output, "algorithms ");
    if (found == NULL) fail_msg("rank %d printed no algorithms:\n%s", r, output);
    const size_t length = strcspn(found, "\n");
    if (r == 0) snprintf(line, size, "%.*s", (int)length, found);
    else if (strncmp(found, line, length) != 0 || strlen(line) != length) {
      fail_msg("rank %d chose \"%.*s\", rank 0 \"%s\"", r, (int)length, found, line);
    }
  }
}

/* Ranks agree at creation whether all-gather and all-to-all copy straight
 * from the peers' buffers: one rank turning it off turns it off for all (a
 * rank on the other path would wait forever), and both paths give exact
 * results for large blocks, in and out of place. */
static void test_single_copy_agreement(void** state) {
  (void)state;
  const char* shm = getenv("DIST_SHM");
  if (shm != NULL && strcmp(shm, "0") == 0) return; /* the point-to-point run of this suite */
  char line[128];
  run_single_copy(3, 1, line, sizeof line);
  assert_string_equal(line, "algorithms shm shm shm");
  run_single_copy(2, -1, line, sizeof line);
  /* Whether this system lets the processes read each other's memory decides
   * it; the broadcast's single copy needs a core for each rank as well. */
  const char* both_single = "algorithms shm_single_copy shm_single_copy ";
  if (strncmp(line, both_single, strlen(both_single)) == 0) {
    cpu_set_t cores;
    assert_int_equal(sched_getaffinity(0, sizeof cores, &cores), 0);
    assert_string_equal(line + strlen(both_single), CPU_COUNT(&cores) >= 2 ? "shm_single_copy" : "shm");
  } else {
    assert_string_equal(line, "algorithms shm shm shm");
    print_message("single copies are not possible here: the shared-memory path copies through its slots\n");
  }
}

/* Where the communicator learns between two all-reduce algorithms, rank 0
 * decides for both ranks call by call: exact results whichever ran (the
 * worker checks each), both ran, and each rank counted the same calls of
 * each (a rank that followed another choice would have run the other
 * protocol, and hung or got wrong sums). */
static void test_learned_all_reduce(void** state) {
  (void)state;
  const char* shm = getenv("DIST_SHM");
  if (shm != NULL && strcmp(shm, "0") == 0) return; /* the point-to-point run of this suite */
  struct launch launch;
  run_ranks(&launch, 2, "learned", NULL, 120);
  expect_all_succeed(&launch, "learned");
  char first[64] = "";
  for (int r = 0; r < 2; ++r) {
    const char* line = strstr(launch_output(&launch, r), "learned ");
    if (line == NULL) fail_msg("rank %d printed no counts:\n%s", r, launch_output(&launch, r));
    const size_t length = strcspn(line, "\n");
    if (r == 0) {
      snprintf(first, sizeof first, "%.*s", (int)length, line);
    } else if (strlen(first) != length || strncmp(line, first, length) != 0) {
      fail_msg("rank 1 counted \"%.*s\", rank 0 \"%s\"", (int)length, line, first);
    }
  }
  if (strncmp(first, "learned not here", 16) == 0) print_message("%s: no choice to learn on this system\n", first);
}

/* Every UCX message by rendezvous: the receiver then reads a send buffer when it
 * is ready, not when the send was posted, so an algorithm that writes into a
 * buffer whose send has not completed gets wrong results here. */
/* Counters on 1, 2 and 3 ranks: self, and the suite's path (shared memory, or
 * point to point where the suite turns it off), and TCP. */
static void test_stats(void** state) {
  (void)state;
  struct launch launch;
  for (int n = 1; n <= 3; ++n) {
    run_ranks(&launch, n, "stats", NULL, 120);
    expect_all_succeed(&launch, "stats");
  }
  launch_prepare(&launch, 2);
  const char* tcp[] = {"UCX_TLS=tcp", NULL};
  const char* args[] = {worker_path(), "stats", NULL};
  for (int r = 0; r < 2; ++r) launch_rank(&launch, r, kToken, tcp, args);
  if (launch_wait(&launch, 120) != 0) fail_msg("stats over TCP did not finish in time");
  expect_all_succeed(&launch, "stats over TCP");
}

/* A rank held back on purpose: the others warn after the stall time, naming
 * it and where it is, and at the deadline every rank's error names it. */
static void test_stall_names_the_late_rank(void** state) {
  (void)state;
  struct launch launch;
  run_ranks(&launch, 3, "stall", NULL, 120);
  expect_all_succeed(&launch, "stall");
  for (int r = 0; r < 2; ++r) {
    const char* out = launch_output(&launch, r);
    const char* warning = strstr(out, "has waited");
    if (warning == NULL || strstr(warning, "worker:2 is between calls (done with #") == NULL ||
        strstr(warning, "on comm 0 while worker:0, worker:1 wait at #") == NULL) {
      fail_msg("rank %d did not warn about worker:2:\n%s", r, out);
    }
  }
}

/* Runs `deterministic` on n ranks with env; copies rank r's "deterministic
 * bits HEX" into bits[r]. */
static void run_deterministic(int n, const char* const* env, char bits[][32]) {
  struct launch launch;
  launch_prepare(&launch, n);
  const char* args[] = {worker_path(), "deterministic", NULL};
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, env, args);
  if (launch_wait(&launch, 300) != 0) fail_msg("deterministic did not finish in time");
  expect_all_succeed(&launch, "deterministic");
  for (int r = 0; r < n; ++r) {
    const char* line = strstr(launch_output(&launch, r), "deterministic bits ");
    if (line == NULL) fail_msg("rank %d printed no bits:\n%s", r, launch_output(&launch, r));
    snprintf(bits[r], 32, "%.16s", line + strlen("deterministic bits "));
  }
}

/* DIST_DETERMINISTIC=1: every float dtype and ordered op has the in-order
 * bits (the worker checks each element) on shared memory, on point-to-point
 * rings with small chunks, and over TCP with another algorithm forced: the
 * same bits everywhere. Without it, the ring on 3 ranks gives other bits than
 * shared memory (what the mode is for, and proof that the comparison sees). */
static void test_deterministic_across_paths(void** state) {
  (void)state;
  const char* shm[] = {"DIST_DETERMINISTIC=1", NULL};
  const char* ring[] = {"DIST_DETERMINISTIC=1", "DIST_SHM=0", "DIST_ALLREDUCE_ALGO=ring", "DIST_CHUNK_BYTES=4096", NULL};
  const char* tcp[] = {"DIST_DETERMINISTIC=1", "UCX_TLS=tcp", "DIST_ALLREDUCE_ALGO=rabenseifner", NULL};
  const char* const* configs[] = {shm, ring, tcp};
  const char* names[] = {"shared memory", "ring, 4 KiB chunks", "tcp, rabenseifner"};
  for (int n = 2; n <= 3; ++n) {
    char first[4][32], other[4][32];
    run_deterministic(n, configs[0], first);
    for (int c = 1; c < 3; ++c) {
      run_deterministic(n, configs[c], other);
      for (int r = 0; r < n; ++r) {
        if (strcmp(first[r], other[r]) != 0) {
          fail_msg("%d ranks: rank %d got bits %s on %s but %s on %s", n, r, first[r], names[0], other[r], names[c]);
        }
      }
    }
    if (n == 3) {
      const char* free_ring[] = {"DIST_SHM=0", "DIST_ALLREDUCE_ALGO=ring", NULL};
      run_deterministic(n, free_ring, other);
      if (strcmp(first[0], other[0]) == 0) fail_msg("the ring without the mode gave the in-order bits (%s)", other[0]);
    }
  }
}

static void test_rendezvous_everywhere(void** state) {
  (void)state;
  const char* env[] = {"DIST_SHM=0", "UCX_RNDV_THRESH=0", NULL};
  run_matrix_with(env, "rendezvous");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matrix),     cmocka_unit_test(test_matrix_read_write), cmocka_unit_test(test_large_messages), cmocka_unit_test(test_requests),
      cmocka_unit_test(test_split),      cmocka_unit_test(test_mismatch),       cmocka_unit_test(test_killed_rank),
      cmocka_unit_test(test_tcp_bulk_endpoints),
      cmocka_unit_test(test_abort),
      cmocka_unit_test(test_paths),      cmocka_unit_test(test_single_copy_agreement),
      cmocka_unit_test(test_learned_all_reduce),
      cmocka_unit_test(test_rendezvous_everywhere), cmocka_unit_test(test_stats),
      cmocka_unit_test(test_stall_names_the_late_rank), cmocka_unit_test(test_deterministic_across_paths),
  };
  return cmocka_run_group_tests_name("multiprocess", tests, NULL, NULL);
}
