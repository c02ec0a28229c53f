#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

void shm_allreduce_direct(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const size_t bytes = count * element;
  if (count > 0 && bytes <= kShmInlineBytes) {
    // One step in the call record, without the stepping machinery: the
    // latency of a small all-reduce is counted in nanoseconds.
    std::memcpy(group.my_area(bytes), send, bytes);
    group.arrive_and_wait();
    combine_areas(group, send, recv, count, bytes, dtype, op);
    group.next_step();
    return;
  }
  const size_t per_step = group.step_bytes() / element;
  auto* out = static_cast<unsigned char*>(recv);
  // A large result is combined into a cached scratch chunk and streamed out.
  const bool streamed = streams_result(send, recv, count * element);
  std::vector<unsigned char> scratch(streamed ? per_step * element : 0);
  const auto* in = static_cast<const unsigned char*>(send);
  group.rotate_slots(bytes);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    copy_chunk(group.my_area(bytes), in + first * element, bytes);
    group.arrive_and_wait();
    unsigned char* result = streamed ? scratch.data() : out + first * element;
    combine_areas(group, in + first * element, result, elements, bytes, dtype, op);
    if (streamed) stream_store(out + first * element, result, bytes);
  });
}

}  // namespace dist
