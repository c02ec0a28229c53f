/* The memory-bandwidth ceilings, timed like the collectives (peer_measure):
 *
 *   memcpy_bench [--procs N] [--stream] <peer options>
 *
 * Each of N processes (default 1) copies `bytes` between two buffers of its
 * own, all at once, in lock step (a process-shared barrier before each
 * sample); the time is the slowest process's. With N > 1 they are all
 * children of a watching process, which ends them all when one fails. --stream copies with
 * non-temporal stores, as the shared-memory all-reduce writes large results;
 * without it, glibc's memcpy. algbw = busbw = bytes copied per second by one
 * process (the memory system moves about twice that per process: every byte
 * is read once and written once).
 *
 * Why N processes: an all-reduce of N ranks on one host must at least read
 * each rank's input and write each rank's output, all ranks at the same
 * time -- exactly N concurrent copies. Their rate bounds any all-reduce's
 * bus bandwidth on this machine (for 2 ranks busbw = algbw). */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peer_csv.h"
#include "peer_measure.h"
#include "peer_options.h"

enum { kMaxProcs = 8, kMaxValues = 64 };

/* Shared by the processes: the barrier and each one's values for the max. */
typedef struct {
  pthread_barrier_t barrier;
  double values[kMaxProcs][kMaxValues];
} shared_t;

typedef struct {
  shared_t* shared;
  int procs;
  int me;
  int stream;
  char* src;
  char* dst;
  size_t bytes;
} copy_t;

/* Copies with 16-byte non-temporal stores; bytes is a multiple of 64. */
static void stream_copy(char* dst, const char* src, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64) {
    const __m128i a = _mm_load_si128((const __m128i*)(src + i));
    const __m128i b = _mm_load_si128((const __m128i*)(src + i + 16));
    const __m128i c = _mm_load_si128((const __m128i*)(src + i + 32));
    const __m128i d = _mm_load_si128((const __m128i*)(src + i + 48));
    _mm_stream_si128((__m128i*)(dst + i), a);
    _mm_stream_si128((__m128i*)(dst + i + 16), b);
    _mm_stream_si128((__m128i*)(dst + i + 32), c);
    _mm_stream_si128((__m128i*)(dst + i + 48), d);
  }
  _mm_sfence();
}

static void run_copy(void* self) {
  copy_t* c = self;
  if (c->stream) {
    stream_copy(c->dst, c->src, c->bytes);
  } else {
    memcpy(c->dst, c->src, c->bytes);
  }
  /* Keeps the compiler from treating repeated copies as dead. */
  __asm__ volatile("" : : "r"(c->dst) : "memory");
}

static void barrier(void* self) {
  copy_t* c = self;
  if (c->procs > 1) pthread_barrier_wait(&c->shared->barrier);
}

static void max_over_procs(void* self, double* v, size_t n) {
  copy_t* c = self;
  if (c->procs == 1) return;
  memcpy(c->shared->values[c->me], v, n * sizeof *v);
  barrier(self);
  for (int p = 0; p < c->procs; p++)
    for (size_t i = 0; i < n; i++)
      if (c->shared->values[p][i] > v[i]) v[i] = c->shared->values[p][i];
  /* Nobody overwrites its row for the next call before everyone has read. */
  barrier(self);
}

/* One process's whole run; process 0 prints the rows. */
static int measure_all(const peer_options_t* opts, copy_t* c) {
  char variant[160];
  snprintf(variant, sizeof variant, "%s/%dproc%s", c->stream ? "stream" : "memcpy", c->procs,
           c->procs > 1 ? "s" : "");
  for (int s = 0; s < opts->num_sizes; s++) {
    /* Whole 64-byte lines for the stream copy. */
    const size_t bytes = c->stream ? (opts->sizes[s] + 63) & ~(size_t)63 : opts->sizes[s];
    const size_t alloc = (bytes + 4095) & ~(size_t)4095;
    c->src = aligned_alloc(4096, alloc);
    c->dst = aligned_alloc(4096, alloc);
    c->bytes = bytes;
    if (!c->src || !c->dst) {
      fprintf(stderr, "memcpy_bench: out of memory for %zu B\n", bytes);
      return 1;
    }
    memset(c->src, 1 + c->me, bytes);
    memset(c->dst, 0, bytes);
    run_copy(c);
    if (memcmp(c->src, c->dst, bytes) != 0) {
      fprintf(stderr, "memcpy_bench: copy of %zu B differs\n", bytes);
      return 1;
    }
    peer_ops_t ops = {c, run_copy, barrier, max_over_procs};
    if (peer_measure_row(&ops, opts->budget_s, opts->max_call_s, "memcpy_bench", "memcpy", variant, c->procs, bytes,
                         c->me == 0) != 0) {
      return 1;
    }
    free(c->src);
    free(c->dst);
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  const char* procs_text = "1";
  const char* stream_flag = NULL;
  const peer_own_option_t own[] = {{"--procs", 1, &procs_text}, {"--stream", 0, &stream_flag}, {NULL, 0, NULL}};
  peer_options_t opts;
  if (!peer_options_parse_own(argc, argv, "1thread", own, &opts)) return 2;
  const int procs = atoi(procs_text), stream = stream_flag != NULL;
  if (procs < 1 || procs > kMaxProcs) {
    fprintf(stderr, "memcpy_bench: --procs %s is not between 1 and %d\n", procs_text, kMaxProcs);
    return 2;
  }
  if (opts.header) peer_csv_header(stdout);

  shared_t* shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    perror("memcpy_bench: mmap");
    return 1;
  }
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (pthread_barrier_init(&shared->barrier, &attr, (unsigned)procs) != 0) {
    fprintf(stderr, "memcpy_bench: cannot make a process-shared barrier\n");
    return 1;
  }
  if (procs == 1) {
    copy_t c = {shared, 1, 0, stream, NULL, NULL, 0};
    return measure_all(&opts, &c);
  }
  /* Every copying process is a child, and this one only watches them: one that
   * fails leaves the others waiting at the barrier, so the first failure ends
   * them all at once instead of leaving them to bench/compare's timeout. */
  const pid_t watcher = getpid();
  pid_t children[kMaxProcs];
  int running[kMaxProcs] = {0};
  for (int p = 0; p < procs; p++) {
    children[p] = fork();
    if (children[p] < 0) {
      perror("memcpy_bench: fork");
      for (int q = 0; q < p; q++) kill(children[q], SIGKILL);
      for (int q = 0; q < p; q++) waitpid(children[q], NULL, 0);
      return 1;
    }
    if (children[p] == 0) {
      /* Ends with the watcher, should a timeout kill it first. */
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != watcher) _exit(1);
      copy_t c = {shared, procs, p, stream, NULL, NULL, 0};
      _exit(measure_all(&opts, &c));
    }
    running[p] = 1;
  }
  int status = 0;
  for (int left = procs; left > 0;) {
    int child_status = 0;
    const pid_t done = waitpid(-1, &child_status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      perror("memcpy_bench: waitpid");
      return 1;
    }
    int p = 0;
    while (p < procs && children[p] != done) p++;
    if (p == procs) continue;
    running[p] = 0;
    left--;
    if (WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0) continue;
    if (status == 0) {
      if (WIFSIGNALED(child_status)) {
        fprintf(stderr, "memcpy_bench: process %d ended by signal %d; stopping the others\n", p,
                WTERMSIG(child_status));
      } else {
        fprintf(stderr, "memcpy_bench: process %d failed; stopping the others\n", p);
      }
      for (int q = 0; q < procs; q++) {
        if (running[q]) kill(children[q], SIGKILL);
      }
    }
    status = 1;
  }
  return status;
}
