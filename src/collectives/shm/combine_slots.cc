#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"

namespace dist {
namespace {

// out = inputs[0] op inputs[1] op ..., one per rank, with MEAN finished.
void combine_ranks(const ShmGroup& group, const void* const* inputs, void* out, size_t elements, DType dtype,
                   ReduceOp op) {
  const int n = group.size();
  reduce_many(out, inputs, static_cast<size_t>(n), elements, dtype, op);
  if (op == ReduceOp::MEAN) finalize_mean(out, elements, dtype, n);
}

}  // namespace

void combine_slots(const ShmGroup& group, size_t offset, const void* mine, void* out, size_t elements, DType dtype,
                   ReduceOp op) {
  if (elements == 0) return;
  const void* inputs[kShmMaxRanks];
  for (int r = 0; r < group.size(); ++r) inputs[r] = r == group.rank() ? mine : group.slot(r) + offset;
  combine_ranks(group, inputs, out, elements, dtype, op);
}

void combine_areas(const ShmGroup& group, const void* mine, void* out, size_t elements, size_t bytes, DType dtype,
                   ReduceOp op) {
  if (elements == 0) return;
  const void* inputs[kShmMaxRanks];
  for (int r = 0; r < group.size(); ++r) inputs[r] = r == group.rank() ? mine : group.area(r, bytes);
  combine_ranks(group, inputs, out, elements, dtype, op);
}

}  // namespace dist
