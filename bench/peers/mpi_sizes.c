/* mpi_sizes.h; compiled once per MPI (their mpi.h differ in ABI). */
#include "mpi_sizes.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "peer_csv.h"
#include "peer_measure.h"

typedef struct {
  const mpi_sizes_impl_t* impl;
  peer_collective_t collective;
  mpi_sizes_buffers_t buffers;
} call_t;

static void run_call(void* self) {
  const call_t* c = self;
  c->impl->run(c->impl->self, c->collective, &c->buffers);
}

static void run_barrier(void* self) {
  const call_t* c = self;
  c->impl->barrier(c->impl->self);
}

static void max_over_ranks(void* self, double* v, size_t n) {
  (void)self;
  MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

/* Wrong elements summed over all ranks. */
static double wrong_everywhere(const call_t* c, int rank, int nprocs) {
  const mpi_sizes_buffers_t* b = &c->buffers;
  const float* result = c->collective == PEER_BROADCAST ? b->in : b->out;
  const size_t count = c->collective == PEER_BROADCAST ? b->in_count : b->out_count;
  double wrong = (double)peer_collective_check(c->collective, rank, nprocs, b->block, result, count);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return wrong;
}

static float* alloc_floats(size_t n) {
  /* Page-aligned, rounded up, as aligned_alloc requires. */
  size_t bytes = (n * sizeof(float) + 4095) & ~(size_t)4095;
  return aligned_alloc(4096, bytes ? bytes : 4096);
}

int mpi_sizes_bench(const mpi_sizes_impl_t* impl, const peer_options_t* opts, peer_collective_t collective,
                    int rank, int nprocs) {
  char variant[256];
  snprintf(variant, sizeof variant, "%s/%s", peer_collective_name(collective), opts->variant);
  for (int s = 0; s < opts->num_sizes; s++) {
    const size_t bytes = opts->sizes[s];
    call_t c = {impl, collective, {NULL, NULL, 0, 0, 0}};
    mpi_sizes_buffers_t* b = &c.buffers;
    if (!peer_collective_counts(collective, bytes, nprocs, &b->in_count, &b->out_count, &b->block)) {
      if (rank == 0)
        fprintf(stderr, "skipped: %s %s %zu B: not whole floats per rank for %d ranks\n", impl->impl, variant,
                bytes, nprocs);
      continue;
    }
    b->in = alloc_floats(b->in_count);
    b->out = alloc_floats(b->out_count);
    if (!b->in || !b->out) {
      fprintf(stderr, "%s %s %zu B: out of memory\n", impl->impl, variant, bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer_collective_fill(collective, rank, nprocs, b->block, b->in, b->in_count, b->out, b->out_count);

    run_call(&c);
    double wrong = wrong_everywhere(&c, rank, nprocs);
    peer_timing_t t = {0, 0.0, 0.0};
    if (wrong == 0) {
      peer_ops_t ops = {&c, run_call, run_barrier, max_over_ranks};
      t = peer_measure(&ops, opts->budget_s, opts->max_call_s);
      wrong = wrong_everywhere(&c, rank, nprocs);
    }
    free(b->in);
    free(b->out);
    if (wrong != 0) {
      if (rank == 0)
        fprintf(stderr, "%s %s %zu B: %.0f wrong elements across ranks; stopping this collective\n", impl->impl,
                variant, bytes, wrong);
      return 1;
    }
    if (t.iters == 0) {
      if (rank == 0)
        fprintf(stderr, "skipped: %s %s from %zu B up: one call took %.2f s (--max-call %.2f s)\n", impl->impl,
                variant, bytes, t.first_s, opts->max_call_s);
      return 0;
    }
    if (rank == 0)
      peer_csv_row(stdout, impl->impl, variant, nprocs, bytes, t.iters, t.median_s,
                   peer_collective_busbw_factor(collective, nprocs));
  }
  return 0;
}
