/* What this machine's two speed modes differ in: two threads on two cores
 * (CPU 0 and CPU 1, or those given) measure
 *   - the round trip of one cache line between them (a flag set by one,
 *     answered by the other);
 *   - how fast one copies 256 KiB that the other has just written, with
 *     ordinary stores (the lines sit modified in the writer's cache: what a
 *     shared-memory slot holds when its reader comes) and with non-temporal
 *     stores (the lines go to memory first);
 *   - how fast the writer itself stores, both ways.
 * One line per run: round_trip_ns read_written_GBps read_streamed_GBps
 * store_GBps stream_store_GBps. bench/modes/probe runs it between
 * dist-bench runs; with --round-trip it prints the round trip alone, the
 * mode probe of bench/compare (lib.sh).
 *
 *   cross_core [--round-trip] [CPU_A CPU_B]
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kBytes = 256 * 1024, kRoundTrips = 100000, kCopies = 200, kWarmCopies = 10 };

static int cpu_a = 0, cpu_b = 1;
static _Alignas(64) atomic_long line = -1; /* the round trip's flag, -1 before the first */
static _Alignas(64) atomic_int written;    /* copies the writer has made */
static _Alignas(64) atomic_int read_done;  /* copies the reader has taken */
static char* shared;
static char* copy;
static int streaming;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "cross_core: cannot run on CPU %d\n", cpu);
    exit(2);
  }
}

static void store(int value) {
  if (!streaming) {
    memset(shared, value, kBytes);
    return;
  }
  const __m128i v = _mm_set1_epi8((char)value);
  for (size_t i = 0; i < kBytes; i += 16) _mm_stream_si128((__m128i*)(shared + i), v);
  _mm_sfence();
}

static void* answerer(void* unused) {
  (void)unused;
  pin(cpu_a);
  for (long i = 0; i < kRoundTrips; ++i) {
    while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i) {
    }
    atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
  }
  return NULL;
}

static void* writer(void* unused) {
  (void)unused;
  pin(cpu_a);
  for (int k = 1; k <= kCopies; ++k) {
    while (atomic_load_explicit(&read_done, memory_order_acquire) != k - 1) {
    }
    store(k);
    atomic_store_explicit(&written, k, memory_order_release);
  }
  return NULL;
}

static double read_written_GBps(int streamed) {
  streaming = streamed;
  atomic_store(&written, 0);
  atomic_store(&read_done, 0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, writer, NULL) != 0) exit(2);
  double total_ns = 0;
  for (int k = 1; k <= kCopies; ++k) {
    while (atomic_load_explicit(&written, memory_order_acquire) != k) {
    }
    const double start = now_ns();
    memcpy(copy, shared, kBytes);
    if (k > kWarmCopies) total_ns += now_ns() - start;
    if (copy[kBytes - 1] != (char)k) {
      fprintf(stderr, "cross_core: copy %d read %d\n", k, copy[kBytes - 1]);
      exit(1);
    }
    atomic_store_explicit(&read_done, k, memory_order_release);
  }
  pthread_join(thread, NULL);
  return (double)kBytes * (kCopies - kWarmCopies) / total_ns;
}

static double store_GBps(int streamed) {
  streaming = streamed;
  const double start = now_ns();
  for (int k = 0; k < 50; ++k) store(k);
  return 50.0 * kBytes / (now_ns() - start);
}

int main(int argc, char** argv) {
  int round_trip_only = 0;
  if (argc > 1 && strcmp(argv[1], "--round-trip") == 0) {
    round_trip_only = 1;
    --argc;
    ++argv;
  }
  if (argc == 3) {
    cpu_a = atoi(argv[1]);
    cpu_b = atoi(argv[2]);
  } else if (argc != 1) {
    fprintf(stderr, "usage: cross_core [--round-trip] [CPU_A CPU_B]\n");
    return 2;
  }
  shared = aligned_alloc(4096, kBytes);
  copy = aligned_alloc(4096, kBytes);
  if (shared == NULL || copy == NULL) return 2;
  memset(shared, 0, kBytes);
  memset(copy, 0, kBytes);

  pthread_t thread;
  if (pthread_create(&thread, NULL, answerer, NULL) != 0) return 2;
  pin(cpu_b);
  const double start = now_ns();
  for (long i = 0; i < kRoundTrips; ++i) {
    atomic_store_explicit(&line, 2 * i, memory_order_release);
    while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {
    }
  }
  const double round_trip_ns = (now_ns() - start) / kRoundTrips;
  pthread_join(thread, NULL);
  if (round_trip_only) {
    printf("%.0f\n", round_trip_ns);
    return 0;
  }

  const double written_GBps = read_written_GBps(0);
  const double streamed_GBps = read_written_GBps(1);
  pin(cpu_a);
  const double plain = store_GBps(0), stream = store_GBps(1);
  printf("%.0f %.2f %.2f %.2f %.2f\n", round_trip_ns, written_GBps, streamed_GBps, plain, stream);
  return 0;
}
