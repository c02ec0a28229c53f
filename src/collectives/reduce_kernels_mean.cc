// finalize_mean: divides a finished SUM by the number of contributions.
#include <cstdint>
#include <string>

#include "base/numbers.h"
#include "base/status.h"
#include "collectives/reduce_element_ops.h"
#include "collectives/reduce_kernels.h"

namespace dist {
namespace {

using namespace reduce_detail;

// Integers: C++ division truncates toward zero. `Wide` is the narrowest type
// that holds both the element and the divisor (32-bit division is the faster
// instruction).
template <typename T, typename Wide>
void divide_integers(T* __restrict buf, size_t count, Wide divisor) {
  for (size_t i = 0; i < count; ++i) buf[i] = static_cast<T>(static_cast<Wide>(buf[i]) / divisor);
}

template <typename T>
void mean_signed(void* buf, size_t count, int64_t divisor) {
  if constexpr (sizeof(T) <= sizeof(int32_t)) {
    if (divisor <= INT32_MAX) return divide_integers(static_cast<T*>(buf), count, static_cast<int32_t>(divisor));
  }
  divide_integers(static_cast<T*>(buf), count, divisor);
}

template <typename T>
void mean_unsigned(void* buf, size_t count, int64_t divisor) {
  if constexpr (sizeof(T) <= sizeof(uint32_t)) {
    if (divisor <= int64_t{UINT32_MAX}) {
      return divide_integers(static_cast<T*>(buf), count, static_cast<uint32_t>(divisor));
    }
  }
  divide_integers(static_cast<T*>(buf), count, static_cast<uint64_t>(divisor));
}

// Floats: a true division (correctly rounded) rather than a multiplication
// by a rounded reciprocal. `Q` is the type the quotient is computed in; the
// divisor is exact in it (f32 up to 2^24, f64 up to 2^53). A quotient
// computed in f64 and narrowed to f32, or in f32 and narrowed to f16/bf16,
// is still correctly rounded: the wider type has more than twice the
// precision plus two bits, so the double rounding is harmless.
template <typename Codec, typename Q, typename S = typename Codec::Storage>
void divide_floats(S* __restrict buf, size_t count, Q divisor) {
  for (size_t i = 0; i < count; ++i) {
    const Q quotient = static_cast<Q>(Codec::load(buf[i])) / divisor;
    buf[i] = Codec::store(static_cast<typename Codec::Acc>(quotient));
  }
}

// Dividing by a power of two is multiplying by its exact reciprocal: the same
// correctly rounded quotient, bit for bit, and a vector multiply costs a
// fraction of a vector divide.
template <typename Codec, typename Q, typename S = typename Codec::Storage>
void scale_floats(S* __restrict buf, size_t count, Q reciprocal) {
  for (size_t i = 0; i < count; ++i) {
    const Q quotient = static_cast<Q>(Codec::load(buf[i])) * reciprocal;
    buf[i] = Codec::store(static_cast<typename Codec::Acc>(quotient));
  }
}

// For f32 and the 16-bit types, whose compute type is f32.
template <typename Codec>
void mean_f32_compute(void* buf, size_t count, int64_t divisor) {
  auto* values = static_cast<typename Codec::Storage*>(buf);
  if (is_power_of_two(divisor) && divisor <= (int64_t{1} << 24)) {
    scale_floats<Codec>(values, count, 1.0f / static_cast<float>(divisor));
  } else if (divisor <= (int64_t{1} << 24)) {
    divide_floats<Codec>(values, count, static_cast<float>(divisor));
  } else {
    divide_floats<Codec>(values, count, static_cast<double>(divisor));
  }
}

}  // namespace

void finalize_mean(void* buf, size_t count, DType dtype, int64_t divisor) {
  const DType checked = dtype_from_int(static_cast<int32_t>(dtype));
  if (divisor < 1) {
    fail_invalid("finalize_mean: divisor " + std::to_string(divisor) + " is not a count (must be >= 1)");
  }
  if (count == 0 || divisor == 1) return;
  switch (checked) {
    case DType::I8: return mean_signed<int8_t>(buf, count, divisor);
    case DType::U8: return mean_unsigned<uint8_t>(buf, count, divisor);
    case DType::I32: return mean_signed<int32_t>(buf, count, divisor);
    case DType::U32: return mean_unsigned<uint32_t>(buf, count, divisor);
    case DType::I64: return mean_signed<int64_t>(buf, count, divisor);
    case DType::U64: return mean_unsigned<uint64_t>(buf, count, divisor);
    case DType::F16: return mean_f32_compute<F16Codec>(buf, count, divisor);
    case DType::BF16: return mean_f32_compute<BF16Codec>(buf, count, divisor);
    case DType::F32: return mean_f32_compute<PlainCodec<float>>(buf, count, divisor);
    case DType::F64:
      if (is_power_of_two(divisor)) {
        return scale_floats<PlainCodec<double>>(static_cast<double*>(buf), count, 1.0 / static_cast<double>(divisor));
      }
      return divide_floats<PlainCodec<double>>(static_cast<double*>(buf), count, static_cast<double>(divisor));
  }
}

}  // namespace dist
