/* Why small shared-memory calls rotate through their slots
 * (ShmGroup::rotate_slots): two processes on two cores (CPU 0 and 1) gather
 * blocks through shared memory the way a one-step all-gather does (write the
 * own block into the own slot, announce it, copy the own block into the
 * result, wait for the peer, copy the peer's block out of its slot), with the
 * slot's block at PLACES places taken in turn call by call: 2 is what the
 * library did before (two slots alternating), 32 what it does for 8 KiB. With
 * PIECES > 1 each block is announced in that many pieces, so that the reader
 * may start before the writer has finished.
 *
 * One line: places pieces block_bytes us_per_call.
 *
 *   cc -O2 -o build/slot_places bench/modes/slot_places.c
 *   build/slot_places PLACES [PIECES] [BLOCK_BYTES] [CALLS]   (defaults 1, 8192, 200000)
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kWarmCalls = 1000 };

struct announced {
  _Alignas(64) _Atomic uint64_t pieces; /* pieces published so far, over all calls */
  _Atomic int failed;                   /* this process has stopped: the peer must not wait for it */
  char pad[52];
};

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Whether the other process has ended without saying so (a signal): checked
 * now and then while waiting, so that neither spins on forever. */
static int peer_gone(pid_t child, pid_t parent, int* status) {
  if (child == 0) return getppid() != parent;
  return waitpid(child, status, WNOHANG) == child;
}

static long positive(const char* text, const char* what) {
  char* end = NULL;
  long value = strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1) {
    fprintf(stderr, "slot_places: %s must be a positive number, not '%s'\n", what, text);
    exit(2);
  }
  return value;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: slot_places PLACES [PIECES] [BLOCK_BYTES] [CALLS]\n");
    return 2;
  }
  /* A rank rewrites a place two calls after it wrote it, once the peer has
   * announced the call after the one that read it: safe from 2 places on, as
   * the library's two slots are. */
  const size_t places = (size_t)positive(argv[1], "PLACES");
  if (places < 2) {
    fprintf(stderr, "slot_places: PLACES must be at least 2\n");
    return 2;
  }
  const size_t pieces = argc > 2 ? (size_t)positive(argv[2], "PIECES") : 1;
  const size_t block = argc > 3 ? (size_t)positive(argv[3], "BLOCK_BYTES") : 8192;
  const long calls = argc > 4 ? positive(argv[4], "CALLS") : 200000;
  if (block % (pieces * 64) != 0) {
    fprintf(stderr, "slot_places: BLOCK_BYTES must be a multiple of 64 * PIECES\n");
    return 2;
  }
  const size_t piece = block / pieces;
  const size_t slot_bytes = places * block;
  const size_t shared_bytes = 2 * slot_bytes + 2 * sizeof(struct announced);
  unsigned char* shared = mmap(NULL, shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    perror("slot_places: mmap");
    return 1;
  }
  memset(shared, 0, shared_bytes);
  struct announced* announced = (struct announced*)(shared + 2 * slot_bytes);

  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    perror("slot_places: fork");
    return 1;
  }
  const int me = child == 0 ? 1 : 0, peer = 1 - me;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(me, &cpus);
  if (sched_setaffinity(0, sizeof cpus, &cpus) != 0) perror("slot_places: sched_setaffinity (running unpinned)");

  unsigned char* input = aligned_alloc(4096, block);
  unsigned char* result = aligned_alloc(4096, 2 * block);
  if (input == NULL || result == NULL) {
    fprintf(stderr, "slot_places: out of memory for %zu-byte blocks\n", block);
    atomic_store(&announced[me].failed, 1);
    return 1;
  }
  memset(result, 0, 2 * block);
  double start = 0;
  for (long call = 0; call < calls + kWarmCalls; ++call) {
    if (call == kWarmCalls) start = seconds();
    /* The input changes every call, so a stale read shows in the check below. */
    memset(input, (int)((call + me) & 0x7f), block);
    const size_t place = (size_t)call % places * block;
    unsigned char* mine = shared + (size_t)me * slot_bytes + place;
    const unsigned char* theirs = shared + (size_t)peer * slot_bytes + place;
    const uint64_t before = (uint64_t)call * pieces;
    for (size_t p = 0; p < pieces; ++p) {
      memcpy(mine + p * piece, input + p * piece, piece);
      atomic_store_explicit(&announced[me].pieces, before + p + 1, memory_order_release);
    }
    memcpy(result + (size_t)me * block, input, block);
    for (size_t p = 0; p < pieces; ++p) {
      for (unsigned long polls = 1;
           atomic_load_explicit(&announced[peer].pieces, memory_order_acquire) < before + p + 1; ++polls) {
        if (atomic_load_explicit(&announced[peer].failed, memory_order_relaxed)) return 1; /* it said why */
        int status = 0;
        if (polls % (1ul << 24) == 0 && peer_gone(child, parent, &status)) {
          fprintf(stderr, "slot_places: the other process ended in call %ld (wait status %d)\n", call, status);
          return 1;
        }
        _mm_pause();
      }
      memcpy(result + (size_t)peer * block + p * piece, theirs + p * piece, piece);
    }
    if (result[(size_t)peer * block + block - 1] != (unsigned char)((call + peer) & 0x7f)) {
      fprintf(stderr, "slot_places: call %ld read a stale block\n", call);
      atomic_store(&announced[me].failed, 1);
      return 1;
    }
  }
  const double elapsed = seconds() - start;
  if (me == 1) return 0;
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "slot_places: the second process failed (wait status %d)\n", status);
    return 1;
  }
  printf("%zu %zu %zu %.3f\n", places, pieces, block, elapsed / (double)calls * 1e6);
  return 0;
}
