// The reduction operators of the collectives. The numbers are the public
// DIST_OP_* values of the C ABI and never change.
#pragma once

#include <cstdint>

namespace dist {

enum class ReduceOp : int32_t {
  SUM = 0,
  PROD = 1,
  MIN = 2,
  MAX = 3,
  // Reduces as SUM; the result is divided by the number of contributions
  // afterwards (finalize_mean in collectives/reduce_kernels.h).
  MEAN = 4,
};

inline constexpr int32_t kReduceOpCount = 5;

// Throws invalid-argument naming `value` and the valid ops.
[[noreturn]] void fail_bad_reduce_op(int32_t value);

inline constexpr bool reduce_op_in_range(int32_t value) { return value >= 0 && value < kReduceOpCount; }

// `value` as a ReduceOp; throws invalid-argument naming the value when it is
// not one of the numbers above. Inline: every reducing call passes here.
inline ReduceOp reduce_op_from_int(int32_t value) {
  if (!reduce_op_in_range(value)) fail_bad_reduce_op(value);
  return static_cast<ReduceOp>(value);
}

// "sum", "prod", "min", "max", "mean"; "invalid" for a value outside the enum.
const char* name(ReduceOp op);

}  // namespace dist
