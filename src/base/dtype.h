// Element types of the buffers that collectives move and reduce. The numbers are
// the public DIST_DTYPE_* values of the C ABI and never change.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dist {

enum class DType : int32_t {
  I8 = 0,
  U8 = 1,
  I32 = 2,
  U32 = 3,
  I64 = 4,
  U64 = 5,
  F16 = 6,   // IEEE binary16; conversions in base/half.h
  BF16 = 7,  // bfloat16: the top half of an f32
  F32 = 8,
  F64 = 9,
};

inline constexpr int32_t kDTypeCount = 10;

// Throws invalid-argument naming `value` and the valid dtypes.
[[noreturn]] void fail_bad_dtype(int32_t value);

inline constexpr bool dtype_in_range(int32_t value) { return value >= 0 && value < kDTypeCount; }

// `value` as a DType; throws invalid-argument naming the value when it is not
// one of the numbers above (use on every dtype that crosses the C ABI).
// Inline, like size_of: every call passes here several times.
inline DType dtype_from_int(int32_t value) {
  if (!dtype_in_range(value)) fail_bad_dtype(value);
  return static_cast<DType>(value);
}

// Bytes per element. Throws invalid-argument for a value outside the enum.
inline size_t size_of(DType dtype) {
  constexpr size_t kSizes[kDTypeCount] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};  // indexed by the DType value
  const int32_t value = static_cast<int32_t>(dtype);
  if (!dtype_in_range(value)) fail_bad_dtype(value);
  return kSizes[value];
}

// "i8", "u8", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"; "invalid"
// for a value outside the enum (so it is safe inside error messages).
const char* name(DType dtype);

// F16, BF16, F32 and F64.
bool is_floating(DType dtype);

}  // namespace dist
