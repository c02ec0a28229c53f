#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  shm_reduce_scatter(group, send, recv, BlockLayout(count * static_cast<size_t>(group.size()), group.size()), dtype,
                     op);
}

// A step's slot holds the same chunk of each of the n blocks, block b in part
// b; rank r combines part r of every slot. In place the result overwrites the
// start of block 0 (or the own block itself), whose remaining chunks all lie
// beyond it.
void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, const BlockLayout& blocks, DType dtype,
                        ReduceOp op) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  const int me = group.rank();
  const size_t per_step = group.step_bytes() / element / static_cast<size_t>(n);
  const size_t part_bytes = place_slot_parts(group, blocks.largest(), per_step, element);
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  const size_t own = blocks.offset(me);
  for_each_step(group, blocks.largest(), per_step, [&](size_t first, size_t) {
    copy_blocks_in(group, in, blocks, first, per_step, element, part_bytes);
    group.arrive_and_wait();
    combine_slots(group, static_cast<size_t>(me) * part_bytes, in + (own + first) * element, out + first * element,
                  step_part(blocks.size(me), first, per_step), dtype, op);
  });
}

}  // namespace dist
