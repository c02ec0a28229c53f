// run_collective: checks a call's buffers against its kind, picks the
// algorithm (algorithm_select.h), runs it, and turns a SUM into a MEAN where
// the result lives.
#include <cstdint>
#include <limits>
#include <string>

#include "base/status.h"
#include "collectives/algorithm_select.h"
#include "collectives/call_check.h"
#include "collectives/algorithms/allgather_ring.h"
#include "collectives/algorithms/allreduce_rabenseifner.h"
#include "collectives/algorithms/allreduce_recursive_doubling.h"
#include "collectives/algorithms/allreduce_ring.h"
#include "collectives/algorithms/alltoall_pairwise.h"
#include "collectives/algorithms/barrier_dissemination.h"
#include "collectives/algorithms/broadcast_binomial.h"
#include "collectives/algorithms/broadcast_scatter_allgather.h"
#include "collectives/algorithms/reduce_binomial.h"
#include "collectives/algorithms/reduce_scatter_ring.h"
#include "collectives/collective_call.h"
#include "collectives/reduce_kernels.h"

namespace dist {

void run_collective(Channel& channel, const CollectiveCall& call, const AlgorithmOptions& options) {
  const CallSignature& s = call.signature;
  check_call(channel.size(), channel.rank(), call);
  if (s.kind == CollectiveKind::kBarrier) {
    barrier_dissemination(channel);
    return;
  }

  const int n = channel.size();
  const size_t count = static_cast<size_t>(s.count);
  // Reached only once every argument has been checked: an algorithm must not
  // fail halfway for a reason local to one rank, leaving its peers waiting.
  switch (choose_algorithm(s.kind, count * size_of(s.dtype), n, options)) {
    case Algorithm::kAllReduceRing:
      allreduce_ring(channel, call.send, call.recv, count, s.dtype, s.op, options);
      break;
    case Algorithm::kAllReduceRabenseifner:
      allreduce_rabenseifner(channel, call.send, call.recv, count, s.dtype, s.op, options);
      break;
    case Algorithm::kAllReduceRecursiveDoubling:
      allreduce_recursive_doubling(channel, call.send, call.recv, count, s.dtype, s.op, options);
      break;
    case Algorithm::kReduceBinomial:
      reduce_binomial(channel, call.send, call.recv, count, s.dtype, s.op, s.root, options);
      break;
    case Algorithm::kBroadcastBinomial:
      broadcast_binomial(channel, call.recv, count, s.dtype, s.root, options);
      break;
    case Algorithm::kBroadcastScatterAllGather:
      broadcast_scatter_allgather(channel, call.recv, count, s.dtype, s.root, options);
      break;
    case Algorithm::kAllGatherRing:
      allgather_ring(channel, call.send, call.recv, count, s.dtype, options);
      break;
    case Algorithm::kReduceScatterRing:
      reduce_scatter_ring(channel, call.send, call.recv, count, s.dtype, s.op, options);
      break;
    case Algorithm::kAllToAllPairwise:
      alltoall_pairwise(channel, call.send, call.recv, count, s.dtype, options);
      break;
    case Algorithm::kBarrierDissemination:
      barrier_dissemination(channel);
      break;
  }

  // MEAN was combined as SUM; divide where the result lives.
  if (s.op != ReduceOp::MEAN || n == 1 || !reduces(s.kind)) return;
  if (s.kind == CollectiveKind::kReduce && channel.rank() != s.root) return;
  finalize_mean(call.recv, count, s.dtype, n);
}

bool is_all_reduce_algorithm(const std::string& name) {
  return name == "ring" || name == "rabenseifner" || name == "recursive_doubling";
}

}  // namespace dist
