/* apply_gradients of ResNet-50's 161 parameter tensors (25,557,032 floats, as
 * torchvision lists them) across the workers of a MULTI_WORKER_MIRRORED
 * strategy, against the fusion ideal: one all-reduce of one buffer of the same
 * 102 MB. Run it under dist-run:
 *
 *   dist-run -n 2 -- build/bench/apply_gradients/bench_apply_gradients [iters] [bytes_per_pack] [local] [optimizer]
 *
 * bytes_per_pack 0 is the default; local is the local replicas per worker
 * (default 1), each with its own gradients; optimizer is sgd (the default),
 * momentum or adam.
 *
 * Worker 0 prints the median time per step of each and their ratio, and the
 * ratio of the memory traffic alone (with sgd: the passes below). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <distribute/c_api.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHECK(call)                                                                 \
  do {                                                                              \
    dist_status_t status_ = (call);                                                 \
    if (status_ != DIST_OK) {                                                       \
      fprintf(stderr, "%s: %s\n", dist_status_string(status_), dist_last_error()); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

enum { kMaxTensors = 200, kMaxIters = 1000, kMaxLocal = 4 };

/* Runs `work` after a barrier on `comm`, so every worker starts it together,
 * and stores its time in microseconds in `sample`. */
#define TIMED(comm, sample, work)       \
  do {                                  \
    CHECK(dist_barrier((comm), NULL));  \
    const double started_ = now_us();   \
    work;                               \
    (sample) = now_us() - started_;     \
  } while (0)

/* torchvision's resnet50: conv + batch-norm (gamma, beta) per layer, the fc. */
static int resnet50_sizes(uint64_t* sizes) {
  int n = 0;
  sizes[n++] = 64 * 3 * 7 * 7;
  sizes[n++] = 64;
  sizes[n++] = 64;
  const int blocks[4] = {3, 4, 6, 3}, widths[4] = {64, 128, 256, 512};
  uint64_t in = 64;
  for (int layer = 0; layer < 4; ++layer) {
    const uint64_t width = (uint64_t)widths[layer], out = width * 4;
    for (int b = 0; b < blocks[layer]; ++b) {
      const uint64_t convs[3] = {in * width, width * width * 9, width * out};
      const uint64_t channels[3] = {width, width, out};
      for (int c = 0; c < 3; ++c) {
        sizes[n++] = convs[c];
        sizes[n++] = channels[c];
        sizes[n++] = channels[c];
      }
      if (b == 0) { /* the projection shortcut */
        sizes[n++] = in * out;
        sizes[n++] = out;
        sizes[n++] = out;
      }
      in = out;
    }
  }
  sizes[n++] = 1000 * 2048;
  sizes[n++] = 1000;
  return n;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* samples, int n) {
  qsort(samples, (size_t)n, sizeof *samples, by_value);
  return samples[n / 2];
}

/* The memory traffic of each step without its communication, run by every
 * worker at once, as the floor of the ratio on one host, where memory rather
 * than a link limits both. The reference all-reduce in place reads and writes
 * every element of its buffer once (in_place_pass). apply_gradients with SGD
 * reads every gradient, reads and writes the weights this worker updates (one
 * part in `workers` of every 256 KiB step) and writes the others' new weights
 * without reading them (apply_pass). */
enum { kStepFloats = 65536 }; /* the default 256 KiB shared-memory step */
static volatile float one = 1.0f;

static void in_place_pass(float* x, uint64_t n, float scale) {
  for (uint64_t e = 0; e < n; ++e) x[e] *= scale;
}

/* Writes lr * g[e] into w[e] for e in [0, n) without reading w (streaming stores). */
static void store_without_reading(float* w, const float* g, uint64_t n, float lr) {
  uint64_t e = 0;
#if defined(__SSE2__)
  const __m128 rate = _mm_set1_ps(lr);
  for (; e < n && ((uintptr_t)(w + e) % 16) != 0; ++e) w[e] = lr * g[e];
  for (; e + 4 <= n; e += 4) _mm_stream_ps(w + e, _mm_mul_ps(rate, _mm_loadu_ps(g + e)));
  _mm_sfence();
#endif
  for (; e < n; ++e) w[e] = lr * g[e];
}

static void apply_pass(float* w, const float* g, uint64_t n, int worker, int workers, float lr) {
  for (uint64_t first = 0; first < n; first += kStepFloats) {
    const uint64_t step = n - first < kStepFloats ? n - first : kStepFloats;
    const uint64_t part = step / (uint64_t)workers;
    const uint64_t mine = part * (uint64_t)worker;
    const uint64_t mine_end = worker == workers - 1 ? step : mine + part;
    store_without_reading(w + first, g + first, mine, lr);
    for (uint64_t e = first + mine; e < first + mine_end; ++e) w[e] -= lr * g[e];
    store_without_reading(w + first + mine_end, g + first + mine_end, step - mine_end, lr);
  }
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 10;
  const uint64_t pack = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
  const int local = argc > 3 ? atoi(argv[3]) : 1;
  if (iters < 1 || iters > kMaxIters) {
    fprintf(stderr, "iters must be 1..%d\n", kMaxIters);
    return 2;
  }
  if (local < 1 || local > kMaxLocal) {
    fprintf(stderr, "local replicas must be 1..%d\n", kMaxLocal);
    return 2;
  }
  const char* optimizer_name = argc > 4 ? argv[4] : "sgd";
  dist_optimizer_options_t optimizer_options = DIST_OPTIMIZER_OPTIONS_INIT;
  optimizer_options.field_mask = DIST_OPTIMIZER_OPT_KIND;
  if (strcmp(optimizer_name, "sgd") == 0) {
    optimizer_options.kind = DIST_OPTIMIZER_SGD;
  } else if (strcmp(optimizer_name, "momentum") == 0) {
    optimizer_options.kind = DIST_OPTIMIZER_MOMENTUM;
  } else if (strcmp(optimizer_name, "adam") == 0) {
    optimizer_options.kind = DIST_OPTIMIZER_ADAM;
  } else {
    fprintf(stderr, "optimizer must be sgd, momentum or adam, not '%s'\n", optimizer_name);
    return 2;
  }
  dist_cluster_t* cluster = NULL;
  dist_context_t* context = NULL;
  CHECK(dist_cluster_resolve(NULL, &cluster));
  CHECK(dist_context_create(cluster, NULL, &context));
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask =
      DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES | (pack ? DIST_STRATEGY_OPT_BYTES_PER_PACK : 0);
  options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
  options.num_cpu_devices = local;
  options.bytes_per_pack = pack;
  dist_strategy_t* strategy = NULL;
  CHECK(dist_strategy_create(context, &options, &strategy));
  int32_t worker = 0, workers = 0;
  CHECK(dist_strategy_worker_index(strategy, &worker, &workers));

  uint64_t sizes[kMaxTensors];
  const int n = resnet50_sizes(sizes);
  uint64_t total = 0;
  dist_variable_t* vars[kMaxTensors];
  static dist_buffer_t grads[kMaxLocal * kMaxTensors]; /* [replica * n + tensor] */
  for (int i = 0; i < n; ++i) {
    int64_t shape[1] = {(int64_t)sizes[i]};
    dist_variable_options_t v = DIST_VARIABLE_OPTIONS_INIT;
    v.field_mask = DIST_VARIABLE_OPT_SHAPE;
    v.shape = shape;
    v.rank = 1;
    CHECK(dist_variable_create(strategy, &v, &vars[i]));
    total += sizes[i];
  }
  for (int r = 0; r < local; ++r) {
    for (int i = 0; i < n; ++i) {
      float* g = malloc(sizes[i] * sizeof(float));
      for (uint64_t e = 0; e < sizes[i]; ++e) g[e] = 1e-3f * (float)((e + (uint64_t)i + (uint64_t)r) % 7);
      grads[r * n + i] = (dist_buffer_t){g, sizes[i], DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    }
  }
  float* flat = malloc(total * sizeof(float));
  for (uint64_t e = 0; e < total; ++e) flat[e] = 1e-3f * (float)(e % 7);
  dist_buffer_t whole = {flat, total, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  dist_comm_t* world = NULL;
  CHECK(dist_comm_world(context, &world));
  dist_optimizer_t* optimizer = NULL;
  CHECK(dist_optimizer_create(&optimizer_options, &optimizer));

  /* The traffic passes' own buffers: weights and gradients of the same size. */
  float* pass_weights = malloc(total * sizeof(float));
  float* pass_grads = malloc(total * sizeof(float));
  for (uint64_t e = 0; e < total; ++e) {
    pass_weights[e] = 1.0f;
    pass_grads[e] = 1e-3f * (float)(e % 7);
  }
  const float unit = one; /* a factor the compiler cannot fold away */

  double step[kMaxIters], ideal[kMaxIters], fused[kMaxIters], in_place[kMaxIters], apply[kMaxIters];
  /* Warm up each (first-touch of buckets, UCX registrations), then alternate. */
  CHECK(dist_strategy_apply_gradients(strategy, vars, grads, (size_t)n, optimizer));
  CHECK(dist_all_reduce(world, NULL, &whole, DIST_OP_MEAN, NULL));
  CHECK(dist_strategy_batch_all_reduce(strategy, DIST_OP_MEAN, grads, (size_t)n));
  /* The passes model SGD's shared update; other optimizers' traffic differs. */
  const int sgd = optimizer_options.kind == DIST_OPTIMIZER_SGD;
  for (int it = 0; it < iters; ++it) {
    TIMED(world, step[it], CHECK(dist_strategy_apply_gradients(strategy, vars, grads, (size_t)n, optimizer)));
    TIMED(world, ideal[it], CHECK(dist_all_reduce(world, NULL, &whole, DIST_OP_MEAN, NULL)));
    TIMED(world, fused[it], CHECK(dist_strategy_batch_all_reduce(strategy, DIST_OP_MEAN, grads, (size_t)n)));
    if (!sgd) continue;
    TIMED(world, in_place[it], in_place_pass(flat, total, unit));
    TIMED(world, apply[it], apply_pass(pass_weights, pass_grads, total, worker, workers, 1e-3f * unit));
  }
  if (worker == 0) {
    const double s = median(step, iters), i = median(ideal, iters), f = median(fused, iters);
    printf("workers %d x %d local replicas, %d tensors, %llu floats (%.1f MB), bytes_per_pack %s, %d iterations "
           "(medians)\n",
           (int)workers, local, n, (unsigned long long)total, (double)total * 4 / 1e6,
           pack ? argv[2] : "default (8 MiB)", iters);
    char label[64];
    snprintf(label, sizeof label, "apply_gradients (fused all-reduce + %s)", optimizer_name);
    printf("%-42s %10.1f ms\n", label, s / 1e3);
    printf("batch_all_reduce (fused all-reduce alone)  %10.1f ms\n", f / 1e3);
    printf("one all-reduce of one %.0f MB buffer       %10.1f ms\n", (double)total * 4 / 1e6, i / 1e3);
    printf("ratio apply_gradients / one all-reduce     %10.3f\n", s / i);
    printf("ratio batch_all_reduce / one all-reduce    %10.3f\n", f / i);
    if (sgd) {
      const double p = median(in_place, iters), a = median(apply, iters);
      printf("memory traffic alone, every worker at once (no communication):\n");
      printf("  one in-place pass (the all-reduce's)      %10.1f ms\n", p / 1e3);
      printf("  one SGD pass (apply_gradients')           %10.1f ms\n", a / 1e3);
      printf("  ratio                                     %10.3f\n", a / p);
    }
  }
  for (int i = 0; i < n; ++i) dist_variable_destroy(vars[i]);
  for (int k = 0; k < local * n; ++k) free(grads[k].data);
  free(flat);
  free(pass_weights);
  free(pass_grads);
  dist_optimizer_destroy(optimizer);
  dist_strategy_destroy(strategy);
  dist_context_destroy(context);
  dist_cluster_destroy(cluster);
  return 0;
}
