#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// The root writes each chunk once; every other rank copies it out.
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const bool at_root = group.rank() == root;
  auto* data = static_cast<unsigned char*>(buffer);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t bytes = std::min(per_step, count - first) * element;
    if (at_root && bytes > 0) copy_chunk(group.my_slot(), data + first * element, bytes);
    group.arrive_and_wait();
    if (!at_root && bytes > 0) copy_chunk(data + first * element, group.slot(root), bytes);
    group.next_step();
  }
}

}  // namespace dist
