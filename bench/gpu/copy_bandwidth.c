/* The copy bandwidth the staged path pays: device to pinned host memory and
 * back, asynchronous on one stream, as the staged path copies. Prints the
 * project's CSV rows (impl "cuda", variants copy_d2h and copy_h2d), median of
 * the timed batches. Exits 77, saying why, without a usable device. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

#define OK(call)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      fprintf(stderr, "copy_bandwidth: %s: %s\n", #call, cudaGetErrorString(e_)); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

/* Median seconds per copy of `bytes` over 7 batches. */
static int time_copy(void* to, const void* from, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream,
                     double* median) {
  enum { kBatches = 7 };
  double per_copy[kBatches];
  int calls = 1;
  for (int warm = 0; warm < 3; ++warm) OK(cudaMemcpyAsync(to, from, bytes, kind, stream));
  OK(cudaStreamSynchronize(stream));
  /* Batches of about 20 ms each. */
  double start = now();
  OK(cudaMemcpyAsync(to, from, bytes, kind, stream));
  OK(cudaStreamSynchronize(stream));
  const double one = now() - start;
  calls = one > 0.02 ? 1 : (int)(0.02 / (one > 1e-7 ? one : 1e-7));
  for (int b = 0; b < kBatches; ++b) {
    start = now();
    for (int c = 0; c < calls; ++c) OK(cudaMemcpyAsync(to, from, bytes, kind, stream));
    OK(cudaStreamSynchronize(stream));
    per_copy[b] = (now() - start) / calls;
  }
  qsort(per_copy, kBatches, sizeof per_copy[0], compare);
  *median = per_copy[kBatches / 2];
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: copy_bandwidth BYTES[,BYTES...]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("skipped: no CUDA device\n");
    return 77;
  }
  cudaStream_t stream;
  OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  char* list = strdup(argv[1]);
  for (char* item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
    const size_t bytes = strtoull(item, NULL, 10);
    if (bytes == 0) {
      fprintf(stderr, "copy_bandwidth: %s is not a size in bytes\n", item);
      return 2;
    }
    void* device = NULL;
    void* host = NULL;
    OK(cudaMalloc(&device, bytes));
    OK(cudaHostAlloc(&host, bytes, cudaHostAllocPortable));
    memset(host, 1, bytes);
    double d2h = 0, h2d = 0;
    if (time_copy(host, device, bytes, cudaMemcpyDeviceToHost, stream, &d2h) != 0) return 1;
    if (time_copy(device, host, bytes, cudaMemcpyHostToDevice, stream, &h2d) != 0) return 1;
    printf("cuda,copy_d2h,1,%zu,7,%.3f,%.6g,%.6g\n", bytes, d2h * 1e6, bytes / d2h / 1e9, bytes / d2h / 1e9);
    printf("cuda,copy_h2d,1,%zu,7,%.3f,%.6g,%.6g\n", bytes, h2d * 1e6, bytes / h2d / 1e9, bytes / h2d / 1e9);
    OK(cudaFree(device));
    OK(cudaFreeHost(host));
  }
  free(list);
  return 0;
}
