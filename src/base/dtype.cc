#include "base/dtype.h"

#include <string>

#include "base/status.h"

namespace dist {
namespace {

// Indexed by the DType value.
constexpr const char* kNames[kDTypeCount] = {"i8",  "u8",  "i32",  "u32", "i64",
                                             "u64", "f16", "bf16", "f32", "f64"};

}  // namespace

void fail_bad_dtype(int32_t value) {
  std::string valid;
  for (int32_t i = 0; i < kDTypeCount; ++i) {
    valid += (i == 0 ? "" : ", ") + std::to_string(i) + " " + kNames[i];
  }
  fail_invalid("dtype " + std::to_string(value) + " is not a valid dtype (expected " + valid + ")");
}

const char* name(DType dtype) {
  const int32_t value = static_cast<int32_t>(dtype);
  return dtype_in_range(value) ? kNames[value] : "invalid";
}

bool is_floating(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::F64;
}

}  // namespace dist
