#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"

namespace dist {

void combine_slots(const ShmGroup& group, size_t offset, void* out, size_t elements, DType dtype, ReduceOp op) {
  if (elements == 0) return;
  const int n = group.size();
  const void* inputs[kShmMaxRanks];
  for (int r = 0; r < n; ++r) inputs[r] = group.slot(r) + offset;
  reduce_many(out, inputs, static_cast<size_t>(n), elements, dtype, op);
  if (op == ReduceOp::MEAN) finalize_mean(out, elements, dtype, n);
}

}  // namespace dist
