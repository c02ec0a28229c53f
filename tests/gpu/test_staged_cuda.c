/* Collectives on CUDA device buffers through the staged path, 2 and 3
 * processes sharing one GPU (staged_worker.c says what each scenario checks).
 * Skips, saying why, where no CUDA device is usable. Every rank is bounded in
 * time and reaped by PID. */
#include <cuda_runtime_api.h>

#include "gpu/device_check.h"

#include "multiprocess/launch.h"
#include "test_support.h"

static const char* kToken = "test-token-staged-cuda-0123456789";

static void run_ranks(int n, const char* scenario, double seconds) {
  const char* worker = getenv("DIST_STAGED_WORKER");
  if (worker == NULL) fail_msg("DIST_STAGED_WORKER is not set (run through ctest)");
  struct launch launch;
  launch_prepare(&launch, n);
  const char* args[] = {worker, scenario, NULL};
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, kToken, NULL, args);
  if (launch_wait(&launch, seconds) != 0) {
    for (int r = 0; r < n; ++r) print_message("rank %d output:\n%s\n", r, launch_output(&launch, r));
    fail_msg("%s on %d ranks did not finish within %.0f s", scenario, n, seconds);
  }
  for (int r = 0; r < n; ++r) {
    if (launch.exit_codes[r] != 0) {
      fail_msg("%s on %d ranks: rank %d exited %d:\n%s", scenario, n, r, launch.exit_codes[r],
               launch_output(&launch, r));
    }
  }
}

/* DIST_TEST_QUICK=1 (scripts/test_gpu under compute-sanitizer) leaves the
 * matrix out: it ran unchecked just before. */
static void test_matrix(void** state) {
  (void)state;
  const char* quick = getenv("DIST_TEST_QUICK");
  if (quick != NULL && strcmp(quick, "1") == 0) skip();
  run_ranks(2, "matrix", 900);
  run_ranks(3, "matrix", 900);
}

static void test_stream_ordering(void** state) {
  (void)state;
  run_ranks(2, "ordering", 300);
  run_ranks(3, "ordering", 300);
}

static void test_memory_kind_mismatch(void** state) {
  (void)state;
  run_ranks(2, "mismatch", 120);
}

int main(void) {
  skip_without_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_ordering),
      cmocka_unit_test(test_memory_kind_mismatch),
      cmocka_unit_test(test_matrix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
