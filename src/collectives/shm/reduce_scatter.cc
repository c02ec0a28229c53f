#include <algorithm>
#include <cstring>

#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// A step's slot holds the same chunk of each of the n blocks, block b in part
// b; rank r combines part r of every slot. In place the result overwrites the
// start of block 0, whose remaining chunks all lie beyond it.
void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  const int me = group.rank();
  const size_t per_step = group.slot_bytes() / element / static_cast<size_t>(n);
  const size_t part_bytes = per_step * element;
  const void* inputs[kShmMaxRanks];
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t elements = std::min(per_step, count - first);
    const size_t bytes = elements * element;
    for (int b = 0; b < n && bytes > 0; ++b) {
      copy_chunk(group.my_slot() + static_cast<size_t>(b) * part_bytes,
                  in + (static_cast<size_t>(b) * count + first) * element, bytes);
    }
    group.arrive_and_wait();
    if (bytes > 0) {
      for (int r = 0; r < n; ++r) inputs[r] = group.slot(r) + static_cast<size_t>(me) * part_bytes;
      reduce_many(out + first * element, inputs, static_cast<size_t>(n), elements, dtype, op);
      if (op == ReduceOp::MEAN) finalize_mean(out + first * element, elements, dtype, n);
    }
    group.next_step();
  }
}

}  // namespace dist
