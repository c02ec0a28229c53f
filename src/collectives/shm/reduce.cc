#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Every rank contributes; the root combines each chunk into its result.
void shm_reduce(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const bool at_root = group.rank() == root;
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t elements = std::min(per_step, count - first);
    if (elements > 0) copy_chunk(group.my_slot(), in + first * element, elements * element);
    group.arrive_and_wait();
    if (at_root) combine_slots(group, 0, out + first * element, elements, dtype, op);
    group.next_step();
  }
}

}  // namespace dist
