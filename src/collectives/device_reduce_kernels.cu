// device_reduce and device_finalize_mean: collectives/reduce_kernels.h's
// arithmetic, element for element, in CUDA kernels.
//
// The host's loops live in collectives/reduce_kernels*.cc over the codecs and
// ops of collectives/reduce_element_ops.h, which are host-only inline
// functions; the device's copies below follow them line for line (the
// f16/bf16 conversions follow base/half.h), with one addition: the host's NaN
// rule (device_reduce_kernels.h), since the device's own arithmetic returns a
// canonical NaN where the host returns an operand's.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "base/numbers.h"
#include "base/status.h"
#include "gpu/cuda_memory.h"
#include "gpu/kernel_launch.h"
#include "collectives/device_reduce_kernels.h"

namespace dist {
namespace {

using namespace kernels;  // launch shape and errors (gpu/kernel_launch.h)

// ---- The host's NaNs ------------------------------------------------------------------

// Bits of a float type: quieting, and the NaN an invalid operation makes.
template <typename T>
struct FloatBits;

template <>
struct FloatBits<float> {
  __device__ static float quiet(float value) { return __uint_as_float(__float_as_uint(value) | 0x00400000u); }
#if defined(__x86_64__) || defined(__i386__)
  __device__ static float default_nan() { return __uint_as_float(0xffc00000u); }
#else
  __device__ static float default_nan() { return __uint_as_float(0x7fc00000u); }
#endif
};

template <>
struct FloatBits<double> {
  __device__ static double quiet(double value) {
    return __longlong_as_double(__double_as_longlong(value) | 0x0008000000000000ll);
  }
#if defined(__x86_64__) || defined(__i386__)
  __device__ static double default_nan() { return __longlong_as_double(static_cast<long long>(0xfff8000000000000ull)); }
#else
  __device__ static double default_nan() { return __longlong_as_double(0x7ff8000000000000ll); }
#endif
};

// `result` of an arithmetic operation on a and b, with the NaN the host's
// SSE/AVX (and AArch64) arithmetic gives: the first NaN operand, quieted, or
// the default NaN when neither operand is NaN.
template <typename T>
__device__ inline T host_nan_rule(T a, T b, T result) {
  if (result == result) return result;
  if (a != a) return FloatBits<T>::quiet(a);
  if (b != b) return FloatBits<T>::quiet(b);
  return FloatBits<T>::default_nan();
}

// ---- Codecs (collectives/reduce_element_ops.h, base/half.h) ------------------------

template <typename T>
struct PlainCodec {
  using Storage = T;
  using Acc = T;
  __device__ static T load(T value) { return value; }
  __device__ static T store(T value) { return value; }
};

// base/half.h's f16_to_f32 and f32_to_f16, as branches where it selects.
struct F16Codec {
  using Storage = uint16_t;
  using Acc = float;
  __device__ static float load(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1fu;
    const uint32_t mantissa = half & 0x3ffu;
    uint32_t magnitude;
    if (exponent == 0) {
      // mantissa * 2^-24: exact, and a normal f32 (or 0).
      magnitude = __float_as_uint(static_cast<float>(static_cast<int32_t>(mantissa)) * 0x1p-24f);
    } else if (exponent == 31) {
      magnitude = 0x7f800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
    } else {
      magnitude = ((exponent + (127 - 15)) << 23) | (mantissa << 13);
    }
    return __uint_as_float(sign | magnitude);
  }
  __device__ static uint16_t store(float value) {
    const uint32_t bits = __float_as_uint(value);
    const uint32_t sign = (bits >> 16) & 0x8000u;
    const uint32_t magnitude = bits & 0x7fffffffu;
    uint32_t result;
    if (magnitude > 0x7f800000u) {
      result = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
    } else if (magnitude >= 0x477ff000u) {
      result = 0x7c00u;
    } else if (magnitude >= 0x38800000u) {
      result = (magnitude - ((127u - 15u) << 23) + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
    } else {
      // Exact: the integer and fraction of |value| * 2^24 decide the rounding.
      const float scaled = __fmul_rn(__uint_as_float(magnitude), 0x1p24f);
      const int32_t whole = static_cast<int32_t>(scaled);
      const float fraction = __fsub_rn(scaled, static_cast<float>(whole));
      const uint32_t round_up = (fraction > 0.5f || (fraction == 0.5f && (whole & 1) != 0)) ? 1u : 0u;
      result = static_cast<uint32_t>(whole) + round_up;
    }
    return static_cast<uint16_t>(sign | result);
  }
};

// The host's BF16Codec: loads shift without quieting a NaN; f32_to_bf16
// stores.
struct BF16Codec {
  using Storage = uint16_t;
  using Acc = float;
  __device__ static float load(uint16_t value) { return __uint_as_float(static_cast<uint32_t>(value) << 16); }
  __device__ static uint16_t store(float value) {
    const uint32_t bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
    return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
};

// ---- Ops (collectives/reduce_element_ops.h) -----------------------------------------

template <typename T>
constexpr bool kIsFloat = std::is_floating_point<T>::value;

// Integer SUM and PROD wrap through the unsigned type.
struct SumOp {
  template <typename T>
  __device__ static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return host_nan_rule(a, b, a + b);
    } else {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    }
  }
};

struct ProdOp {
  template <typename T>
  __device__ static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return host_nan_rule(a, b, a * b);
    } else {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    }
  }
};

// NaN-propagating selects; equal operands give `a`.
struct MinOp {
  template <typename T>
  __device__ static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return b != b ? b : (b < a ? b : a);
    } else {
      return b < a ? b : a;
    }
  }
};

struct MaxOp {
  template <typename T>
  __device__ static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return b != b ? b : (a < b ? b : a);
    } else {
      return a < b ? b : a;
    }
  }
};

// ---- Kernels --------------------------------------------------------------------------

template <typename Codec, typename Op>
__global__ void reduce_kernel(typename Codec::Storage* acc, const typename Codec::Storage* x, uint64_t count) {
  for (uint64_t i = first_index(); i < count; i += grid_stride()) {
    acc[i] = Codec::store(Op::apply(Codec::load(acc[i]), Codec::load(x[i])));
  }
}

// reduce_many's k-way combination: ((in0 op in1) op in2) ..., in the
// codec's accumulation type, stored (rounded, for f16/bf16) once.
template <typename Storage>
struct InputList {
  const Storage* inputs[kMaxDeviceInputs];
};

template <typename Codec, typename Op>
__global__ void reduce_many_kernel(typename Codec::Storage* out, InputList<typename Codec::Storage> list, int k,
                                   uint64_t count) {
  for (uint64_t i = first_index(); i < count; i += grid_stride()) {
    auto value = Codec::load(list.inputs[0][i]);
    for (int j = 1; j < k; ++j) value = Op::apply(value, Codec::load(list.inputs[j][i]));
    out[i] = Codec::store(value);
  }
}

// finalize_mean's integer division (truncating toward zero) in `Wide`.
template <typename T, typename Wide>
__global__ void divide_integers_kernel(T* __restrict__ buf, uint64_t count, Wide divisor) {
  for (uint64_t i = first_index(); i < count; i += grid_stride()) {
    buf[i] = static_cast<T>(static_cast<Wide>(buf[i]) / divisor);
  }
}

// finalize_mean's float quotient, computed in Q: a multiplication by the
// exact reciprocal of a power of two, or a true division. A NaN element comes
// out as the host's arithmetic leaves it: itself, quieted (through Q and back).
template <typename Codec, typename Q, bool kByReciprocal>
__global__ void divide_floats_kernel(typename Codec::Storage* __restrict__ buf, uint64_t count, Q operand) {
  using Acc = typename Codec::Acc;
  for (uint64_t i = first_index(); i < count; i += grid_stride()) {
    const Acc value = Codec::load(buf[i]);
    Acc result;
    if (value != value) {
      result = FloatBits<Acc>::quiet(value);
    } else {
      const Q quotient = kByReciprocal ? static_cast<Q>(value) * operand : static_cast<Q>(value) / operand;
      result = static_cast<Acc>(quotient);
    }
    buf[i] = Codec::store(result);
  }
}

// ---- Host side ------------------------------------------------------------------------

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

template <typename Codec, typename Op>
void launch_reduce(void* acc, const void* x, uint64_t count, void* stream) {
  using S = typename Codec::Storage;
  clear_last_error();
  reduce_kernel<Codec, Op><<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(
      static_cast<S*>(acc), static_cast<const S*>(x), count);
  check_launch("device_reduce: the kernel launch");
}

template <typename Codec>
void reduce_codec(void* acc, const void* x, uint64_t count, ReduceOp op, void* stream) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::MEAN: return launch_reduce<Codec, SumOp>(acc, x, count, stream);
    case ReduceOp::PROD: return launch_reduce<Codec, ProdOp>(acc, x, count, stream);
    case ReduceOp::MIN: return launch_reduce<Codec, MinOp>(acc, x, count, stream);
    case ReduceOp::MAX: return launch_reduce<Codec, MaxOp>(acc, x, count, stream);
  }
}

template <typename Codec, typename Op>
void launch_reduce_many(void* out, const void* const* inputs, int k, uint64_t count, void* stream) {
  using S = typename Codec::Storage;
  InputList<S> list{};
  for (int j = 0; j < k; ++j) list.inputs[j] = static_cast<const S*>(inputs[j]);
  clear_last_error();
  reduce_many_kernel<Codec, Op><<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(static_cast<S*>(out), list, k,
                                                                                       count);
  check_launch("device_reduce_many: the kernel launch");
}

template <typename Codec>
void reduce_many_codec(void* out, const void* const* inputs, int k, uint64_t count, ReduceOp op, void* stream) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::MEAN: return launch_reduce_many<Codec, SumOp>(out, inputs, k, count, stream);
    case ReduceOp::PROD: return launch_reduce_many<Codec, ProdOp>(out, inputs, k, count, stream);
    case ReduceOp::MIN: return launch_reduce_many<Codec, MinOp>(out, inputs, k, count, stream);
    case ReduceOp::MAX: return launch_reduce_many<Codec, MaxOp>(out, inputs, k, count, stream);
  }
}

template <typename T, typename Wide>
void launch_divide_integers(void* buf, uint64_t count, Wide divisor, void* stream) {
  clear_last_error();
  divide_integers_kernel<T, Wide><<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(static_cast<T*>(buf), count,
                                                                                       divisor);
  check_launch("device_finalize_mean: the kernel launch");
}

template <typename Codec, typename Q, bool kByReciprocal>
void launch_divide_floats(void* buf, uint64_t count, Q operand, void* stream) {
  using S = typename Codec::Storage;
  clear_last_error();
  divide_floats_kernel<Codec, Q, kByReciprocal>
      <<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(static_cast<S*>(buf), count, operand);
  check_launch("device_finalize_mean: the kernel launch");
}

// The host's choice of division width (32-bit where both fit; the quotient
// is the same in any width that holds the element and the divisor).
template <typename T>
void mean_signed(void* buf, uint64_t count, int64_t divisor, void* stream) {
  if (sizeof(T) <= sizeof(int32_t) && divisor <= INT32_MAX) {
    return launch_divide_integers<T>(buf, count, static_cast<int32_t>(divisor), stream);
  }
  launch_divide_integers<T>(buf, count, divisor, stream);
}

template <typename T>
void mean_unsigned(void* buf, uint64_t count, int64_t divisor, void* stream) {
  if (sizeof(T) <= sizeof(uint32_t) && divisor <= int64_t{UINT32_MAX}) {
    return launch_divide_integers<T>(buf, count, static_cast<uint32_t>(divisor), stream);
  }
  launch_divide_integers<T>(buf, count, static_cast<uint64_t>(divisor), stream);
}

// f32, f16 and bf16 compute in f32 (reduce_kernels_mean.cc's mean_f32_compute).
template <typename Codec>
void mean_f32_compute(void* buf, uint64_t count, int64_t divisor, void* stream) {
  if (is_power_of_two(divisor) && divisor <= (int64_t{1} << 24)) {
    launch_divide_floats<Codec, float, true>(buf, count, 1.0f / static_cast<float>(divisor), stream);
  } else if (divisor <= (int64_t{1} << 24)) {
    launch_divide_floats<Codec, float, false>(buf, count, static_cast<float>(divisor), stream);
  } else {
    launch_divide_floats<Codec, double, false>(buf, count, static_cast<double>(divisor), stream);
  }
}

}  // namespace

void device_reduce(void* acc, const void* x, uint64_t count, DType dtype, ReduceOp op, void* stream) {
  const DType checked_dtype = dtype_from_int(static_cast<int32_t>(dtype));
  const ReduceOp checked_op = reduce_op_from_int(static_cast<int32_t>(op));
  if (count == 0) return;
  switch (checked_dtype) {
    case DType::I8: return reduce_codec<PlainCodec<int8_t>>(acc, x, count, checked_op, stream);
    case DType::U8: return reduce_codec<PlainCodec<uint8_t>>(acc, x, count, checked_op, stream);
    case DType::I32: return reduce_codec<PlainCodec<int32_t>>(acc, x, count, checked_op, stream);
    case DType::U32: return reduce_codec<PlainCodec<uint32_t>>(acc, x, count, checked_op, stream);
    case DType::I64: return reduce_codec<PlainCodec<int64_t>>(acc, x, count, checked_op, stream);
    case DType::U64: return reduce_codec<PlainCodec<uint64_t>>(acc, x, count, checked_op, stream);
    case DType::F16: return reduce_codec<F16Codec>(acc, x, count, checked_op, stream);
    case DType::BF16: return reduce_codec<BF16Codec>(acc, x, count, checked_op, stream);
    case DType::F32: return reduce_codec<PlainCodec<float>>(acc, x, count, checked_op, stream);
    case DType::F64: return reduce_codec<PlainCodec<double>>(acc, x, count, checked_op, stream);
  }
}

void device_reduce_many(void* out, const void* const* inputs, size_t num_inputs, uint64_t count, DType dtype,
                        ReduceOp op, void* stream) {
  const DType checked_dtype = dtype_from_int(static_cast<int32_t>(dtype));
  const ReduceOp checked_op = reduce_op_from_int(static_cast<int32_t>(op));
  if (num_inputs < 1 || num_inputs > static_cast<size_t>(kMaxDeviceInputs)) {
    fail_invalid("device_reduce_many: " + std::to_string(num_inputs) + " inputs, not 1.." +
                 std::to_string(kMaxDeviceInputs));
  }
  if (count == 0) return;
  if (num_inputs == 1) {
    // One input is the result, bit for bit, as on the host: no trip through
    // the accumulator's type, which would quiet a signalling NaN.
    if (out != inputs[0]) copy_on_device_async(out, inputs[0], count * size_of(checked_dtype), stream);
    return;
  }
  const int k = static_cast<int>(num_inputs);
  switch (checked_dtype) {
    case DType::I8: return reduce_many_codec<PlainCodec<int8_t>>(out, inputs, k, count, checked_op, stream);
    case DType::U8: return reduce_many_codec<PlainCodec<uint8_t>>(out, inputs, k, count, checked_op, stream);
    case DType::I32: return reduce_many_codec<PlainCodec<int32_t>>(out, inputs, k, count, checked_op, stream);
    case DType::U32: return reduce_many_codec<PlainCodec<uint32_t>>(out, inputs, k, count, checked_op, stream);
    case DType::I64: return reduce_many_codec<PlainCodec<int64_t>>(out, inputs, k, count, checked_op, stream);
    case DType::U64: return reduce_many_codec<PlainCodec<uint64_t>>(out, inputs, k, count, checked_op, stream);
    case DType::F16: return reduce_many_codec<F16Codec>(out, inputs, k, count, checked_op, stream);
    case DType::BF16: return reduce_many_codec<BF16Codec>(out, inputs, k, count, checked_op, stream);
    case DType::F32: return reduce_many_codec<PlainCodec<float>>(out, inputs, k, count, checked_op, stream);
    case DType::F64: return reduce_many_codec<PlainCodec<double>>(out, inputs, k, count, checked_op, stream);
  }
}

void device_finalize_mean(void* buf, uint64_t count, DType dtype, int64_t divisor, void* stream) {
  const DType checked = dtype_from_int(static_cast<int32_t>(dtype));
  if (divisor < 1) {
    fail_invalid("device_finalize_mean: divisor " + std::to_string(divisor) + " is not a count (must be >= 1)");
  }
  if (count == 0 || divisor == 1) return;
  switch (checked) {
    case DType::I8: return mean_signed<int8_t>(buf, count, divisor, stream);
    case DType::U8: return mean_unsigned<uint8_t>(buf, count, divisor, stream);
    case DType::I32: return mean_signed<int32_t>(buf, count, divisor, stream);
    case DType::U32: return mean_unsigned<uint32_t>(buf, count, divisor, stream);
    case DType::I64: return mean_signed<int64_t>(buf, count, divisor, stream);
    case DType::U64: return mean_unsigned<uint64_t>(buf, count, divisor, stream);
    case DType::F16: return mean_f32_compute<F16Codec>(buf, count, divisor, stream);
    case DType::BF16: return mean_f32_compute<BF16Codec>(buf, count, divisor, stream);
    case DType::F32: return mean_f32_compute<PlainCodec<float>>(buf, count, divisor, stream);
    case DType::F64:
      if (is_power_of_two(divisor)) {
        return launch_divide_floats<PlainCodec<double>, double, true>(buf, count, 1.0 / static_cast<double>(divisor),
                                                                      stream);
      }
      return launch_divide_floats<PlainCodec<double>, double, false>(buf, count, static_cast<double>(divisor),
                                                                     stream);
  }
}

}  // namespace dist
