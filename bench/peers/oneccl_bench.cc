// oneCCL's collectives (Intel's collective library for CPUs), timed and
// checked by mpi_sizes as the MPIs' are. Started by Intel MPI's
// mpiexec.hydra, whose MPI also carries the bootstrap: rank 0's key-value
// store address reaches the others by MPI_Bcast, as oneCCL's own examples
// start. Which transport and algorithm oneCCL uses is decided by its
// environment (CCL_ATL_TRANSPORT, CCL_ALLREDUCE, ...; bench/compare);
// --variant only names that configuration in the CSV.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <oneapi/ccl.hpp>
#include <vector>

#include "mpi_sizes.h"
#include "peer_csv.h"
#include "peer_options.h"

namespace {

struct OneCcl {
  ccl::communicator* comm = nullptr;
  std::vector<size_t> recv_counts;  // all-gather: one block from every rank
};

void run_call(void* self, peer_collective_t collective, const mpi_sizes_buffers_t* b) {
  OneCcl* c = static_cast<OneCcl*>(self);
  switch (collective) {
    case PEER_ALLREDUCE:
      ccl::allreduce(b->in, b->out, b->in_count, ccl::reduction::sum, *c->comm).wait();
      break;
    case PEER_ALLGATHER:
      // Made once per size, not per call.
      if (c->recv_counts[0] != b->block) c->recv_counts.assign(c->recv_counts.size(), b->block);
      ccl::allgatherv(b->in, b->block, b->out, c->recv_counts, *c->comm).wait();
      break;
    case PEER_REDUCE_SCATTER:
      ccl::reduce_scatter(b->in, b->out, b->block, ccl::reduction::sum, *c->comm).wait();
      break;
    case PEER_BROADCAST:
      ccl::broadcast(b->in, b->in_count, 0, *c->comm).wait();
      break;
    case PEER_ALLTOALL:
      ccl::alltoall(b->in, b->out, b->block, *c->comm).wait();
      break;
  }
}

void run_barrier(void* self) { ccl::barrier(*static_cast<OneCcl*>(self)->comm).wait(); }

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
    OneCcl oneccl;
    oneccl.comm = &comm;
    oneccl.recv_counts.assign(static_cast<size_t>(nprocs), 0);
    const mpi_sizes_impl_t impl = {"oneccl", &oneccl, run_call, run_barrier};
    if (rank == 0 && opts.header) peer_csv_header(stdout);
    for (int i = 0; i < opts.num_collectives; i++) {
      failed |= mpi_sizes_bench(&impl, &opts, opts.collectives[i], rank, nprocs);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oneccl_bench: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return failed ? 3 : 0;
}
