#include "optimizers/optimizer_slots.h"

#include <algorithm>

namespace dist {
namespace {

template <typename T>
void fill(std::vector<uint8_t>& buffer, double value) {
  T* p = reinterpret_cast<T*>(buffer.data());
  std::fill(p, p + buffer.size() / sizeof(T), static_cast<T>(value));
}

}  // namespace

int slot_count(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kMomentum:
    case OptimizerKind::kAdagrad: return 1;
    case OptimizerKind::kAdam: return 2;
    case OptimizerKind::kSgd: break;
  }
  return 0;
}

std::vector<std::vector<uint8_t>> new_slots(const OptimizerConfig& config, DType dtype, uint64_t elements) {
  std::vector<std::vector<uint8_t>> slots(static_cast<size_t>(slot_count(config.kind)),
                                          std::vector<uint8_t>(static_cast<size_t>(elements) * size_of(dtype)));
  // Adagrad's accumulators start at initial_accumulator_value, not zero.
  if (config.kind == OptimizerKind::kAdagrad) {
    if (dtype == DType::F32) fill<float>(slots[0], config.initial_accumulator_value);
    if (dtype == DType::F64) fill<double>(slots[0], config.initial_accumulator_value);
  }
  return slots;
}

}  // namespace dist
