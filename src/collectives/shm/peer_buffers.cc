#include "collectives/shm/peer_buffers.h"

#include <algorithm>
#include <cstring>

#include "collectives/reduce_kernels.h"

namespace dist {

static_assert(sizeof(PeerBuffers) <= kShmInlineBytes, "both addresses ride in the call record");

void exchange_peer_buffers(ShmGroup& group, const void* send, void* recv, PeerBuffers* all) {
  PeerBuffers mine;
  mine.input = reinterpret_cast<uintptr_t>(send);
  mine.result = reinterpret_cast<uintptr_t>(recv);
  std::memcpy(group.my_area(sizeof mine), &mine, sizeof mine);
  group.arrive_and_wait();
  for (int r = 0; r < group.size(); ++r) std::memcpy(&all[r], group.area(r, sizeof all[r]), sizeof all[r]);
  group.next_step();
}

bool combine_from_peers(const ShmGroup& group, const PeerBuffers* all, size_t offset, const void* own, void* out,
                        size_t count, DType dtype, ReduceOp op, unsigned char* staging, SingleCopyOutcome& outcome) {
  const int n = group.size();
  const int me = group.rank();
  const size_t bytes = count * size_of(dtype);
  const void* inputs[kShmMaxRanks];
  // Each rank starts with the next one: two ranks do not copy from one peer at once.
  for (int step = 1; step < n; ++step) {
    const int peer = (me + step) % n;
    unsigned char* into = staging + static_cast<size_t>(step - 1) * bytes;
    const int error = group.read_from(peer, reinterpret_cast<const void*>(all[peer].input + offset), into, bytes);
    if (error != 0) {
      outcome.error = error;
      outcome.peer = peer;
      return false;
    }
    inputs[peer] = into;
  }
  inputs[me] = own;
  reduce_many(out, inputs, static_cast<size_t>(n), count, dtype, op);
  return true;
}

namespace {

size_t step_elements(DType dtype) { return std::max<size_t>(1, kShmStepBytes / size_of(dtype)); }

}  // namespace

size_t peer_staging_bytes(const ShmGroup& group, size_t count, DType dtype) {
  return static_cast<size_t>(group.size() - 1) * std::min(step_elements(dtype), std::max<size_t>(count, 1)) *
         size_of(dtype);
}

bool combine_from_peers_by_steps(const ShmGroup& group, const PeerBuffers* all, size_t offset, const void* own,
                                 void* out, size_t count, DType dtype, ReduceOp op, unsigned char* staging,
                                 SingleCopyOutcome& outcome) {
  const size_t element = size_of(dtype);
  const size_t step = step_elements(dtype);
  for (size_t done = 0; done < count; done += step) {
    const size_t k = std::min(step, count - done);
    const size_t at = done * element;
    if (!combine_from_peers(group, all, offset + at, static_cast<const unsigned char*>(own) + at,
                            static_cast<unsigned char*>(out) + at, k, dtype, op, staging, outcome)) {
      return false;
    }
  }
  return true;
}

bool write_to_peers(const ShmGroup& group, const PeerBuffers* all, const void* out, size_t offset, size_t bytes,
                    SingleCopyOutcome& outcome) {
  const int n = group.size();
  const int me = group.rank();
  for (int step = 1; step < n; ++step) {
    const int peer = (me + step) % n;
    const int error = group.write_to(peer, reinterpret_cast<void*>(all[peer].result + offset),
                                     static_cast<const unsigned char*>(out) + offset, bytes);
    if (error != 0) {
      outcome.error = error;
      outcome.peer = peer;
      return false;
    }
  }
  return true;
}

}  // namespace dist
