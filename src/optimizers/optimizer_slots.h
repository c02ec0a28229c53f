// The state an optimizer keeps beside the weights: per element, Momentum's
// velocity, Adagrad's accumulator, or Adam's two moments. Each slot is a
// buffer shaped like the weights it serves.
#pragma once

#include <cstdint>
#include <vector>

#include "optimizers/optimizer_config.h"

namespace dist {

// 0 (SGD), 1 (Momentum, Adagrad) or 2 (Adam: m, then v).
int slot_count(OptimizerKind kind);

// slot_count(config.kind) buffers of `elements` elements of `dtype` (f32 or
// f64) at their starting values: zeros, Adagrad's accumulators at
// initial_accumulator_value.
std::vector<std::vector<uint8_t>> new_slots(const OptimizerConfig& config, DType dtype, uint64_t elements);

}  // namespace dist
