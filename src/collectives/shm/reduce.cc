#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Every rank contributes; the root combines each chunk into its result.
void shm_reduce(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.step_bytes() / element;
  const bool at_root = group.rank() == root;
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  group.rotate_slots(count * element);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    // Only the root reads the slots, and its own chunk it reads from its input.
    const size_t bytes = elements * element;
    if (!at_root) copy_chunk(group.my_area(bytes), in + first * element, bytes);
    group.arrive_and_wait();
    if (at_root) combine_areas(group, in + first * element, out + first * element, elements, bytes, dtype, op);
  });
}

}  // namespace dist
