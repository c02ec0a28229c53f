// What a collective call is, as every rank must agree on it. It travels in the
// header of every collective message, so ranks that disagree fail with a
// mismatch error naming both sides instead of hanging or corrupting data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/dtype.h"
#include "collectives/reduce_op.h"
#include "transport/channel.h"

namespace dist {

enum class CollectiveKind : int32_t {
  kAllReduce = 0,
  kReduce = 1,
  kBroadcast = 2,
  kAllGather = 3,
  kReduceScatter = 4,
  kAllToAll = 5,
  kBarrier = 6,
  kSplit = 7,  // dist_comm_split's exchange of (color, key)
  kCommSetup = 8,  // a new communicator's exchange of how its ranks can reach each other
  kAllToAllV = 9,  // dist_all_to_all_v: blocks of any size (CollectiveCall::blocks); count 0
};

const char* name(CollectiveKind kind);

// Where the caller's buffers live: ranks that disagree (one passes device
// memory, another host memory) fail as for any other mismatch.
enum class MemoryKind : int32_t {
  kHost = 0,
  kCuda = 1,  // staged through pinned host memory (collectives/staged_call.h)
};

struct CallSignature {
  CollectiveKind kind = CollectiveKind::kBarrier;
  DType dtype = DType::U8;
  ReduceOp op = ReduceOp::SUM;
  int32_t root = -1;   // -1 for collectives without a root
  uint64_t count = 0;  // elements per rank as the caller gave them
  MemoryKind memory = MemoryKind::kHost;

  bool operator==(const CallSignature& other) const {
    return kind == other.kind && dtype == other.dtype && op == other.op && root == other.root &&
           count == other.count && memory == other.memory;
  }
  bool operator!=(const CallSignature& other) const { return !(*this == other); }
};

// The dtype and the memory kind in one field of the wire's words and of a
// shared-memory record: dtype | memory << 8.
int32_t dtype_and_memory(const CallSignature& signature);

// The signature a peer sent as raw fields (a message header, a shared-memory
// record; `dtype_memory` as dtype_and_memory packs it), or nullopt when a
// field is out of range: a peer's bytes are checked before they are believed.
std::optional<CallSignature> signature_from_wire(int32_t kind, int32_t dtype_memory, int32_t op, int32_t root,
                                                 uint64_t count);

// "all_reduce(f32, sum, count=1024)" / "broadcast(i32, root=0, count=7)".
std::string describe(const CallSignature& signature);

// The signature as the words a channel carries in every message header:
// kind, dtype, op, root, then count.
CallWords call_words(const CallSignature& signature);

// describe() of the call whose words a channel carries, or "an unknown call"
// when a peer's words name no call (the channel's DescribeCall).
std::string describe_call(const CallWords& call);

}  // namespace dist
