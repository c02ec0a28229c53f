/* An MPI's collectives, timed and checked by mpi_sizes: Open MPI's, or Intel
 * MPI's when built with -DPEER_MPI_IMPL='"intelmpi"' (bench/peers/Makefile,
 * target intel). Which transport and algorithm MPI uses is decided by the
 * launch (bench/compare); --variant only names that configuration in the CSV.
 * Every collective is out of place except broadcast, so inputs stay intact and
 * the result is checked both before and after timing. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpi_sizes.h"
#include "peer_csv.h"
#include "peer_options.h"

/* The CSV's impl column, and the name in messages. */
#ifndef PEER_MPI_IMPL
#define PEER_MPI_IMPL "openmpi"
#endif

static void run_call(void* self, peer_collective_t collective, const mpi_sizes_buffers_t* b) {
  (void)self;
  switch (collective) {
    case PEER_ALLREDUCE:
      MPI_Allreduce(b->in, b->out, (int)b->in_count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case PEER_ALLGATHER:
      MPI_Allgather(b->in, (int)b->block, MPI_FLOAT, b->out, (int)b->block, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case PEER_REDUCE_SCATTER:
      MPI_Reduce_scatter_block(b->in, b->out, (int)b->block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case PEER_BROADCAST:
      MPI_Bcast(b->in, (int)b->in_count, MPI_FLOAT, 0, MPI_COMM_WORLD);
      break;
    case PEER_ALLTOALL:
      MPI_Alltoall(b->in, (int)b->block, MPI_FLOAT, b->out, (int)b->block, MPI_FLOAT, MPI_COMM_WORLD);
      break;
  }
}

static void run_barrier(void* self) {
  (void)self;
  MPI_Barrier(MPI_COMM_WORLD);
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
  const mpi_sizes_impl_t impl = {PEER_MPI_IMPL, NULL, run_call, run_barrier};
  int failed = 0;
  for (int i = 0; i < opts.num_collectives; i++)
    failed |= mpi_sizes_bench(&impl, &opts, opts.collectives[i], rank, nprocs);
  MPI_Finalize();
  return failed ? 3 : 0;
}
