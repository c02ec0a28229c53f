#include "variables/update_kind.h"

#include <cstring>
#include <vector>

#include "collectives/reduce_kernels.h"

namespace dist {
namespace {

// out = -in. Integers negate modulo 2^bits (so a + (-b) == a - b wraps alike);
// floats flip the sign bit, which for every IEEE format (and bf16) is exact.
void negate(void* out, const void* in, uint64_t count, DType dtype) {
  const size_t element = size_of(dtype);
  std::memcpy(out, in, static_cast<size_t>(count) * element);
  auto* bytes = static_cast<unsigned char*>(out);
  if (is_floating(dtype)) {
    for (uint64_t i = 0; i < count; ++i) bytes[i * element + element - 1] ^= 0x80;  // little-endian sign byte
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    unsigned char* e = bytes + i * element;
    unsigned carry = 1;  // two's complement: invert, add one
    for (size_t b = 0; b < element; ++b) {
      const unsigned v = static_cast<unsigned char>(~e[b]) + carry;
      e[b] = static_cast<unsigned char>(v & 0xff);
      carry = v >> 8;
    }
  }
}

}  // namespace

const char* name(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::kAssign: return "assign";
    case UpdateKind::kAdd: return "assign_add";
    case UpdateKind::kSub: return "assign_sub";
  }
  return "invalid";
}

void apply_update(void* target, const void* value, uint64_t count, DType dtype, UpdateKind kind) {
  switch (kind) {
    case UpdateKind::kAssign:
      if (target != value) std::memmove(target, value, static_cast<size_t>(count) * size_of(dtype));
      return;
    case UpdateKind::kAdd:
      reduce(target, target, value, count, dtype, ReduceOp::SUM);
      return;
    case UpdateKind::kSub: {
      std::vector<unsigned char> negated(static_cast<size_t>(count) * size_of(dtype));
      negate(negated.data(), value, count, dtype);
      reduce(target, target, negated.data(), count, dtype, ReduceOp::SUM);
      return;
    }
  }
}

}  // namespace dist
