#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Each rank writes its block's chunk; everyone copies every block's chunk.
void shm_allgather(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const int n = group.size();
  const int me = group.rank();
  auto* out = static_cast<unsigned char*>(recv);
  // In place (send == recv, or send at the own block) the own block is the input.
  unsigned char* own_block = out + static_cast<size_t>(me) * count * element;
  const bool in_place = send == recv || send == own_block;
  const auto* in = in_place ? own_block : static_cast<const unsigned char*>(send);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t bytes = std::min(per_step, count - first) * element;
    if (bytes > 0) copy_chunk(group.my_slot(), in + first * element, bytes);
    group.arrive_and_wait();
    for (int r = 0; r < n && bytes > 0; ++r) {
      if (r == me && in_place) continue;
      copy_chunk(out + (static_cast<size_t>(r) * count + first) * element, group.slot(r), bytes);
    }
    group.next_step();
  }
}

}  // namespace dist
