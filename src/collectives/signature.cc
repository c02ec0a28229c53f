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
    case CollectiveKind::kAllToAllV: return "all_to_all_v";
  }
  return "unknown collective";
}

int32_t dtype_and_memory(const CallSignature& s) {
  return static_cast<int32_t>(s.dtype) | static_cast<int32_t>(s.memory) << 8;
}

std::optional<CallSignature> signature_from_wire(int32_t kind, int32_t dtype_memory, int32_t op, int32_t root,
                                                 uint64_t count) {
  const int32_t dtype = dtype_memory & 0xFF;
  const int32_t memory = dtype_memory >> 8;
  if (kind < 0 || kind > static_cast<int32_t>(CollectiveKind::kAllToAllV) || dtype < 0 || dtype >= kDTypeCount ||
      op < 0 || op >= kReduceOpCount || memory < 0 || memory > static_cast<int32_t>(MemoryKind::kCuda)) {
    return std::nullopt;
  }
  CallSignature s;
  s.kind = static_cast<CollectiveKind>(kind);
  s.dtype = static_cast<DType>(dtype);
  s.memory = static_cast<MemoryKind>(memory);
  s.op = static_cast<ReduceOp>(op);
  s.root = root;
  s.count = count;
  return s;
}

std::string describe(const CallSignature& s) {
  std::string text = std::string(name(s.kind)) + "(";
  if (s.kind == CollectiveKind::kBarrier) return text + ")";
  text += name(s.dtype);
  if (s.memory == MemoryKind::kCuda) text += " on a CUDA device";
  bool reduces = s.kind == CollectiveKind::kAllReduce || s.kind == CollectiveKind::kReduce ||
                 s.kind == CollectiveKind::kReduceScatter;
  if (reduces) text += std::string(", ") + name(s.op);
  if (s.root >= 0) text += ", root=" + std::to_string(s.root);
  // Its counts differ by rank; the channel names the sizes that disagree.
  if (s.kind == CollectiveKind::kAllToAllV) return text + ")";
  return text + ", count=" + std::to_string(s.count) + ")";
}

CallWords call_words(const CallSignature& s) {
  CallWords call;
  call.word[0] = static_cast<int32_t>(s.kind);
  call.word[1] = dtype_and_memory(s);
  call.word[2] = static_cast<int32_t>(s.op);
  call.word[3] = s.root;
  call.long_word = s.count;
  return call;
}

std::string describe_call(const CallWords& call) {
  const std::optional<CallSignature> signature =
      signature_from_wire(call.word[0], call.word[1], call.word[2], call.word[3], call.long_word);
  return signature ? describe(*signature) : "an unknown call";
}

}  // namespace dist
