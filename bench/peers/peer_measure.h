/* The timing method every peer benchmark uses (and dist-bench should match):
 *
 *   1. the caller runs one verified call first (not timed here);
 *   2. warm-up: `w` untimed calls, then `w` calls timed as a batch give a
 *      per-call estimate; ranks agree on the largest estimate;
 *   3. from the estimate and the time budget: `samples` (5..25, down to 3
 *      when 5 calls would take over 4 budgets) and `batch` calls per sample,
 *      so small messages are timed in batches long enough for the clock and
 *      large ones one call per sample;
 *   4. each sample: barrier, then `batch` back-to-back calls timed on each rank,
 *      divided by `batch`;
 *   5. the MAX over ranks of each sample, then the MEDIAN over samples.
 *
 * A call slower than `max_call_s` at step 2 ends the measurement there: the
 * configuration is broken or stalling, and timing it would only burn the
 * run's time. Ranks agree on every count through the collective callbacks,
 * so no rank decides a loop length from its own clock alone. */
#ifndef PEER_MEASURE_H
#define PEER_MEASURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  void* self;
  /* One call of the collective being measured. */
  void (*run)(void* self);
  void (*barrier)(void* self);
  /* Element-wise max of v[0..n) over all ranks, written back on every rank. */
  void (*max_over_ranks)(void* self, double* v, size_t n);
} peer_ops_t;

typedef struct {
  size_t iters;    /* timed calls: samples * batch; 0 when too slow */
  double median_s; /* median over samples of the slowest rank's per-call time */
  double first_s;  /* the first timed call (slowest rank) */
} peer_timing_t;

/* Monotonic wall clock in seconds. */
double peer_now(void);

/* Measure with about `budget_s` seconds of calls. */
peer_timing_t peer_measure(const peer_ops_t* ops, double budget_s, double max_call_s);

/* peer_measure, then (where `prints`) one CSV row on stdout with algbw = busbw
 * = bytes per second. Returns 0, or 1 after a message on stderr naming
 * `program` when even the first call outlasted `max_call_s`. */
int peer_measure_row(const peer_ops_t* ops, double budget_s, double max_call_s, const char* program,
                     const char* impl, const char* variant, int nprocs, size_t bytes, int prints);

#ifdef __cplusplus
}
#endif

#endif
