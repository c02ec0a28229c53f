#include <algorithm>
#include <cstring>

#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Every rank contributes; the root combines each chunk into its result.
void shm_reduce(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const int n = group.size();
  const bool at_root = group.rank() == root;
  const void* inputs[kShmMaxRanks];
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t elements = std::min(per_step, count - first);
    if (elements > 0) copy_chunk(group.my_slot(), in + first * element, elements * element);
    group.arrive_and_wait();
    if (at_root && elements > 0) {
      for (int r = 0; r < n; ++r) inputs[r] = group.slot(r);
      reduce_many(out + first * element, inputs, static_cast<size_t>(n), elements, dtype, op);
      if (op == ReduceOp::MEAN) finalize_mean(out + first * element, elements, dtype, n);
    }
    group.next_step();
  }
}

}  // namespace dist
