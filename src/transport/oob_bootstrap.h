// Joining through the caller's own exchange (dist_context_create_oob): a
// framework that already has a rendezvous (torch's Store, MPI_Allgather, JAX's
// key-value store) gives rank, size and an all-gather. Each task listens on a
// port the system picks, at the address others reach it at (transport/
// advertised_address.h); one all-gather swaps those addresses with what lets
// ranks that disagree fail clearly (size, a fingerprint of the cluster token);
// then the usual authenticated bootstrap runs on the swapped addresses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "cluster/resolved_cluster.h"
#include "transport/context.h"

namespace dist {

// The caller's all-gather, as the C ABI's dist_oob_t describes it.
struct OobExchange {
  int32_t rank = 0;
  int32_t size = 0;
  // Starts an all-gather of `bytes` per rank; 0 and *request (null when done
  // already), or nonzero when it could not start.
  std::function<int32_t(const void* send, void* recv, size_t bytes, void** request)> allgather;
  // 0 complete, 1 (or more) in progress, negative failed.
  std::function<int32_t(void* request)> test;
  // Releases a request; may be empty.
  std::function<void(void* request)> free;
};

struct OobJoin {
  ResolvedCluster cluster;  // job "worker": every rank's address; this task is worker:rank
  std::unique_ptr<Context> context;
};

// Bounded by options.connect_timeout, the exchange included: an exchange still
// in progress then is freed and kTimeout thrown. A failed exchange throws
// kPeerFailed with the callback's code; ranks that disagree throw kMismatch
// (size, order) or kAuth (token) naming the rank.
OobJoin join_out_of_band(const OobExchange& exchange, const ContextOptions& options);

}  // namespace dist
