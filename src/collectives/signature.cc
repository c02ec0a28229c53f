#include "collectives/signature.h"

namespace dist {

const char* name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kBarrier: return "barrier";
    case CollectiveKind::kSplit: return "comm_split";
    case CollectiveKind::kCommSetup: return "comm_setup";
  }
  return "unknown collective";
}

std::string describe(const CallSignature& s) {
  std::string text = std::string(name(s.kind)) + "(";
  if (s.kind == CollectiveKind::kBarrier) return text + ")";
  text += name(s.dtype);
  bool reduces = s.kind == CollectiveKind::kAllReduce || s.kind == CollectiveKind::kReduce ||
                 s.kind == CollectiveKind::kReduceScatter;
  if (reduces) text += std::string(", ") + name(s.op);
  if (s.root >= 0) text += ", root=" + std::to_string(s.root);
  return text + ", count=" + std::to_string(s.count) + ")";
}

}  // namespace dist
