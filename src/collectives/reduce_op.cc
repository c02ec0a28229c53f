#include "collectives/reduce_op.h"

#include <string>

#include "base/status.h"

namespace dist {
namespace {

// Indexed by the ReduceOp value.
constexpr const char* kNames[kReduceOpCount] = {"sum", "prod", "min", "max", "mean"};

}  // namespace

void fail_bad_reduce_op(int32_t value) {
  std::string valid;
  for (int32_t i = 0; i < kReduceOpCount; ++i) {
    valid += (i == 0 ? "" : ", ") + std::to_string(i) + " " + kNames[i];
  }
  fail_invalid("reduction op " + std::to_string(value) + " is not a valid op (expected " + valid + ")");
}

const char* name(ReduceOp op) {
  const int32_t value = static_cast<int32_t>(op);
  return reduce_op_in_range(value) ? kNames[value] : "invalid";
}

}  // namespace dist
