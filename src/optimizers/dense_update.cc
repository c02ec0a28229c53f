#include "optimizers/dense_update.h"

namespace dist {

UpdateTarget update_target(void* values, std::vector<std::vector<uint8_t>>& slots, DType dtype, uint64_t first,
                           uint64_t count) {
  const size_t byte_offset = static_cast<size_t>(first) * size_of(dtype);
  UpdateTarget target;
  target.values = static_cast<uint8_t*>(values) + byte_offset;
  for (size_t k = 0; k < slots.size(); ++k) target.slots[k] = slots[k].data() + byte_offset;
  target.count = static_cast<size_t>(count);
  return target;
}

void dense_update_from_array(const OptimizerConfig& config, int64_t step, DType dtype, const UpdateTarget& target,
                             const void* gradient) {
  dense_update(config, step, dtype, target, GradientIn{gradient});
}

}  // namespace dist
