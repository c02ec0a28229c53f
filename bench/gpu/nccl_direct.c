/* NCCL called directly, as the reference for the library's NCCL path: one
 * process drives G GPUs (every visible device, or --gpus G), one communicator
 * rank and one stream per GPU (ncclCommInitAll), each call an all-reduce on
 * every GPU between ncclGroupStart and ncclGroupEnd: float32, SUM, in place.
 *
 * It opens the NCCL the library opens: $DIST_NCCL_LIBRARY when set, else
 * "libnccl.so.2" through the loader (bench/gpu/compare sets DIST_NCCL_LIBRARY
 * to the file the library reports, so both use one file), and resolves the
 * few functions it calls with dlsym: it builds without NCCL.
 *
 * Per size: the result is checked once (GPU i holds i+1 everywhere; every GPU
 * must then hold the sum, G(G+1)/2), then 5 warm-up calls, 5 calls to size a
 * batch, and R batches sharing S seconds; the median batch's time per call.
 * Two rows per size, the project's CSV
 *   impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps
 * with impl "nccl":
 *   direct       nccl-tests' way: the calls back to back on the streams, a
 *                batch timed by CUDA events on each stream (the slowest GPU's)
 *   direct_sync  each call followed by cudaStreamSynchronize on every stream,
 *                timed by the host clock: what a blocking call (one that
 *                returns once the result is on the device, as the library's
 *                do) costs at the least
 * busbw = algbw * 2(G-1)/G (nccl-tests' all-reduce convention), so 0 for one
 * GPU, where nothing crosses a bus.
 *
 * Exits 77, saying why on stderr, without a CUDA device or without NCCL; 2 on
 * a bad argument; 1 when a call fails or a result is wrong. --visible-gpus
 * prints the number of visible CUDA devices (bench/gpu/compare's G). */
#define _GNU_SOURCE /* dlinfo */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NCCL's C ABI, the part used here (stable through NCCL 2.x). Declared here so
 * that the program builds where nccl.h is absent; checked against nccl.h where
 * it is present. */
typedef struct nccl_comm* nccl_comm_t;
typedef int nccl_result_t;
enum { kNcclSuccess = 0, kNcclFloat32 = 7, kNcclSum = 0 };
#if defined(__has_include)
#if __has_include(<nccl.h>)
#include <nccl.h>
_Static_assert((int)ncclSuccess == (int)kNcclSuccess && (int)ncclFloat32 == (int)kNcclFloat32 &&
                   (int)ncclSum == (int)kNcclSum,
               "nccl_direct's NCCL constants disagree with nccl.h");
#endif
#endif

static struct {
  nccl_result_t (*get_version)(int*);
  nccl_result_t (*comm_init_all)(nccl_comm_t*, int, const int*);
  nccl_result_t (*comm_destroy)(nccl_comm_t);
  nccl_result_t (*all_reduce)(const void*, void*, size_t, int, int, nccl_comm_t, cudaStream_t);
  nccl_result_t (*group_start)(void);
  nccl_result_t (*group_end)(void);
  const char* (*get_error_string)(nccl_result_t);
} nccl;

enum { kSkip = 77, kMaxGpus = 64, kMaxSizes = 64, kWarmCalls = 5 };

#define CUDA_OK(call)                                                                \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "nccl_direct: %s: %s\n", #call, cudaGetErrorString(e_));       \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define NCCL_OK(call)                                                                \
  do {                                                                               \
    nccl_result_t r_ = (call);                                                       \
    if (r_ != kNcclSuccess) {                                                        \
      fprintf(stderr, "nccl_direct: %s: %s\n", #call, nccl.get_error_string(r_));    \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void usage(FILE* to) {
  fprintf(to,
          "usage: nccl_direct [--gpus G] [--sizes 64K,1M,16M,64M] [--seconds S] [--repeats R]\n"
          "       nccl_direct --visible-gpus   (prints how many CUDA devices are visible)\n"
          "All-reduce (float32, sum, in place) by NCCL called directly over G GPUs of this\n"
          "process (default: every visible one); CSV rows \"nccl,direct,...\" and\n"
          "\"nccl,direct_sync,...\" per size. NCCL: $DIST_NCCL_LIBRARY, else libnccl.so.2.\n");
}

/* "64K" -> 65536; 0 when not a size. */
static size_t parse_size(const char* text) {
  char* end = NULL;
  const unsigned long long value = strtoull(text, &end, 10);
  if (end == text || value == 0) return 0;
  unsigned long long scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm') scale = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g') scale = 1ull << 30, ++end;
  if (*end != '\0' || value > (1ull << 40) / scale) return 0;
  return (size_t)(value * scale);
}

/* Opens NCCL as the library does; on failure says why in `why`. `opened` is
 * the file the loader found. */
static int open_nccl(char* why, size_t why_size, char* opened, size_t opened_size) {
  const char* explicit_path = getenv("DIST_NCCL_LIBRARY");
  const char* name = explicit_path != NULL && *explicit_path ? explicit_path : "libnccl.so.2";
  void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char* error = dlerror();
    snprintf(why, why_size, "NCCL could not be opened (%s); set DIST_NCCL_LIBRARY to its libnccl.so.2",
             error != NULL ? error : name);
    return 0;
  }
  struct link_map* map = NULL;
  const int mapped = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL && map->l_name != NULL;
  snprintf(opened, opened_size, "%s", mapped && *map->l_name ? map->l_name : name);
  const char* missing = NULL;
  /* POSIX's way to store dlsym's answer in a function pointer. */
#define RESOLVE(member, symbol)                                     \
  do {                                                              \
    *(void**)(&nccl.member) = dlsym(handle, symbol);                \
    if (nccl.member == NULL && missing == NULL) missing = symbol;   \
  } while (0)
  RESOLVE(get_version, "ncclGetVersion");
  RESOLVE(comm_init_all, "ncclCommInitAll");
  RESOLVE(comm_destroy, "ncclCommDestroy");
  RESOLVE(all_reduce, "ncclAllReduce");
  RESOLVE(group_start, "ncclGroupStart");
  RESOLVE(group_end, "ncclGroupEnd");
  RESOLVE(get_error_string, "ncclGetErrorString");
#undef RESOLVE
  if (missing != NULL) {
    snprintf(why, why_size, "%s is not a usable NCCL: it lacks %s", opened, missing);
    return 0;
  }
  return 1;
}

typedef struct {
  int gpus;
  nccl_comm_t comms[kMaxGpus];
  cudaStream_t streams[kMaxGpus];
  cudaEvent_t starts[kMaxGpus], stops[kMaxGpus];
  float* buffers[kMaxGpus];
} Setup;

/* One all-reduce on every GPU, enqueued as one group. */
static void all_reduce(const Setup* s, size_t count) {
  NCCL_OK(nccl.group_start());
  for (int g = 0; g < s->gpus; ++g) {
    NCCL_OK(nccl.all_reduce(s->buffers[g], s->buffers[g], count, kNcclFloat32, kNcclSum, s->comms[g], s->streams[g]));
  }
  NCCL_OK(nccl.group_end());
}

static void synchronize(const Setup* s) {
  for (int g = 0; g < s->gpus; ++g) CUDA_OK(cudaStreamSynchronize(s->streams[g]));
}

/* Seconds per call over `calls` calls. Back to back: the slowest GPU's time
 * between events recorded on its stream before and after; synced: the host's
 * time, each call waited for on every stream. */
static double time_calls(const Setup* s, size_t count, int calls, int synced) {
  if (synced) {
    const double start = now();
    for (int c = 0; c < calls; ++c) {
      all_reduce(s, count);
      synchronize(s);
    }
    return (now() - start) / calls;
  }
  for (int g = 0; g < s->gpus; ++g) CUDA_OK(cudaEventRecord(s->starts[g], s->streams[g]));
  for (int c = 0; c < calls; ++c) all_reduce(s, count);
  for (int g = 0; g < s->gpus; ++g) CUDA_OK(cudaEventRecord(s->stops[g], s->streams[g]));
  double slowest = 0;
  for (int g = 0; g < s->gpus; ++g) {
    float ms = 0;
    CUDA_OK(cudaEventSynchronize(s->stops[g]));
    CUDA_OK(cudaEventElapsedTime(&ms, s->starts[g], s->stops[g]));
    if (ms / 1e3 > slowest) slowest = ms / 1e3;
  }
  return slowest / calls;
}

/* GPU g holds g+1 in every element; after one all-reduce every GPU must hold
 * G(G+1)/2 (exact in float32 for these small integers). */
static void check_result(const Setup* s, size_t count, float* host) {
  for (int g = 0; g < s->gpus; ++g) {
    for (size_t i = 0; i < count; ++i) host[i] = (float)(g + 1);
    CUDA_OK(cudaSetDevice(g));
    CUDA_OK(cudaMemcpy(s->buffers[g], host, count * sizeof(float), cudaMemcpyHostToDevice));
    /* From pageable memory cudaMemcpy may return before its DMA ends, and
     * the streams here do not wait for the legacy stream's work. */
    CUDA_OK(cudaDeviceSynchronize());
  }
  all_reduce(s, count);
  synchronize(s);
  const float want = (float)s->gpus * (float)(s->gpus + 1) / 2;
  for (int g = 0; g < s->gpus; ++g) {
    CUDA_OK(cudaSetDevice(g));
    CUDA_OK(cudaMemcpy(host, s->buffers[g], count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) {
      if (host[i] != want) {
        fprintf(stderr, "nccl_direct: wrong result on GPU %d at element %zu of %zu: %g, expected %g\n", g, i, count,
                (double)host[i], (double)want);
        exit(1);
      }
    }
  }
}

/* Warm-up, a batch sized to share the budget, `repeats` batches: the median
 * seconds per call, and the calls timed. */
static double measure(const Setup* s, size_t count, int synced, double seconds, int repeats, int* iters) {
  double per_batch[1000];
  for (int c = 0; c < kWarmCalls; ++c) all_reduce(s, count);
  synchronize(s);
  const double one = time_calls(s, count, kWarmCalls, synced);
  double batch = seconds / repeats / (one > 1e-9 ? one : 1e-9);
  batch = batch < 1 ? 1 : batch > 1e6 ? 1e6 : batch;
  for (int r = 0; r < repeats; ++r) per_batch[r] = time_calls(s, count, (int)batch, synced);
  qsort(per_batch, (size_t)repeats, sizeof per_batch[0], compare_doubles);
  *iters = (int)batch * repeats;
  return per_batch[repeats / 2];
}

int main(int argc, char** argv) {
  int gpus = 0, repeats = 7, size_count = 0, count_only = 0;
  double seconds = 0.5;
  size_t sizes[kMaxSizes];
  const char* size_list = "64K,1M,16M,64M";
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(flag, "--visible-gpus") == 0) {
      count_only = 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "nccl_direct: %s needs a value\n", flag);
      usage(stderr);
      return 2;
    }
    const char* value = argv[++i];
    char* end = NULL;
    if (strcmp(flag, "--gpus") == 0) {
      const long n = strtol(value, &end, 10);
      if (end == value || *end != '\0' || n < 1 || n > kMaxGpus) {
        fprintf(stderr, "nccl_direct: --gpus: '%s' is not a number of GPUs in [1, %d]\n", value, kMaxGpus);
        return 2;
      }
      gpus = (int)n;
    } else if (strcmp(flag, "--sizes") == 0) {
      size_list = value;
    } else if (strcmp(flag, "--seconds") == 0) {
      seconds = strtod(value, &end);
      if (end == value || *end != '\0' || !(seconds > 0 && seconds < 3600)) {
        fprintf(stderr, "nccl_direct: --seconds: '%s' is not a number of seconds in (0, 3600)\n", value);
        return 2;
      }
    } else if (strcmp(flag, "--repeats") == 0) {
      const long n = strtol(value, &end, 10);
      if (end == value || *end != '\0' || n < 1 || n > 1000) {
        fprintf(stderr, "nccl_direct: --repeats: '%s' is not a number in [1, 1000]\n", value);
        return 2;
      }
      repeats = (int)n;
    } else {
      fprintf(stderr, "nccl_direct: unknown flag '%s'\n", flag);
      usage(stderr);
      return 2;
    }
  }
  char* list = strdup(size_list);
  for (char* item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
    const size_t bytes = parse_size(item);
    if (bytes == 0 || size_count == kMaxSizes) {
      fprintf(stderr, "nccl_direct: --sizes: '%s' is not a size (bytes, K, M or G; at most %d sizes)\n", item,
              kMaxSizes);
      return 2;
    }
    sizes[size_count++] = bytes;
  }
  free(list);
  if (size_count == 0) {
    fprintf(stderr, "nccl_direct: --sizes: no size\n");
    return 2;
  }

  int visible = 0;
  const cudaError_t counted = cudaGetDeviceCount(&visible);
  if (counted != cudaSuccess || visible == 0) {
    fprintf(stderr, "nccl_direct: skipped: no CUDA device (%s)\n",
            counted != cudaSuccess ? cudaGetErrorString(counted) : "none visible");
    return kSkip;
  }
  if (count_only) {
    printf("%d\n", visible);
    return 0;
  }
  char why[1024], opened[512];
  if (!open_nccl(why, sizeof why, opened, sizeof opened)) {
    fprintf(stderr, "nccl_direct: skipped: %s\n", why);
    return kSkip;
  }
  if (gpus == 0) gpus = visible < kMaxGpus ? visible : kMaxGpus;
  if (gpus > visible) {
    fprintf(stderr, "nccl_direct: --gpus %d, but %d CUDA device%s visible\n", gpus, visible,
            visible == 1 ? " is" : "s are");
    return 2;
  }
  int version = 0;
  NCCL_OK(nccl.get_version(&version));
  fprintf(stderr, "nccl_direct: NCCL %d.%d.%d from %s, %d GPU%s in one process%s\n", version / 10000,
          version % 10000 / 100, version % 100, opened, gpus, gpus == 1 ? "" : "s",
          gpus == 1 ? " (one rank: busbw is 0 by convention)" : "");

  size_t largest = 0;
  for (int i = 0; i < size_count; ++i) largest = sizes[i] > largest ? sizes[i] : largest;
  const size_t largest_count = largest / sizeof(float) > 0 ? largest / sizeof(float) : 1;
  Setup s;
  memset(&s, 0, sizeof s);
  s.gpus = gpus;
  int devices[kMaxGpus];
  for (int g = 0; g < gpus; ++g) {
    devices[g] = g;
    CUDA_OK(cudaSetDevice(g));
    CUDA_OK(cudaStreamCreateWithFlags(&s.streams[g], cudaStreamNonBlocking));
    CUDA_OK(cudaEventCreate(&s.starts[g]));
    CUDA_OK(cudaEventCreate(&s.stops[g]));
    CUDA_OK(cudaMalloc((void**)&s.buffers[g], largest_count * sizeof(float)));
  }
  NCCL_OK(nccl.comm_init_all(s.comms, gpus, devices));
  float* host = malloc(largest_count * sizeof(float));
  if (host == NULL) {
    fprintf(stderr, "nccl_direct: no host memory for %zu bytes\n", largest_count * sizeof(float));
    return 1;
  }

  const double bus_factor = 2.0 * (gpus - 1) / gpus;
  for (int i = 0; i < size_count; ++i) {
    const size_t count = sizes[i] / sizeof(float) > 0 ? sizes[i] / sizeof(float) : 1;
    const size_t bytes = count * sizeof(float);
    check_result(&s, count, host);
    for (int synced = 0; synced <= 1; ++synced) {
      int iters = 0;
      const double t = measure(&s, count, synced, seconds, repeats, &iters);
      const double algbw = (double)bytes / t / 1e9;
      printf("nccl,%s,%d,%zu,%d,%.3f,%.6g,%.6g\n", synced ? "direct_sync" : "direct", gpus, bytes, iters, t * 1e6,
             algbw, algbw * bus_factor);
      fflush(stdout);
    }
  }

  free(host);
  for (int g = 0; g < gpus; ++g) {
    NCCL_OK(nccl.comm_destroy(s.comms[g]));
    CUDA_OK(cudaSetDevice(g));
    CUDA_OK(cudaFree(s.buffers[g]));
    CUDA_OK(cudaEventDestroy(s.starts[g]));
    CUDA_OK(cudaEventDestroy(s.stops[g]));
    CUDA_OK(cudaStreamDestroy(s.streams[g]));
  }
  return 0;
}
