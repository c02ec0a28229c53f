#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

void copy_blocks_in(ShmGroup& group, const unsigned char* input, size_t count, size_t first, size_t elements,
                    size_t element, size_t part_bytes) {
  if (elements == 0) return;
  for (int b = 0; b < group.size(); ++b) {
    if (b == group.rank()) continue;
    copy_chunk(group.my_slot() + static_cast<size_t>(b) * part_bytes,
               input + (static_cast<size_t>(b) * count + first) * element, elements * element);
  }
}

}  // namespace dist
