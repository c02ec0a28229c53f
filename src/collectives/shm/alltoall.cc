#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// A step's slot holds the same chunk of each block this rank sends, block b
// (bound for rank b) in part b; rank r copies part r of every slot, and its own
// block straight from its input. In place, a step reads and writes the same
// positions, read before anyone writes.
void shm_alltoall(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  const int me = group.rank();
  const size_t per_step = group.step_bytes() / element / static_cast<size_t>(n);
  const size_t part_bytes = per_step * element;
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    copy_blocks_in(group, in, count, first, elements, element, part_bytes);
    group.arrive_and_wait();
    for (int r = 0; r < n && elements > 0; ++r) {
      unsigned char* to = out + (static_cast<size_t>(r) * count + first) * element;
      if (r != me) {
        copy_chunk(to, group.slot(r) + static_cast<size_t>(me) * part_bytes, elements * element);
      } else if (out != in) {
        copy_chunk(to, in + (static_cast<size_t>(me) * count + first) * element, elements * element);
      }
    }
  });
}

}  // namespace dist
