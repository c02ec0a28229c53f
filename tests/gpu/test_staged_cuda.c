/* Collectives on CUDA device buffers through the staged path, 2 and 3
 * processes sharing one GPU (staged_worker.c says what each scenario checks).
 * Skips, saying why, where no CUDA device is usable. Every rank is bounded in
 * time and reaped by PID. */
#include <cuda_runtime_api.h>

#include "gpu/device_check.h"

#define DIST_GPU_LAUNCHER
#include "gpu/gpu_ranks.h"

static const char* kToken = "test-token-staged-cuda-0123456789";

static void run_ranks(int n, const char* scenario, double seconds) {
  const char* args[] = {scenario, NULL};
  run_gpu_ranks("DIST_STAGED_WORKER", kToken, n, args, NULL, seconds);
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
