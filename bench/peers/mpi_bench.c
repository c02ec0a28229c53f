/* An MPI's collectives, timed by peer_measure and checked by peer_collective:
 * Open MPI's, or Intel MPI's when built with -DPEER_MPI_IMPL='"intelmpi"'
 * (bench/peers/Makefile, target intel). Which transport and algorithm MPI uses
 * is decided by the launch (bench/compare); --variant only names that
 * configuration in the CSV.
 * Every collective is out of place except broadcast, so inputs stay intact and
 * the result is checked both before and after timing. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_collective.h"
#include "peer_csv.h"
#include "peer_measure.h"
#include "peer_options.h"

/* The CSV's impl column, and the name in messages. */
#ifndef PEER_MPI_IMPL
#define PEER_MPI_IMPL "openmpi"
#endif

typedef struct {
  peer_collective_t collective;
  float* in;
  float* out;
  size_t in_count, out_count, block;
} mpi_call_t;

static void run_call(void* self) {
  mpi_call_t* c = self;
  switch (c->collective) {
    case PEER_ALLREDUCE:
      MPI_Allreduce(c->in, c->out, (int)c->in_count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case PEER_ALLGATHER:
      MPI_Allgather(c->in, (int)c->block, MPI_FLOAT, c->out, (int)c->block, MPI_FLOAT,
                    MPI_COMM_WORLD);
      break;
    case PEER_REDUCE_SCATTER:
      MPI_Reduce_scatter_block(c->in, c->out, (int)c->block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case PEER_BROADCAST:
      MPI_Bcast(c->in, (int)c->in_count, MPI_FLOAT, 0, MPI_COMM_WORLD);
      break;
    case PEER_ALLTOALL:
      MPI_Alltoall(c->in, (int)c->block, MPI_FLOAT, c->out, (int)c->block, MPI_FLOAT,
                   MPI_COMM_WORLD);
      break;
  }
}

static void run_barrier(void* self) {
  (void)self;
  MPI_Barrier(MPI_COMM_WORLD);
}

static void max_over_ranks(void* self, double* v, size_t n) {
  (void)self;
  MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

/* Wrong elements summed over all ranks. */
static double wrong_everywhere(const mpi_call_t* c, int rank, int nprocs) {
  const float* result = c->collective == PEER_BROADCAST ? c->in : c->out;
  const size_t count = c->collective == PEER_BROADCAST ? c->in_count : c->out_count;
  double wrong = (double)peer_collective_check(c->collective, rank, nprocs, c->block, result, count);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return wrong;
}

static float* alloc_floats(size_t n) {
  /* Page-aligned, rounded up, as aligned_alloc requires. */
  size_t bytes = (n * sizeof(float) + 4095) & ~(size_t)4095;
  return aligned_alloc(4096, bytes ? bytes : 4096);
}

/* Returns 0 when every size ran and checked out. */
static int bench_collective(const peer_options_t* opts, peer_collective_t collective, int rank,
                            int nprocs) {
  char variant[256];
  snprintf(variant, sizeof variant, "%s/%s", peer_collective_name(collective), opts->variant);
  for (int s = 0; s < opts->num_sizes; s++) {
    const size_t bytes = opts->sizes[s];
    mpi_call_t c = {collective, NULL, NULL, 0, 0, 0};
    if (!peer_collective_counts(collective, bytes, nprocs, &c.in_count, &c.out_count, &c.block)) {
      if (rank == 0)
        fprintf(stderr, "skipped: %s %s %zu B: not whole floats per rank for %d ranks\n",
                PEER_MPI_IMPL, variant, bytes, nprocs);
      continue;
    }
    c.in = alloc_floats(c.in_count);
    c.out = alloc_floats(c.out_count);
    if (!c.in || !c.out) {
      fprintf(stderr, "%s %s %zu B: out of memory\n", PEER_MPI_IMPL, variant, bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer_collective_fill(collective, rank, nprocs, c.block, c.in, c.in_count, c.out, c.out_count);

    run_call(&c);
    double wrong = wrong_everywhere(&c, rank, nprocs);
    peer_timing_t t = {0, 0.0, 0.0};
    if (wrong == 0) {
      peer_ops_t ops = {&c, run_call, run_barrier, max_over_ranks};
      t = peer_measure(&ops, opts->budget_s, opts->max_call_s);
      wrong = wrong_everywhere(&c, rank, nprocs);
    }
    free(c.in);
    free(c.out);
    if (wrong != 0) {
      if (rank == 0)
        fprintf(stderr, "%s %s %zu B: %.0f wrong elements across ranks; stopping this collective\n",
                PEER_MPI_IMPL, variant, bytes, wrong);
      return 1;
    }
    if (t.iters == 0) {
      if (rank == 0)
        fprintf(stderr, "skipped: %s %s from %zu B up: one call took %.2f s (--max-call %.2f s)\n",
                PEER_MPI_IMPL, variant, bytes, t.first_s, opts->max_call_s);
      return 0;
    }
    if (rank == 0)
      peer_csv_row(stdout, PEER_MPI_IMPL, variant, nprocs, bytes, t.iters, t.median_s,
                   peer_collective_busbw_factor(collective, nprocs));
  }
  return 0;
}

int main(int argc, char** argv) {
  peer_options_t opts;
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (!peer_options_parse(argc, argv, "default", &opts)) {
    MPI_Finalize();
    return 2;
  }
  if (strcmp(opts.mode, "default") != 0) {
    if (rank == 0) fprintf(stderr, "mpi_bench: --mode is a Gloo option\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0 && opts.header) peer_csv_header(stdout);
  int failed = 0;
  for (int i = 0; i < opts.num_collectives; i++)
    failed |= bench_collective(&opts, opts.collectives[i], rank, nprocs);
  MPI_Finalize();
  return failed ? 3 : 0;
}
