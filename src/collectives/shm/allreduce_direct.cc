#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

namespace {

// A message that fits in the call record travels in it: each peer's
// signature and contribution cross cores as one cache line.
void allreduce_inline(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  std::memcpy(group.my_inline(), send, count * size_of(dtype));
  group.arrive_and_wait();
  combine_inline(group, send, recv, count, dtype, op);
  group.next_step();
}

}  // namespace

void shm_allreduce_direct(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  if (count > 0 && count * element <= kShmInlineBytes) return allreduce_inline(group, send, recv, count, dtype, op);
  const size_t per_step = group.step_bytes() / element;
  auto* out = static_cast<unsigned char*>(recv);
  // A large result is combined into a cached scratch chunk and streamed out.
  const bool streamed = streams_result(send, recv, count * element);
  std::vector<unsigned char> scratch(streamed ? per_step * element : 0);
  const auto* in = static_cast<const unsigned char*>(send);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    copy_chunk(group.my_slot(), in + first * element, bytes);
    group.arrive_and_wait();
    unsigned char* result = streamed ? scratch.data() : out + first * element;
    combine_slots(group, 0, in + first * element, result, elements, dtype, op);
    if (streamed) stream_store(out + first * element, result, bytes);
  });
}

}  // namespace dist
