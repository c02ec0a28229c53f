#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

void copy_blocks_in(ShmGroup& group, const unsigned char* input, const BlockLayout& blocks, size_t first,
                    size_t per_step, size_t element, size_t part_bytes) {
  for (int b = 0; b < group.size(); ++b) {
    const size_t elements = step_part(blocks.size(b), first, per_step);
    if (b == group.rank() || elements == 0) continue;
    copy_chunk(group.my_slot() + static_cast<size_t>(b) * part_bytes, input + (blocks.offset(b) + first) * element,
               elements * element);
  }
}

size_t place_slot_parts(ShmGroup& group, size_t largest, size_t per_step, size_t element) {
  if (largest > per_step) return per_step * element;
  const size_t part_bytes = (largest * element + 63) / 64 * 64;
  // A part is what a rank writes for one peer: below the minimum, stay put.
  if (part_bytes >= kShmRotationMinBytes) group.rotate_slots(static_cast<size_t>(group.size()) * part_bytes);
  return part_bytes;
}

}  // namespace dist
