#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

void shm_allreduce_direct(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const int n = group.size();
  const void* inputs[kShmMaxRanks];
  auto* out = static_cast<unsigned char*>(recv);
  // A large result is combined into a cached scratch chunk and streamed out.
  const bool streamed = count * element >= kStreamStoreMinBytes;
  std::vector<unsigned char> scratch(streamed ? per_step * element : 0);
  const auto* in = static_cast<const unsigned char*>(send);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t elements = std::min(per_step, count - first);
    const size_t bytes = elements * element;
    if (bytes > 0) copy_chunk(group.my_slot(), in + first * element, bytes);
    group.arrive_and_wait();
    if (bytes > 0) {
      for (int r = 0; r < n; ++r) inputs[r] = group.slot(r);
      unsigned char* result = streamed ? scratch.data() : out + first * element;
      reduce_many(result, inputs, static_cast<size_t>(n), elements, dtype, op);
      if (op == ReduceOp::MEAN) finalize_mean(result, elements, dtype, n);
      if (streamed) stream_store(out + first * element, result, bytes);
    }
    group.next_step();
  }
}

}  // namespace dist
