/* What the GPU suites' rank programs and their launchers share: CUDA_OK
 * (a rank program exits 4 naming the failed CUDA call), and run_gpu_ranks
 * (a launcher starts n ranks of a program and fails the test, printing every
 * rank's output, unless all exit 0 in time). One program, one translation
 * unit; launchers define DIST_GPU_LAUNCHER before including it. */
#ifndef DIST_TEST_GPU_RANKS_H
#define DIST_TEST_GPU_RANKS_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_OK(call)                                                               \
  do {                                                                              \
    cudaError_t cuda_status_ = (call);                                              \
    if (cuda_status_ != cudaSuccess) {                                              \
      fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(cuda_status_)); \
      exit(4);                                                                      \
    }                                                                               \
  } while (0)

#ifdef DIST_GPU_LAUNCHER
#include "multiprocess/launch.h"
#include "test_support.h"

/* n ranks of the program named by environment variable `program_variable`,
 * each with `args` after the program (NULL-terminated) and `env`. */
static void run_gpu_ranks(const char* program_variable, const char* token, int n, const char* const* args,
                          const char* const* env, double seconds) {
  const char* program = getenv(program_variable);
  if (program == NULL) fail_msg("%s is not set (run through ctest)", program_variable);
  const char* argv[8] = {program};
  for (int i = 0; args[i] != NULL && i < 6; ++i) argv[i + 1] = args[i];
  struct launch launch;
  launch_prepare(&launch, n);
  for (int r = 0; r < n; ++r) launch_rank(&launch, r, token, env, argv);
  if (launch_wait(&launch, seconds) != 0) {
    for (int r = 0; r < n; ++r) print_message("rank %d output:\n%s\n", r, launch_output(&launch, r));
    fail_msg("%s %s on %d ranks did not finish within %.0f s", program, args[0], n, seconds);
  }
  for (int r = 0; r < n; ++r) {
    if (launch.exit_codes[r] != 0) {
      fail_msg("%s on %d ranks: rank %d exited %d:\n%s", args[0], n, r, launch.exit_codes[r],
               launch_output(&launch, r));
    }
  }
}
#endif

#endif /* DIST_TEST_GPU_RANKS_H */
