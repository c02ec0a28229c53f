// Reduction kernels (dist::reduce, dist::reduce_many, dist::finalize_mean) for
// every dtype and op, against references computed here element by element:
// integers in 64-bit unsigned arithmetic truncated to the width, floats in
// double (exact or harmlessly double-rounded for one operation on f32, f16 or
// bf16 values) with f16/bf16 decoded and rounded by the base/half.h
// conversions that test_dtype checks exhaustively.
//
// One file past 500 lines: it is a grid of every dtype and op, and every case
// shares the reference arithmetic above.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "base/dtype.h"
#include "base/half.h"
#include "base/status.h"
#include "collectives/reduce_kernels.h"
#include "collectives/reduce_op.h"
#include "internal_test_support.h"

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#endif

// Last: cmocka defines a fail() macro that would clash with dist::fail. Its
// 1.1 header declares its C functions without extern "C" for C++.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using dist::DType;
using dist::ReduceOp;

const size_t kSizes[] = {0, 1, 7, 64, 1000, 4099};
const ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::PROD, ReduceOp::MIN, ReduceOp::MAX, ReduceOp::MEAN};

// Runs `checks` once per instruction set this CPU supports (the portable
// kernels always), then restores the library's own choice.
template <typename Checks>
void for_each_isa(Checks checks) {
  const dist::KernelIsa chosen = dist::kernel_isa();
  for (dist::KernelIsa isa : {dist::KernelIsa::kPortable, dist::KernelIsa::kAvx2}) {
    if (!dist::kernel_isa_supported(isa)) continue;
    dist::set_kernel_isa(isa);
    checks();
  }
  dist::set_kernel_isa(chosen);
}

const char* isa_name() { return dist::kernel_isa() == dist::KernelIsa::kAvx2 ? "avx2" : "portable"; }

// ---- Per-dtype description ----------------------------------------------------

enum class Kind { kInteger, kFloat, kHalf };

template <DType D> struct Traits;
template <> struct Traits<DType::I8> { using S = int8_t; static constexpr Kind kind = Kind::kInteger; };
template <> struct Traits<DType::U8> { using S = uint8_t; static constexpr Kind kind = Kind::kInteger; };
template <> struct Traits<DType::I32> { using S = int32_t; static constexpr Kind kind = Kind::kInteger; };
template <> struct Traits<DType::U32> { using S = uint32_t; static constexpr Kind kind = Kind::kInteger; };
template <> struct Traits<DType::I64> { using S = int64_t; static constexpr Kind kind = Kind::kInteger; };
template <> struct Traits<DType::U64> { using S = uint64_t; static constexpr Kind kind = Kind::kInteger; };
template <> struct Traits<DType::F32> { using S = float; static constexpr Kind kind = Kind::kFloat; };
template <> struct Traits<DType::F64> { using S = double; static constexpr Kind kind = Kind::kFloat; };
template <> struct Traits<DType::F16> {
  using S = uint16_t;
  static constexpr Kind kind = Kind::kHalf;
  static float widen(S v) { return dist::f16_to_f32(v); }
  static S narrow(float v) { return dist::f32_to_f16(v); }
};
template <> struct Traits<DType::BF16> {
  using S = uint16_t;
  static constexpr Kind kind = Kind::kHalf;
  static float widen(S v) { return dist::bf16_to_f32(v); }
  static S narrow(float v) { return dist::f32_to_bf16(v); }
};

// Floats of every format as a double (NaN stays NaN).
template <DType D>
double to_double(typename Traits<D>::S v) {
  if constexpr (Traits<D>::kind == Kind::kHalf) {
    return Traits<D>::widen(v);
  } else {
    return static_cast<double>(v);
  }
}

// A double rounded into the element type (for f16/bf16 via f32, which rounds
// the same as directly for results of one operation).
template <DType D>
typename Traits<D>::S from_double(double v) {
  if constexpr (Traits<D>::kind == Kind::kHalf) {
    return Traits<D>::narrow(static_cast<float>(v));
  } else {
    return static_cast<typename Traits<D>::S>(v);
  }
}

// ---- Reference arithmetic ---------------------------------------------------------

// Integers: 64-bit unsigned arithmetic, whose low bits are the wrapped result
// at every narrower width.
template <typename S>
S integer_reference(ReduceOp op, S a, S b) {
  const uint64_t wide_a = static_cast<uint64_t>(a);
  const uint64_t wide_b = static_cast<uint64_t>(b);
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::MEAN: return static_cast<S>(wide_a + wide_b);
    case ReduceOp::PROD: return static_cast<S>(wide_a * wide_b);
    case ReduceOp::MIN: return a <= b ? a : b;
    case ReduceOp::MAX: return a >= b ? a : b;
  }
  return 0;
}

// Floats: NaN-propagating MIN/MAX that return `a` when the operands compare equal.
double float_reference(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::MEAN: return a + b;
    case ReduceOp::PROD: return a * b;
    case ReduceOp::MIN:
      if (std::isnan(a) || std::isnan(b)) return std::nan("");
      return b < a ? b : a;
    case ReduceOp::MAX:
      if (std::isnan(a) || std::isnan(b)) return std::nan("");
      return b > a ? b : a;
  }
  return 0;
}

// ((in0 op in1) op in2) ..., in the arithmetic the kernels promise:
// integers wrap, f32 and f16/bf16 accumulate in f32 (each step is one f32
// operation, emulated as a double operation rounded to f32), f64 in f64;
// f16/bf16 round once at the end.
template <DType D>
typename Traits<D>::S reference(ReduceOp op, const std::vector<const typename Traits<D>::S*>& inputs, size_t i) {
  using S = typename Traits<D>::S;
  if constexpr (Traits<D>::kind == Kind::kInteger) {
    S acc = inputs[0][i];
    for (size_t j = 1; j < inputs.size(); ++j) acc = integer_reference<S>(op, acc, inputs[j][i]);
    return acc;
  } else if constexpr (D == DType::F64) {
    double acc = inputs[0][i];
    for (size_t j = 1; j < inputs.size(); ++j) acc = float_reference(op, acc, inputs[j][i]);
    return acc;
  } else {
    float acc = static_cast<float>(to_double<D>(inputs[0][i]));
    for (size_t j = 1; j < inputs.size(); ++j) {
      acc = static_cast<float>(float_reference(op, acc, to_double<D>(inputs[j][i])));
    }
    if constexpr (Traits<D>::kind == Kind::kHalf) {
      return Traits<D>::narrow(acc);
    } else {
      return acc;
    }
  }
}

// Same bits, or NaN on both sides for float types.
template <DType D>
bool same(typename Traits<D>::S got, typename Traits<D>::S expected) {
  if (std::memcmp(&got, &expected, sizeof got) == 0) return true;
  if constexpr (Traits<D>::kind != Kind::kInteger) {
    return std::isnan(to_double<D>(got)) && std::isnan(to_double<D>(expected));
  }
  return false;
}

template <typename S>
unsigned long long raw_bits(S v) {
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

// ---- Inputs ------------------------------------------------------------------------

// Integers: uniformly random bits (sums and products wrap often).
// Floats: mostly moderate values with fractions; some special values (zeros of
// both signs, infinities, NaN, subnormals, values near overflow); some raw
// random bit patterns.
template <DType D>
std::vector<typename Traits<D>::S> random_values(size_t count, std::mt19937_64& random) {
  using S = typename Traits<D>::S;
  std::vector<S> values(count);
  for (S& v : values) {
    const uint64_t r = random();
    if constexpr (Traits<D>::kind == Kind::kInteger) {
      v = static_cast<S>(r);
    } else {
      const unsigned pick = r % 100;
      double value;
      if (pick < 85) {
        value = (static_cast<double>(random() % 2000001) - 1000000.0) / 1024.0;
      } else if (pick < 93) {
        const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, std::nan(""), 1e-40, -3e-8, 60000.0,
                                   -65504.0, 3e38, 1e300, 1.0, -1.0};
        value = specials[random() % (sizeof specials / sizeof specials[0])];
      } else {
        S raw;
        const uint64_t bits = random();
        std::memcpy(&raw, &bits, sizeof raw);
        v = raw;
        continue;
      }
      v = from_double<D>(value);
    }
  }
  return values;
}

// Makes some elements of `b` equal to (or the other-signed zero of) those of
// `a`, so MIN/MAX ties are exercised.
template <DType D>
void add_ties(const std::vector<typename Traits<D>::S>& a, std::vector<typename Traits<D>::S>& b,
              std::mt19937_64& random) {
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned pick = random() % 20;
    if (pick == 0) b[i] = a[i];
    if constexpr (Traits<D>::kind != Kind::kInteger) {
      if (pick == 1 && to_double<D>(a[i]) == 0.0) b[i] = from_double<D>(-to_double<D>(a[i]));
    }
  }
}

template <DType D>
void check_result(const char* what, ReduceOp op, size_t count, const typename Traits<D>::S* got,
                  const std::vector<const typename Traits<D>::S*>& inputs) {
  for (size_t i = 0; i < count; ++i) {
    const auto expected = reference<D>(op, inputs, i);
    if (!same<D>(got[i], expected)) {
      std::string operands;
      for (const auto* input : inputs) {
        char text[32];
        std::snprintf(text, sizeof text, " 0x%llx", raw_bits(input[i]));
        operands += text;
      }
      fail_msg("%s %s %s %s k=%zu count=%zu [%zu]: got 0x%llx, expected 0x%llx (operands%s)", isa_name(), what,
               dist::name(D), dist::name(op), inputs.size(), count, i, raw_bits(got[i]), raw_bits(expected),
               operands.c_str());
    }
  }
}

// ---- reduce: out = a op b ----------------------------------------------------------

template <DType D>
void check_binary_dtype() {
  using S = typename Traits<D>::S;
  std::mt19937_64 random(static_cast<uint64_t>(D) * 7919 + 1);
  for (ReduceOp op : kOps) {
    for (size_t count : kSizes) {
      // Offset 1 misaligns every buffer relative to the vector width.
      for (size_t offset : {0, 1}) {
        std::vector<S> a = random_values<D>(count + offset, random);
        std::vector<S> b = random_values<D>(count + offset, random);
        add_ties<D>(a, b, random);
        const std::vector<S> a_copy = a, b_copy = b;
        const S* pa = a.data() + offset;
        const S* pb = b.data() + offset;
        const std::vector<const S*> inputs = {pa, pb};

        std::vector<S> out(count + offset);
        dist::reduce(out.data() + offset, pa, pb, count, D, op);
        check_result<D>("reduce", op, count, out.data() + offset, inputs);

        // In place on either side, and on both.
        std::vector<S> left = a;
        dist::reduce(left.data() + offset, left.data() + offset, pb, count, D, op);
        check_result<D>("reduce out==a", op, count, left.data() + offset, inputs);

        std::vector<S> right = b;
        dist::reduce(right.data() + offset, pa, right.data() + offset, count, D, op);
        check_result<D>("reduce out==b", op, count, right.data() + offset, inputs);

        std::vector<S> both = a;
        dist::reduce(both.data() + offset, both.data() + offset, both.data() + offset, count, D, op);
        check_result<D>("reduce out==a==b", op, count, both.data() + offset, {pa, pa});

        // Nothing written outside the output; inputs of out-of-place calls
        // untouched.
        std::vector<S> guard(count + 2, S(1));
        dist::reduce(guard.data() + 1, pa, pb, count, D, op);
        const S one = S(1);
        assert_memory_equal(&guard[0], &one, sizeof(S));
        assert_memory_equal(&guard[count + 1], &one, sizeof(S));
        assert_memory_equal(a.data(), a_copy.data(), a.size() * sizeof(S));
        assert_memory_equal(b.data(), b_copy.data(), b.size() * sizeof(S));
      }
    }
  }
}

void test_reduce_integers(void**) {
  for_each_isa([] {
    check_binary_dtype<DType::I8>();
    check_binary_dtype<DType::U8>();
    check_binary_dtype<DType::I32>();
    check_binary_dtype<DType::U32>();
    check_binary_dtype<DType::I64>();
    check_binary_dtype<DType::U64>();
  });
}

void test_reduce_floats(void**) {
  for_each_isa([] {
    check_binary_dtype<DType::F32>();
    check_binary_dtype<DType::F64>();
  });
}

void test_reduce_halves(void**) {
  for_each_isa([] {
    check_binary_dtype<DType::F16>();
    check_binary_dtype<DType::BF16>();
  });
}

// ---- reduce_many: out = in0 op ... op in(k-1) ---------------------------------------

template <DType D>
void check_many_dtype() {
  using S = typename Traits<D>::S;
  std::mt19937_64 random(static_cast<uint64_t>(D) * 104729 + 3);
  std::vector<size_t> sizes(std::begin(kSizes), std::end(kSizes));
  sizes.push_back(10000);  // several 8 KiB accumulator blocks for every dtype
  for (ReduceOp op : kOps) {
    for (size_t count : sizes) {
      for (size_t k : {1, 2, 3, 5}) {
        std::vector<std::vector<S>> data;
        for (size_t j = 0; j < k; ++j) data.push_back(random_values<D>(count + 1, random));
        if (k >= 2) add_ties<D>(data[0], data[1], random);
        std::vector<const S*> inputs;
        std::vector<const void*> raw_inputs;
        for (size_t j = 0; j < k; ++j) {
          inputs.push_back(data[j].data() + 1);  // misaligned
          raw_inputs.push_back(inputs.back());
        }

        std::vector<S> out(count + 1);
        dist::reduce_many(out.data() + 1, raw_inputs.data(), k, count, D, op);
        check_result<D>("reduce_many", op, count, out.data() + 1, inputs);

        // The output may be any one of the inputs.
        for (size_t target = 0; target < k; ++target) {
          std::vector<S> aliased = data[target];
          std::vector<const void*> aliased_inputs = raw_inputs;
          aliased_inputs[target] = aliased.data() + 1;
          dist::reduce_many(aliased.data() + 1, aliased_inputs.data(), k, count, D, op);
          char what[48];
          std::snprintf(what, sizeof what, "reduce_many out==in%zu", target);
          check_result<D>(what, op, count, aliased.data() + 1, inputs);
        }
      }
    }
  }
}

void test_reduce_many_integers(void**) {
  for_each_isa([] {
    check_many_dtype<DType::I8>();
    check_many_dtype<DType::U8>();
    check_many_dtype<DType::I32>();
    check_many_dtype<DType::U32>();
    check_many_dtype<DType::I64>();
    check_many_dtype<DType::U64>();
  });
}

void test_reduce_many_floats(void**) {
  for_each_isa([] {
    check_many_dtype<DType::F32>();
    check_many_dtype<DType::F64>();
  });
}

void test_reduce_many_halves(void**) {
  for_each_isa([] {
    check_many_dtype<DType::F16>();
    check_many_dtype<DType::BF16>();
  });
}

// 2048 + 1 + 1 in f16 (spacing 2 at 2048): rounding after each step gives
// 2048 (2049 ties to even 2048, twice); accumulating in f32 and rounding once
// gives 2050. With k inputs the k - 1 addends are 2 / (k - 1) each, so every
// rounded step falls back to 2048 and only the accumulated sum reaches 2050.
// bf16 has spacing 2 at 256: the same case.
template <DType D>
void check_rounds_once(float base) {
  using S = typename Traits<D>::S;
  const S big = Traits<D>::narrow(base);
  const S expected = Traits<D>::narrow(base + 2.0f);
  assert_true(Traits<D>::widen(expected) == base + 2.0f);
  for (size_t k : {3, 5}) {
    const S addend = Traits<D>::narrow(2.0f / static_cast<float>(k - 1));
    std::vector<S> bigs(33, big), addends(33, addend), out(33);
    std::vector<const void*> inputs(k, addends.data());
    inputs[0] = bigs.data();
    dist::reduce_many(out.data(), inputs.data(), k, out.size(), D, ReduceOp::SUM);
    for (S v : out) assert_int_equal(v, expected);

    // Two-input steps round in between, so they lose every addend.
    std::vector<S> stepwise = bigs;
    for (size_t j = 1; j < k; ++j) {
      dist::reduce(stepwise.data(), stepwise.data(), addends.data(), stepwise.size(), D, ReduceOp::SUM);
    }
    for (S v : stepwise) assert_int_equal(v, big);
  }
}

void test_halves_round_once(void**) {
  for_each_isa([] {
    check_rounds_once<DType::F16>(2048.0f);
    check_rounds_once<DType::BF16>(256.0f);
  });
}

// ---- Known answers -------------------------------------------------------------------

template <DType D>
void expect_pair(ReduceOp op, typename Traits<D>::S a, typename Traits<D>::S b, typename Traits<D>::S expected) {
  using S = typename Traits<D>::S;
  S out[9];
  const S as[9] = {a, a, a, a, a, a, a, a, a};  // 9: a vector body and a tail
  const S bs[9] = {b, b, b, b, b, b, b, b, b};
  dist::reduce(out, as, bs, 9, D, op);
  for (S v : out) {
    if (!same<D>(v, expected)) {
      fail_msg("%s %s %s(0x%llx, 0x%llx) = 0x%llx, expected 0x%llx", isa_name(), dist::name(D), dist::name(op),
               raw_bits(a), raw_bits(b), raw_bits(v), raw_bits(expected));
    }
  }
}

void test_integer_wraparound(void**) {
  for_each_isa([] {
    expect_pair<DType::I8>(ReduceOp::SUM, 127, 1, -128);
    expect_pair<DType::I8>(ReduceOp::SUM, -128, -1, 127);
    expect_pair<DType::I8>(ReduceOp::PROD, 16, 16, 0);
    expect_pair<DType::I8>(ReduceOp::PROD, -128, -1, -128);
    expect_pair<DType::I8>(ReduceOp::PROD, 100, 3, 44);
    expect_pair<DType::U8>(ReduceOp::SUM, 255, 1, 0);
    expect_pair<DType::U8>(ReduceOp::PROD, 255, 255, 1);
    expect_pair<DType::I32>(ReduceOp::SUM, INT32_MAX, 1, INT32_MIN);
    expect_pair<DType::I32>(ReduceOp::PROD, INT32_MIN, -1, INT32_MIN);
    expect_pair<DType::I32>(ReduceOp::PROD, 65536, 65536, 0);
    expect_pair<DType::U32>(ReduceOp::SUM, UINT32_MAX, 2, 1);
    expect_pair<DType::U32>(ReduceOp::PROD, 0x10000u, 0x10001u, 0x10000u);
    expect_pair<DType::I64>(ReduceOp::SUM, INT64_MAX, 1, INT64_MIN);
    expect_pair<DType::I64>(ReduceOp::PROD, INT64_MIN, -1, INT64_MIN);
    expect_pair<DType::U64>(ReduceOp::SUM, UINT64_MAX, UINT64_MAX, UINT64_MAX - 1);
    expect_pair<DType::U64>(ReduceOp::PROD, uint64_t{1} << 32, uint64_t{1} << 32, 0);
    expect_pair<DType::I32>(ReduceOp::MIN, INT32_MIN, INT32_MAX, INT32_MIN);
    expect_pair<DType::U32>(ReduceOp::MAX, 0, UINT32_MAX, UINT32_MAX);
    expect_pair<DType::I64>(ReduceOp::MIN, -1, 1, -1);
    expect_pair<DType::U64>(ReduceOp::MIN, UINT64_MAX, 1, 1);

    // Three 100s wrap in i8: 300 - 256.
    const int8_t hundred[5] = {100, 100, 100, 100, 100};
    const void* inputs[] = {hundred, hundred, hundred};
    int8_t out[5];
    dist::reduce_many(out, inputs, 3, 5, DType::I8, ReduceOp::SUM);
    for (int8_t v : out) assert_int_equal(v, 44);
  });
}

template <DType D>
void check_float_specials() {
  const auto v = [](double x) { return from_double<D>(x); };
  const double nan = std::nan("");
  const double inf = INFINITY;
  // MIN/MAX: NaN on either side wins; infinities order normally; equal
  // operands (+0 and -0) give `a`.
  for (ReduceOp op : {ReduceOp::MIN, ReduceOp::MAX}) {
    expect_pair<D>(op, v(nan), v(1), v(nan));
    expect_pair<D>(op, v(1), v(nan), v(nan));
    expect_pair<D>(op, v(nan), v(nan), v(nan));
    expect_pair<D>(op, v(-inf), v(nan), v(nan));
    expect_pair<D>(op, v(nan), v(inf), v(nan));
    expect_pair<D>(op, v(0.0), v(-0.0), v(0.0));
    expect_pair<D>(op, v(-0.0), v(0.0), v(-0.0));
  }
  expect_pair<D>(ReduceOp::MIN, v(inf), v(-inf), v(-inf));
  expect_pair<D>(ReduceOp::MIN, v(-inf), v(5), v(-inf));
  expect_pair<D>(ReduceOp::MIN, v(inf), v(5), v(5));
  expect_pair<D>(ReduceOp::MAX, v(inf), v(-inf), v(inf));
  expect_pair<D>(ReduceOp::MAX, v(-inf), v(5), v(5));
  expect_pair<D>(ReduceOp::MAX, v(-2), v(-3), v(-2));
  // SUM and PROD: IEEE rules.
  expect_pair<D>(ReduceOp::SUM, v(inf), v(1), v(inf));
  expect_pair<D>(ReduceOp::SUM, v(inf), v(-inf), v(nan));
  expect_pair<D>(ReduceOp::SUM, v(nan), v(1), v(nan));
  expect_pair<D>(ReduceOp::SUM, v(1), v(nan), v(nan));
  expect_pair<D>(ReduceOp::SUM, v(-0.0), v(-0.0), v(-0.0));
  expect_pair<D>(ReduceOp::SUM, v(0.0), v(-0.0), v(0.0));
  expect_pair<D>(ReduceOp::PROD, v(inf), v(0), v(nan));
  expect_pair<D>(ReduceOp::PROD, v(-inf), v(2), v(-inf));
  // The largest finite value doubled overflows to inf.
  const double largest = D == DType::F16    ? 65504.0
                         : D == DType::BF16 ? 3.3895313892515355e38
                         : D == DType::F32  ? 3.4028234663852886e38
                                            : std::numeric_limits<double>::max();
  assert_true(to_double<D>(v(largest)) == largest);
  expect_pair<D>(ReduceOp::SUM, v(largest), v(largest), v(inf));
  expect_pair<D>(ReduceOp::SUM, v(-largest), v(-largest), v(-inf));

  // NaN in the middle of a k-way MIN/MAX/SUM still wins.
  using S = typename Traits<D>::S;
  const S ones[9] = {v(1), v(1), v(1), v(1), v(1), v(1), v(1), v(1), v(1)};
  const S nans[9] = {v(nan), v(nan), v(nan), v(nan), v(nan), v(nan), v(nan), v(nan), v(nan)};
  const void* inputs[] = {ones, ones, nans, ones, ones};
  for (ReduceOp op : {ReduceOp::MIN, ReduceOp::MAX, ReduceOp::SUM}) {
    S out[9];
    dist::reduce_many(out, inputs, 5, 9, D, op);
    for (S x : out) assert_true(std::isnan(to_double<D>(x)));
  }
}

// f16/bf16 results are narrowed from f32, which always yields a quiet NaN,
// even when MIN/MAX pass a signalling NaN operand through.
template <DType D>
void check_half_nan_is_quiet(uint16_t signalling, uint16_t quiet_bit) {
  const uint16_t one = Traits<D>::narrow(1.0f);
  for (ReduceOp op : {ReduceOp::MIN, ReduceOp::MAX, ReduceOp::SUM, ReduceOp::PROD}) {
    std::vector<uint16_t> nans(37, signalling), ones(37, one), out(37), out3(37);
    dist::reduce(out.data(), ones.data(), nans.data(), out.size(), D, op);
    const void* inputs[] = {ones.data(), nans.data(), ones.data()};
    dist::reduce_many(out3.data(), inputs, 3, out3.size(), D, op);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] != (signalling | quiet_bit) || out3[i] != (signalling | quiet_bit)) {
        fail_msg("%s %s %s: NaN 0x%04x gave 0x%04x / 0x%04x, expected 0x%04x", isa_name(), dist::name(D),
                 dist::name(op), signalling, out[i], out3[i], signalling | quiet_bit);
      }
    }
  }
}

void test_float_specials(void**) {
  for_each_isa([] {
    check_float_specials<DType::F16>();
    check_float_specials<DType::BF16>();
    check_float_specials<DType::F32>();
    check_float_specials<DType::F64>();
    check_half_nan_is_quiet<DType::F16>(0x7d01, 0x0200);
    check_half_nan_is_quiet<DType::F16>(0xfc10, 0x0200);
    check_half_nan_is_quiet<DType::BF16>(0x7f81, 0x0040);
    check_half_nan_is_quiet<DType::BF16>(0xff90, 0x0040);
  });
}

// ---- finalize_mean ---------------------------------------------------------------------

const int64_t kDivisors[] = {1,
                             2,
                             3,
                             4,
                             1024,
                             7,
                             1000,
                             (int64_t{1} << 24),
                             (int64_t{1} << 24) + 1,
                             INT32_MAX,
                             int64_t{1} << 31,
                             UINT32_MAX,
                             int64_t{1} << 32,
                             int64_t{1} << 40,
                             (int64_t{1} << 53) + 1,
                             INT64_MAX};

template <DType D>
void check_integer_mean() {
  using S = typename Traits<D>::S;
  std::mt19937_64 random(static_cast<uint64_t>(D) + 99);
  std::vector<S> values = random_values<D>(1000, random);
  const S extremes[] = {std::numeric_limits<S>::min(), std::numeric_limits<S>::max(), S(0), S(1), S(7),
                        static_cast<S>(-1), static_cast<S>(-7), static_cast<S>(-8)};
  values.insert(values.begin(), std::begin(extremes), std::end(extremes));
  for (int64_t divisor : kDivisors) {
    std::vector<S> got = values;
    dist::finalize_mean(got.data(), got.size(), D, divisor);
    for (size_t i = 0; i < values.size(); ++i) {
      S expected;
      if constexpr (std::is_signed_v<S>) {
        expected = static_cast<S>(static_cast<int64_t>(values[i]) / divisor);  // truncates toward zero
      } else {
        expected = static_cast<S>(static_cast<uint64_t>(values[i]) / static_cast<uint64_t>(divisor));
      }
      if (got[i] != expected) {
        fail_msg("%s mean of %lld over %lld: got %lld, expected %lld", dist::name(D),
                 static_cast<long long>(values[i]), static_cast<long long>(divisor), static_cast<long long>(got[i]),
                 static_cast<long long>(expected));
      }
    }
  }
}

void test_mean_integers(void**) {
  check_integer_mean<DType::I8>();
  check_integer_mean<DType::U8>();
  check_integer_mean<DType::I32>();
  check_integer_mean<DType::U32>();
  check_integer_mean<DType::I64>();
  check_integer_mean<DType::U64>();

  // Truncation toward zero, spelled out.
  int32_t values[] = {-7, 7, -1, 1, -6, INT32_MIN, INT32_MAX};
  dist::finalize_mean(values, 7, DType::I32, 2);
  const int32_t expected[] = {-3, 3, 0, 0, -3, INT32_MIN / 2, INT32_MAX / 2};
  assert_memory_equal(values, expected, sizeof values);
  int8_t small[] = {-128, -3, 127};
  dist::finalize_mean(small, 3, DType::I8, 3);
  assert_int_equal(small[0], -42);
  assert_int_equal(small[1], -1);
  assert_int_equal(small[2], 42);
}

// Floats divide (or, by a power of two, multiply by the exact reciprocal): the
// result is the correctly rounded quotient, which the
// reference gets from f64 division (exact enough that rounding it to f32 or
// f16/bf16 still rounds correctly) of the exactly converted divisor.
template <DType D>
void check_float_mean() {
  using S = typename Traits<D>::S;
  std::mt19937_64 random(static_cast<uint64_t>(D) + 7);
  const std::vector<S> values = random_values<D>(4099, random);
  for (int64_t divisor : kDivisors) {
    std::vector<S> got = values;
    dist::finalize_mean(got.data(), got.size(), D, divisor);
    for (size_t i = 0; i < values.size(); ++i) {
      const S expected = from_double<D>(to_double<D>(values[i]) / static_cast<double>(divisor));
      if (!same<D>(got[i], expected)) {
        fail_msg("%s mean of 0x%llx over %lld: got 0x%llx, expected 0x%llx", dist::name(D), raw_bits(values[i]),
                 static_cast<long long>(divisor), raw_bits(got[i]), raw_bits(expected));
      }
    }
  }
}

void test_mean_floats(void**) {
  check_float_mean<DType::F16>();
  check_float_mean<DType::BF16>();
  check_float_mean<DType::F32>();
  check_float_mean<DType::F64>();

  // Division, not multiplication by a rounded reciprocal: 3 * fl(1/3) would be
  // 1.0000001 in f32 for some inputs; x / 3 is always the nearest f32.
  float thirds[] = {3.0f, 1.0f, 6.0f, 9.0f};
  dist::finalize_mean(thirds, 4, DType::F32, 3);
  assert_true(thirds[0] == 1.0f && thirds[2] == 2.0f && thirds[3] == 3.0f);
  assert_true(thirds[1] == 1.0f / 3.0f);
  uint16_t half_thirds[] = {dist::f32_to_f16(1.0f), dist::f32_to_f16(-3.0f)};
  dist::finalize_mean(half_thirds, 2, DType::F16, 3);
  assert_int_equal(half_thirds[0], 0x3555);  // 0.33325, the f16 nearest 1/3
  assert_int_equal(half_thirds[1], 0xbc00);  // -1
}

// ---- Arguments -----------------------------------------------------------------------------


void test_invalid_arguments(void**) {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, out[4];
  const void* inputs[] = {a, b};
  for (int32_t value : {-1, 10, 1000, INT32_MIN}) {
    const DType dtype = static_cast<DType>(value);
    const std::string needle = "dtype " + std::to_string(value);
    expect_invalid("reduce", needle, [&] { dist::reduce(out, a, b, 4, dtype, ReduceOp::SUM); });
    expect_invalid("reduce count 0", needle, [&] { dist::reduce(nullptr, nullptr, nullptr, 0, dtype, ReduceOp::SUM); });
    expect_invalid("reduce_many", needle, [&] { dist::reduce_many(out, inputs, 2, 4, dtype, ReduceOp::MAX); });
    expect_invalid("finalize_mean", needle, [&] { dist::finalize_mean(out, 4, dtype, 2); });
  }
  for (int32_t value : {-1, 5, 77, INT32_MAX}) {
    const ReduceOp op = static_cast<ReduceOp>(value);
    const std::string needle = "op " + std::to_string(value);
    expect_invalid("reduce", needle, [&] { dist::reduce(out, a, b, 4, DType::F32, op); });
    expect_invalid("reduce_many", needle, [&] { dist::reduce_many(out, inputs, 2, 4, DType::F32, op); });
    expect_invalid("reduce_op_from_int", needle, [&] { dist::reduce_op_from_int(value); });
    assert_string_equal(dist::name(op), "invalid");
  }
  expect_invalid("reduce_op_from_int", "4 mean", [] { dist::reduce_op_from_int(5); });
  expect_invalid("reduce_many k=0", "got 0", [&] { dist::reduce_many(out, inputs, 0, 4, DType::F32, ReduceOp::SUM); });
  expect_invalid("finalize_mean 0", "divisor 0", [&] { dist::finalize_mean(out, 4, DType::F32, 0); });
  expect_invalid("finalize_mean -3", "divisor -3", [&] { dist::finalize_mean(out, 4, DType::I32, -3); });

  // The names and numbers of the ops.
  const char* names[] = {"sum", "prod", "min", "max", "mean"};
  for (int32_t value = 0; value < dist::kReduceOpCount; ++value) {
    assert_int_equal(static_cast<int32_t>(dist::reduce_op_from_int(value)), value);
    assert_string_equal(dist::name(static_cast<ReduceOp>(value)), names[value]);
  }
  assert_int_equal(static_cast<int32_t>(ReduceOp::SUM), 0);
  assert_int_equal(static_cast<int32_t>(ReduceOp::PROD), 1);
  assert_int_equal(static_cast<int32_t>(ReduceOp::MIN), 2);
  assert_int_equal(static_cast<int32_t>(ReduceOp::MAX), 3);
  assert_int_equal(static_cast<int32_t>(ReduceOp::MEAN), 4);
}

// Count 0 touches nothing: null pointers are fine.
void test_count_zero(void**) {
  for_each_isa([] {
    for (int32_t d = 0; d < dist::kDTypeCount; ++d) {
      for (ReduceOp op : kOps) {
        dist::reduce(nullptr, nullptr, nullptr, 0, static_cast<DType>(d), op);
        dist::reduce_many(nullptr, nullptr, 3, 0, static_cast<DType>(d), op);
      }
      dist::finalize_mean(nullptr, 0, static_cast<DType>(d), 3);
    }
  });
}


// ---- Instruction sets ------------------------------------------------------------------

void test_isa_selection(void**) {
  assert_true(dist::kernel_isa_supported(dist::KernelIsa::kPortable));
#if defined(__x86_64__)
  // The library starts on the best instruction set the CPU has.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") && f16c;
  assert_int_equal(dist::kernel_isa_supported(dist::KernelIsa::kAvx2), avx2);
  assert_true(dist::kernel_isa() == (avx2 ? dist::KernelIsa::kAvx2 : dist::KernelIsa::kPortable));
#endif
  expect_invalid("set_kernel_isa", "instruction set 7",
                 [] { dist::set_kernel_isa(static_cast<dist::KernelIsa>(7)); });
  assert_false(dist::kernel_isa_supported(static_cast<dist::KernelIsa>(7)));
}

// Both instruction sets give the same bits (NaN payloads aside) on the same
// random inputs, for every half-precision op and every aliasing form.
template <DType D>
void check_isas_agree() {
  using S = typename Traits<D>::S;
  std::mt19937_64 random(static_cast<uint64_t>(D) + 4242);
  const size_t count = 100003;
  const std::vector<S> a = random_values<D>(count, random);
  const std::vector<S> b = random_values<D>(count, random);
  const std::vector<S> c = random_values<D>(count, random);
  for (ReduceOp op : kOps) {
    std::vector<std::vector<S>> results;
    for_each_isa([&] {
      std::vector<S> two(count), three(count), in_place = a;
      dist::reduce(two.data(), a.data(), b.data(), count, D, op);
      const void* inputs[] = {a.data(), b.data(), c.data()};
      dist::reduce_many(three.data(), inputs, 3, count, D, op);
      dist::reduce(in_place.data(), in_place.data(), c.data(), count, D, op);
      results.push_back(two);
      results.push_back(three);
      results.push_back(in_place);
    });
    for (size_t r = 3; r < results.size(); ++r) {
      for (size_t i = 0; i < count; ++i) {
        if (!same<D>(results[r][i], results[r % 3][i])) {
          fail_msg("%s %s: instruction sets disagree at [%zu] (form %zu): 0x%llx vs 0x%llx", dist::name(D),
                   dist::name(op), i, r % 3, raw_bits(results[r][i]), raw_bits(results[r % 3][i]));
        }
      }
    }
  }
}

void test_isas_agree(void**) {
  check_isas_agree<DType::F16>();
  check_isas_agree<DType::BF16>();
  check_isas_agree<DType::F32>();
  check_isas_agree<DType::I32>();
}

// f16/bf16 rounding inside the kernels is to nearest-even whatever the MXCSR
// rounding mode, and flush-to-zero / denormals-are-zero do not touch f16
// subnormals (they widen to normal f32 values).
void test_kernels_ignore_fpu_modes(void**) {
#if defined(__SSE2__)
  for_each_isa([] {
    const unsigned saved = _mm_getcsr();
    // Round toward zero, flush-to-zero, denormals-are-zero.
    _mm_setcsr((saved & ~0x6000u) | 0x6000u | 0x8040u);
    std::vector<uint16_t> a(17, dist::f32_to_f16(2048.0f)), b(17, dist::f32_to_f16(3.0f)), out(17);
    // 2051 is exact in f32 and halfway in f16: ties to even give 2052 (toward
    // zero would give 2050).
    dist::reduce(out.data(), a.data(), b.data(), out.size(), DType::F16, ReduceOp::SUM);
    std::vector<uint16_t> tiny(17, 0x0001), tiny_out(17);
    dist::reduce(tiny_out.data(), tiny.data(), tiny.data(), tiny.size(), DType::F16, ReduceOp::SUM);
    std::vector<uint16_t> bf_a(17, dist::f32_to_bf16(256.0f)), bf_b(17, dist::f32_to_bf16(3.0f)), bf_out(17);
    dist::reduce(bf_out.data(), bf_a.data(), bf_b.data(), bf_out.size(), DType::BF16, ReduceOp::SUM);
    _mm_setcsr(saved);
    for (uint16_t v : out) assert_int_equal(v, dist::f32_to_f16(2052.0f));
    for (uint16_t v : tiny_out) assert_int_equal(v, 0x0002);
    for (uint16_t v : bf_out) assert_int_equal(v, dist::f32_to_bf16(260.0f));
  });
#else
  skip();
#endif
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      // First: it checks the choice the library made at start-up.
      cmocka_unit_test(test_isa_selection),
      cmocka_unit_test(test_reduce_integers),      cmocka_unit_test(test_reduce_floats),
      cmocka_unit_test(test_reduce_halves),        cmocka_unit_test(test_reduce_many_integers),
      cmocka_unit_test(test_reduce_many_floats),   cmocka_unit_test(test_reduce_many_halves),
      cmocka_unit_test(test_halves_round_once),    cmocka_unit_test(test_integer_wraparound),
      cmocka_unit_test(test_float_specials),       cmocka_unit_test(test_mean_integers),
      cmocka_unit_test(test_mean_floats),          cmocka_unit_test(test_invalid_arguments),
      cmocka_unit_test(test_count_zero),           cmocka_unit_test(test_isas_agree),
      cmocka_unit_test(test_kernels_ignore_fpu_modes),
  };
  return cmocka_run_group_tests_name("reduce_kernels", tests, nullptr, nullptr);
}
