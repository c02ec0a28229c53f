#include <algorithm>
#include <cstring>

#include "collectives/algorithms/block_layout.h"
#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"

namespace dist {
namespace {

// What a rank publishes: where its input and its result start.
struct Buffers {
  uint64_t input;
  uint64_t result;
};
static_assert(sizeof(Buffers) <= kShmInlineBytes, "both addresses ride in the call record");

}  // namespace

// Rank r owns slice r of the whole message. It reads that slice of every
// peer's input straight out of the peer's buffer (process_vm_readv), a step's
// worth (kShmStepBytes) at a time into a staging buffer that stays in L2, combines it with its own
// in rank order, and writes each finished chunk into its own result and every
// peer's (process_vm_writev). Two steps in all (the addresses; the end of the
// copies) against one per slot for shm_allreduce_split_write: in between no
// rank waits for another. That is what a rank needs whose core is shared
// with computation (DDP's backward on the calling thread while the
// communicator's thread reduces), where a step-by-step algorithm waits at
// every step for a peer that is not running.
//
// In place too: slice r of any rank's buffer is read and written by rank r
// alone (chunk by chunk, read before written), and no rank reads a slice of
// its own buffer that another rank writes.
void shm_allreduce_read_write(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  const int me = group.rank();
  const Buffers mine{reinterpret_cast<uintptr_t>(send), reinterpret_cast<uintptr_t>(recv)};
  std::memcpy(group.my_area(sizeof mine), &mine, sizeof mine);
  group.arrive_and_wait();
  Buffers peers[kShmMaxRanks];
  for (int r = 0; r < n; ++r) std::memcpy(&peers[r], group.area(r, sizeof peers[r]), sizeof peers[r]);
  group.next_step();

  const BlockLayout slices(count, n);
  const size_t first = slices.offset(me);
  const size_t elements = slices.size(me);
  const size_t chunk = std::max<size_t>(1, kShmStepBytes / element);  // the peers' parts stay in L2
  ScratchBuffer staging(static_cast<size_t>(n - 1) * std::min(chunk, std::max<size_t>(elements, 1)) * element);
  const auto* own_input = static_cast<const unsigned char*>(send);
  auto* out = static_cast<unsigned char*>(recv);
  const void* inputs[kShmMaxRanks];
  SingleCopyOutcome outcome;
  for (size_t at = first; at < first + elements && outcome.error == 0; at += chunk) {
    const size_t k = std::min(chunk, first + elements - at);
    const size_t offset = at * element;
    const size_t bytes = k * element;
    // Each rank starts with the next one: two ranks do not copy from one peer at once.
    for (int step = 1; step < n && outcome.error == 0; ++step) {
      const int peer = (me + step) % n;
      unsigned char* into = staging.data() + static_cast<size_t>(step - 1) * bytes;
      outcome.error = group.read_from(peer, reinterpret_cast<const void*>(peers[peer].input + offset), into, bytes);
      if (outcome.error != 0) outcome.peer = peer;
      inputs[peer] = into;
    }
    if (outcome.error != 0) break;
    inputs[me] = own_input + offset;
    reduce_many(out + offset, inputs, static_cast<size_t>(n), k, dtype, op);
    if (op == ReduceOp::MEAN) finalize_mean(out + offset, k, dtype, n);
    for (int step = 1; step < n && outcome.error == 0; ++step) {
      const int peer = (me + step) % n;
      outcome.error = group.write_to(peer, reinterpret_cast<void*>(peers[peer].result + offset), out + offset, bytes);
      if (outcome.error != 0) outcome.peer = peer;
    }
  }
  end_single_copies(group, outcome, "read from or write to");
}

}  // namespace dist
