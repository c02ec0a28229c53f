#include <algorithm>
#include <cstring>

#include "collectives/algorithms/block_layout.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"

namespace dist {

void shm_allreduce_split(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const int n = group.size();
  const int me = group.rank();
  const void* inputs[kShmMaxRanks];
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  const size_t steps = shm_steps(count, per_step);
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    const size_t elements = std::min(per_step, count - first);
    if (elements > 0) std::memcpy(group.my_slot(), in + first * element, elements * element);
    group.arrive_and_wait();
    // Combine my slice of every rank's chunk into my own slot, where the others
    // will copy it from (no one else reads that part of my slot this step).
    const BlockLayout slices(elements, n);
    const size_t offset = slices.offset(me) * element;
    for (int r = 0; r < n; ++r) inputs[r] = group.slot(r) + offset;
    reduce_many(group.my_slot() + offset, inputs, static_cast<size_t>(n), slices.size(me), dtype, op);
    group.publish_reduced_and_wait();
    for (int r = 0; r < n; ++r) {
      const size_t at = slices.offset(r) * element;
      std::memcpy(out + first * element + at, group.slot(r) + at, slices.size(r) * element);
    }
    if (op == ReduceOp::MEAN && elements > 0) finalize_mean(out + first * element, elements, dtype, n);
    group.next_step();
  }
}

}  // namespace dist
