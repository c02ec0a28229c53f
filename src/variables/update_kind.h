// The three ways to write a variable, applied element-wise to one copy.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace dist {

enum class UpdateKind : int32_t { kAssign = 0, kAdd = 1, kSub = 2 };

// "assign", "assign_add", "assign_sub".
const char* name(UpdateKind kind);

// target = value, target += value or target -= value (integers wrap; f16/bf16
// computed in f32 and rounded once, like every reduction kernel).
void apply_update(void* target, const void* value, uint64_t count, DType dtype, UpdateKind kind);

}  // namespace dist
