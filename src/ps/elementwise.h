// The arithmetic of assign_add and assign_sub on a shard, for every dtype with
// the collectives' rules: integers wrap modulo 2^bits, f16/bf16 compute in f32
// and round once per element.
#pragma once

#include <cstddef>

#include "base/dtype.h"

namespace dist::ps {

// dst[i] += src[i]
void add_in_place(void* dst, const void* src, size_t count, DType dtype);
// dst[i] -= src[i]
void subtract_in_place(void* dst, const void* src, size_t count, DType dtype);

}  // namespace dist::ps
