#include "collectives/shm/run_shm.h"

#include "base/status.h"
#include "collectives/call_check.h"
#include "collectives/shm/algorithms.h"

namespace dist {
namespace {

// Up to this many bytes per rank, every rank combines the whole message
// itself: one announcement per step instead of two, and the extra reads cost
// less than the second handshake. Above it, the split moves less memory.
constexpr size_t kDirectMaxBytes = 16 * 1024;

bool use_direct(size_t bytes, ShmAllReduce forced) {
  if (forced == ShmAllReduce::kDirect) return true;
  if (forced == ShmAllReduce::kSplit) return false;
  return bytes <= kDirectMaxBytes;
}

}  // namespace

ShmAllReduce shm_all_reduce_from_name(const std::string& name) {
  if (name == "shm_direct") return ShmAllReduce::kDirect;
  if (name == "shm_split") return ShmAllReduce::kSplit;
  return ShmAllReduce::kBySize;
}

const char* shm_algorithm_name(const ShmGroup& group, CollectiveKind kind, size_t bytes, ShmAllReduce all_reduce) {
  if (takes_single_copy(group, kind, bytes)) return "shm_single_copy";
  if (kind != CollectiveKind::kAllReduce) return "shm";
  if (use_direct(bytes, all_reduce)) return "shm_direct";
  // The name is that of a call into a separate result (dist-bench's).
  return takes_split_write(group, bytes, false) ? "shm_split_single_copy" : "shm_split";
}

bool is_shm_algorithm(const std::string& name) {
  return name == "shm" || name == "shm_direct" || name == "shm_split";
}

void run_shm_collective(ShmGroup& group, const CollectiveCall& call, uint64_t seq, std::chrono::milliseconds timeout,
                        ShmAllReduce all_reduce) {
  const CallSignature& s = call.signature;
  check_call(group.size(), group.rank(), call);
  group.begin(s, seq, timeout);
  const size_t count = static_cast<size_t>(s.count);
  switch (s.kind) {
    case CollectiveKind::kAllReduce:
      if (call.pieces != nullptr) {
        // Only the split algorithm hands its result over part by part.
        shm_allreduce_split(group, *call.pieces, *call.sink, s.dtype, s.op, call.finish);
      } else if (use_direct(count * size_of(s.dtype), all_reduce)) {
        shm_allreduce_direct(group, call.send, call.recv, count, s.dtype, s.op);
      } else {
        shm_allreduce_split(group, call.send, call.recv, count, s.dtype, s.op);
      }
      return;
    case CollectiveKind::kReduce:
      shm_reduce(group, call.send, call.recv, count, s.dtype, s.op, s.root);
      return;
    case CollectiveKind::kBroadcast:
      shm_broadcast(group, call.recv, count, s.dtype, s.root);
      return;
    case CollectiveKind::kAllGather:
      shm_allgather(group, call.send, call.recv, count, s.dtype);
      return;
    case CollectiveKind::kReduceScatter:
      shm_reduce_scatter(group, call.send, call.recv, count, s.dtype, s.op);
      return;
    case CollectiveKind::kAllToAll:
      shm_alltoall(group, call.send, call.recv, count, s.dtype);
      return;
    case CollectiveKind::kBarrier:
      shm_barrier(group);
      return;
    case CollectiveKind::kSplit:
    case CollectiveKind::kCommSetup:
      break;
  }
  fail(Status::kInternal, std::string("run_shm_collective: ") + name(s.kind) + " does not run over shared memory");
}

}  // namespace dist
