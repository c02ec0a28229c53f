/* Every worker contributes a vector; all_reduce sums them so that every worker
 * holds the same total, then each checks it against the value it can compute
 * on its own. Run it as several processes on this machine:
 *
 *   dist-run -n 2 -- build/examples/allreduce
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <distribute/c_api.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    dist_status_t status_ = (call);                                                 \
    if (status_ != DIST_OK) {                                                       \
      fprintf(stderr, "%s: %s\n", dist_status_string(status_), dist_last_error()); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int main(void) {
  dist_cluster_t* cluster = NULL;
  CHECK(dist_cluster_resolve(NULL, &cluster)); /* TF_CONFIG from dist-run */
  dist_context_t* context = NULL;
  CHECK(dist_context_create(cluster, NULL, &context));
  dist_comm_t* world = NULL;
  CHECK(dist_comm_world(context, &world));
  int32_t rank = 0, size = 0;
  CHECK(dist_comm_rank(world, &rank));
  CHECK(dist_comm_size(world, &size));

  enum { kCount = 1 << 20 };
  float* gradient = malloc(kCount * sizeof(float));
  for (int i = 0; i < kCount; ++i) gradient[i] = (float)(rank + 1) * (float)(i % 10);
  dist_buffer_t buffer = {gradient, kCount, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};

  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK(dist_all_reduce(world, NULL, &buffer, DIST_OP_SUM, NULL));
  clock_gettime(CLOCK_MONOTONIC, &end);

  /* Every rank contributed (rank + 1) * (i % 10). */
  float ranks_sum = (float)size * (float)(size + 1) / 2.0f;
  int wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += gradient[i] != ranks_sum * (float)(i % 10);
  double ms = (double)(end.tv_sec - start.tv_sec) * 1e3 + (double)(end.tv_nsec - start.tv_nsec) / 1e6;
  printf("rank %d of %d: all_reduce of %d floats (%.1f MiB) took %.2f ms; element 7 = %.0f (expected %.0f); %s\n",
         rank, size, kCount, kCount * 4.0 / (1 << 20), ms, gradient[7], ranks_sum * 7, wrong ? "WRONG" : "correct");

  /* The mean, as data-parallel training averages gradients. */
  for (int i = 0; i < kCount; ++i) gradient[i] = (float)rank;
  CHECK(dist_all_reduce(world, NULL, &buffer, DIST_OP_MEAN, NULL));
  printf("rank %d: mean of the ranks' ids = %.2f\n", rank, gradient[0]);

  free(gradient);
  dist_context_destroy(context);
  dist_cluster_destroy(cluster);
  return wrong ? 1 : 0;
}
