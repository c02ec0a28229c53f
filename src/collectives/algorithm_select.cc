#include "collectives/algorithm_select.h"

#include "base/numbers.h"
#include "base/status.h"

namespace dist {
namespace {

Algorithm forced_all_reduce(const std::string& forced) {
  if (forced == "ring") return Algorithm::kAllReduceRing;
  if (forced == "rabenseifner") return Algorithm::kAllReduceRabenseifner;
  if (forced == "recursive_doubling") return Algorithm::kAllReduceRecursiveDoubling;
  fail_invalid("all-reduce algorithm " + quoted(forced) +
               " is not one of 'ring', 'rabenseifner', 'recursive_doubling'");
}

Algorithm choose_all_reduce(size_t bytes, int ranks) {
  if (bytes <= kRecursiveDoublingMaxBytes) return Algorithm::kAllReduceRecursiveDoubling;
  const size_t rabenseifner_max = is_power_of_two(ranks) ? kRabenseifnerMaxBytes : kRabenseifnerFoldedMaxBytes;
  if (bytes <= rabenseifner_max) return Algorithm::kAllReduceRabenseifner;
  return Algorithm::kAllReduceRing;
}

}  // namespace

Algorithm choose_algorithm(CollectiveKind kind, size_t bytes, int ranks, const AlgorithmOptions& options) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return options.all_reduce.empty() ? choose_all_reduce(bytes, ranks) : forced_all_reduce(options.all_reduce);
    case CollectiveKind::kReduce:
      return Algorithm::kReduceBinomial;
    case CollectiveKind::kBroadcast:
      return ranks > 2 && bytes >= kScatterAllGatherMinBytes ? Algorithm::kBroadcastScatterAllGather
                                                             : Algorithm::kBroadcastBinomial;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kSplit:
    case CollectiveKind::kCommSetup:
      return Algorithm::kAllGatherRing;
    case CollectiveKind::kReduceScatter:
      return Algorithm::kReduceScatterRing;
    case CollectiveKind::kAllToAll:
      return Algorithm::kAllToAllPairwise;
    case CollectiveKind::kBarrier:
      return Algorithm::kBarrierDissemination;
  }
  fail(Status::kInternal, "choose_algorithm: collective kind " + std::to_string(static_cast<int>(kind)) +
                              " is not valid");
}

size_t choose_chunk_bytes(const AlgorithmOptions& options) {
  return options.chunk_bytes == 0 ? kDefaultChunkBytes : options.chunk_bytes;
}

const char* name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kAllReduceRing: return "ring";
    case Algorithm::kAllReduceRabenseifner: return "rabenseifner";
    case Algorithm::kAllReduceRecursiveDoubling: return "recursive_doubling";
    case Algorithm::kReduceBinomial: return "reduce_binomial";
    case Algorithm::kBroadcastBinomial: return "broadcast_binomial";
    case Algorithm::kBroadcastScatterAllGather: return "broadcast_scatter_allgather";
    case Algorithm::kAllGatherRing: return "allgather_ring";
    case Algorithm::kReduceScatterRing: return "reduce_scatter_ring";
    case Algorithm::kAllToAllPairwise: return "alltoall_pairwise";
    case Algorithm::kBarrierDissemination: return "barrier_dissemination";
  }
  return "unknown algorithm";
}

}  // namespace dist
