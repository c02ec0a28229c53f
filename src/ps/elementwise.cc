#include "ps/elementwise.h"

#include <cstdint>
#include <type_traits>

#include "base/half.h"
#include "collectives/reduce_kernels.h"

namespace dist::ps {
namespace {

template <typename T>
void subtract_ints(void* dst, const void* src, size_t count) {
  using U = std::make_unsigned_t<T>;
  U* d = static_cast<U*>(dst);
  const U* s = static_cast<const U*>(src);
  for (size_t i = 0; i < count; ++i) d[i] = static_cast<U>(d[i] - s[i]);
}

template <typename T>
void subtract_floats(void* dst, const void* src, size_t count) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < count; ++i) d[i] -= s[i];
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void subtract_halves(void* dst, const void* src, size_t count) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  const uint16_t* s = static_cast<const uint16_t*>(src);
  for (size_t i = 0; i < count; ++i) d[i] = Narrow(Widen(d[i]) - Widen(s[i]));
}

}  // namespace

void add_in_place(void* dst, const void* src, size_t count, DType dtype) {
  reduce(dst, dst, src, count, dtype, ReduceOp::SUM);
}

void subtract_in_place(void* dst, const void* src, size_t count, DType dtype) {
  switch (dtype) {
    case DType::I8: return subtract_ints<int8_t>(dst, src, count);
    case DType::U8: return subtract_ints<uint8_t>(dst, src, count);
    case DType::I32: return subtract_ints<int32_t>(dst, src, count);
    case DType::U32: return subtract_ints<uint32_t>(dst, src, count);
    case DType::I64: return subtract_ints<int64_t>(dst, src, count);
    case DType::U64: return subtract_ints<uint64_t>(dst, src, count);
    case DType::F16: return subtract_halves<f16_to_f32, f32_to_f16>(dst, src, count);
    case DType::BF16: return subtract_halves<bf16_to_f32, f32_to_bf16>(dst, src, count);
    case DType::F32: return subtract_floats<float>(dst, src, count);
    case DType::F64: return subtract_floats<double>(dst, src, count);
  }
  size_of(dtype);  // throws naming the bad value
}

}  // namespace dist::ps
