// oneCCL's collectives (Intel's collective library for CPUs), timed by
// peer_measure and checked by peer_collective as every peer is. Started by
// Intel MPI's mpiexec.hydra, whose MPI also carries the bootstrap: rank 0's
// key-value store address reaches the others by MPI_Bcast, as oneCCL's own
// examples start. Which transport and algorithm oneCCL uses is decided by its
// environment (CCL_ATL_TRANSPORT, CCL_ALLREDUCE, ...; bench/compare);
// --variant only names that configuration in the CSV.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <oneapi/ccl.hpp>
#include <vector>

#include "peer_collective.h"
#include "peer_csv.h"
#include "peer_measure.h"
#include "peer_options.h"

namespace {

struct Call {
  peer_collective_t collective;
  float* in = nullptr;
  float* out = nullptr;
  size_t in_count = 0, out_count = 0, block = 0;
  ccl::communicator* comm = nullptr;
  std::vector<size_t> recv_counts;  // all-gather: one block from every rank
};

void run_call(void* self) {
  Call* c = static_cast<Call*>(self);
  switch (c->collective) {
    case PEER_ALLREDUCE:
      ccl::allreduce(c->in, c->out, c->in_count, ccl::reduction::sum, *c->comm).wait();
      break;
    case PEER_ALLGATHER:
      ccl::allgatherv(c->in, c->block, c->out, c->recv_counts, *c->comm).wait();
      break;
    case PEER_REDUCE_SCATTER:
      ccl::reduce_scatter(c->in, c->out, c->block, ccl::reduction::sum, *c->comm).wait();
      break;
    case PEER_BROADCAST:
      ccl::broadcast(c->in, c->in_count, 0, *c->comm).wait();
      break;
    case PEER_ALLTOALL:
      ccl::alltoall(c->in, c->out, c->block, *c->comm).wait();
      break;
  }
}

void run_barrier(void* self) { ccl::barrier(*static_cast<Call*>(self)->comm).wait(); }

void max_over_ranks(void*, double* v, size_t n) {
  MPI_Allreduce(MPI_IN_PLACE, v, static_cast<int>(n), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

// Wrong elements summed over all ranks.
double wrong_everywhere(const Call& c, int rank, int nprocs) {
  const float* result = c.collective == PEER_BROADCAST ? c.in : c.out;
  const size_t count = c.collective == PEER_BROADCAST ? c.in_count : c.out_count;
  double wrong = static_cast<double>(peer_collective_check(c.collective, rank, nprocs, c.block, result, count));
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return wrong;
}

float* alloc_floats(size_t n) {
  // Page-aligned, rounded up, as aligned_alloc requires.
  const size_t bytes = (n * sizeof(float) + 4095) & ~static_cast<size_t>(4095);
  return static_cast<float*>(aligned_alloc(4096, bytes ? bytes : 4096));
}

// Returns 0 when every size ran and checked out.
int bench_collective(const peer_options_t& opts, peer_collective_t collective, ccl::communicator& comm, int rank,
                     int nprocs) {
  char variant[256];
  std::snprintf(variant, sizeof variant, "%s/%s", peer_collective_name(collective), opts.variant);
  for (int s = 0; s < opts.num_sizes; s++) {
    const size_t bytes = opts.sizes[s];
    Call c;
    c.collective = collective;
    c.comm = &comm;
    if (!peer_collective_counts(collective, bytes, nprocs, &c.in_count, &c.out_count, &c.block)) {
      if (rank == 0) {
        std::fprintf(stderr, "skipped: oneccl %s %zu B: not whole floats per rank for %d ranks\n", variant, bytes,
                     nprocs);
      }
      continue;
    }
    c.recv_counts.assign(static_cast<size_t>(nprocs), c.block);
    c.in = alloc_floats(c.in_count);
    c.out = alloc_floats(c.out_count);
    if (c.in == nullptr || c.out == nullptr) {
      std::fprintf(stderr, "oneccl %s %zu B: out of memory\n", variant, bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer_collective_fill(collective, rank, nprocs, c.block, c.in, c.in_count, c.out, c.out_count);

    run_call(&c);
    double wrong = wrong_everywhere(c, rank, nprocs);
    peer_timing_t t = {0, 0.0, 0.0};
    if (wrong == 0) {
      peer_ops_t ops = {&c, run_call, run_barrier, max_over_ranks};
      t = peer_measure(&ops, opts.budget_s, opts.max_call_s);
      wrong = wrong_everywhere(c, rank, nprocs);
    }
    std::free(c.in);
    std::free(c.out);
    if (wrong != 0) {
      if (rank == 0) {
        std::fprintf(stderr, "oneccl %s %zu B: %.0f wrong elements across ranks; stopping this collective\n",
                     variant, bytes, wrong);
      }
      return 1;
    }
    if (t.iters == 0) {
      if (rank == 0) {
        std::fprintf(stderr, "skipped: oneccl %s from %zu B up: one call took %.2f s (--max-call %.2f s)\n", variant,
                     bytes, t.first_s, opts.max_call_s);
      }
      return 0;
    }
    if (rank == 0) {
      peer_csv_row(stdout, "oneccl", variant, nprocs, bytes, t.iters, t.median_s,
                   peer_collective_busbw_factor(collective, nprocs));
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // oneCCL's MPI transport calls MPI from its own threads.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  peer_options_t opts;
  if (!peer_options_parse(argc, argv, "default", &opts)) {
    MPI_Finalize();
    return 2;
  }
  if (std::strcmp(opts.mode, "default") != 0) {
    if (rank == 0) std::fprintf(stderr, "oneccl_bench: --mode is a Gloo option\n");
    MPI_Finalize();
    return 2;
  }
  int failed = 0;
  try {
    ccl::init();
    ccl::shared_ptr_class<ccl::kvs> kvs;
    ccl::kvs::address_type address;
    if (rank == 0) {
      kvs = ccl::create_main_kvs();
      address = kvs->get_address();
    }
    MPI_Bcast(address.data(), static_cast<int>(address.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) kvs = ccl::create_kvs(address);
    ccl::communicator comm = ccl::create_communicator(nprocs, rank, kvs);
    if (rank == 0 && opts.header) peer_csv_header(stdout);
    for (int i = 0; i < opts.num_collectives; i++) failed |= bench_collective(opts, opts.collectives[i], comm, rank, nprocs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oneccl_bench: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return failed ? 3 : 0;
}
