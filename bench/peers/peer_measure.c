#define _POSIX_C_SOURCE 200809L
#include "peer_measure.h"

#include <stdio.h>

#include "peer_csv.h"

#include <stdlib.h>
#include <time.h>

enum { kMinSamples = 5, kFewestSamples = 3, kMaxSamples = 25, kMaxWarmup = 1000 };

double peer_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time `calls` back-to-back calls after a barrier; slowest rank's per-call time. */
static double timed_batch(const peer_ops_t* ops, size_t calls) {
  ops->barrier(ops->self);
  const double start = peer_now();
  for (size_t i = 0; i < calls; i++) ops->run(ops->self);
  double per_call = (peer_now() - start) / (double)calls;
  ops->max_over_ranks(ops->self, &per_call, 1);
  return per_call;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, size_t n) {
  qsort(v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static size_t clamp(double x, size_t lo, size_t hi) {
  if (!(x >= (double)lo)) return lo; /* also catches NaN */
  if (x >= (double)hi) return hi;
  return (size_t)x;
}

peer_timing_t peer_measure(const peer_ops_t* ops, double budget_s, double max_call_s) {
  peer_timing_t t = {0, 0.0, 0.0};
  /* The first call still pays first-touch and connection costs: it only sizes the warm-up. */
  double estimate = t.first_s = timed_batch(ops, 1);
  if (estimate > max_call_s) return t;
  const double warmup_share = 0.1 * budget_s / estimate;
  if (warmup_share >= 1.0) estimate = timed_batch(ops, clamp(warmup_share, 1, kMaxWarmup));

  const double total = 0.8 * budget_s / estimate;
  size_t samples = clamp(total, kMinSamples, kMaxSamples);
  /* Large, slow calls: fewer samples rather than many budgets per size. */
  if ((double)samples * estimate > 4.0 * budget_s)
    samples = clamp(4.0 * budget_s / estimate, kFewestSamples, kMinSamples);
  const size_t batch = clamp(total / (double)samples, 1, (size_t)-1);

  double times[kMaxSamples];
  for (size_t s = 0; s < samples; s++) {
    ops->barrier(ops->self);
    const double start = peer_now();
    for (size_t i = 0; i < batch; i++) ops->run(ops->self);
    times[s] = (peer_now() - start) / (double)batch;
  }
  ops->max_over_ranks(ops->self, times, samples);

  t.iters = samples * batch;
  t.median_s = median(times, samples);
  return t;
}

int peer_measure_row(const peer_ops_t* ops, double budget_s, double max_call_s, const char* program,
                     const char* impl, const char* variant, int nprocs, size_t bytes, int prints) {
  const peer_timing_t t = peer_measure(ops, budget_s, max_call_s);
  if (t.iters == 0) {
    fprintf(stderr, "%s: a call of %zu B took %.2f s\n", program, bytes, t.first_s);
    return 1;
  }
  if (prints) peer_csv_row(stdout, impl, variant, nprocs, bytes, t.iters, t.median_s, 1.0);
  return 0;
}
