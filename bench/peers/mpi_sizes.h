/* The size loop of the peers an MPI launches (mpi_bench for Open MPI and
 * Intel MPI, oneccl_bench): per size, the buffers filled, one call checked,
 * the calls timed, checked again, and rank 0's CSV row. MPI carries the
 * harness's own reductions (wrong elements, the slowest rank's times); the
 * implementation runs the collective and the barrier. */
#ifndef MPI_SIZES_H
#define MPI_SIZES_H

#include <stddef.h>

#include "peer_collective.h"
#include "peer_options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  float* in;
  float* out;
  size_t in_count, out_count, block; /* peer_collective_counts' shapes */
} mpi_sizes_buffers_t;

typedef struct {
  const char* impl; /* the CSV's impl column, and the name in messages */
  void* self;
  /* One call of `collective` on the buffers (out of place but broadcast). */
  void (*run)(void* self, peer_collective_t collective, const mpi_sizes_buffers_t* buffers);
  void (*barrier)(void* self);
} mpi_sizes_impl_t;

/* Every size of opts for one collective; 0 when each ran and checked out. */
int mpi_sizes_bench(const mpi_sizes_impl_t* impl, const peer_options_t* opts, peer_collective_t collective,
                    int rank, int nprocs);

#ifdef __cplusplus
}
#endif

#endif
