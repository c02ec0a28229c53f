// reduce and reduce_many: one table lookup per call, then a plain loop per
// aliasing case. Each loop sees only restrict pointers, so the compiler
// vectorizes it without runtime overlap checks, and no loop writes through a
// pointer that another one of its pointers also reaches.
//
// The same loop templates make two tables. The portable one is compiled for
// the build's baseline. The AVX2 one (x86-64) wraps each entry in a function
// with target("avx2,f16c") and `flatten`, which inlines the generic loops into
// it so they are vectorized again for AVX2; its f16 and bf16 entries use codecs
// with explicit 8- and 16-lane steps (F16C conversions for f16). Everything
// AVX2 stays inside those wrappers and functions of this file: no inline
// function shared with other files is ever compiled for AVX2, and no vector
// value crosses a function compiled for the baseline.
#include "collectives/reduce_kernels.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

#include "base/call_phases.h"
#include "base/status.h"
#include "collectives/reduce_element_ops.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DIST_KERNELS_AVX2 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace dist {
namespace {

using namespace reduce_detail;

// ---- Steps: one element, or a codec's vector of elements ---------------------

// The four things a loop does at one index, for one element of any codec.
// Steps take pointers, never values, so vector codecs keep their vector
// values inside their own AVX2 functions (see Avx2Steps).
template <typename Codec, typename Op>
struct ScalarSteps {
  using S = typename Codec::Storage;
  using A = typename Codec::Acc;
  // out = a op b (out may be a or b: both are read first)
  static void combine(S* out, const S* a, const S* b) {
    *out = Codec::store(Op::apply(Codec::load(*a), Codec::load(*b)));
  }
  // acc = a op b
  static void first(A* acc, const S* a, const S* b) { *acc = Op::apply(Codec::load(*a), Codec::load(*b)); }
  // acc = acc op in
  static void fold(A* acc, const S* in) { *acc = Op::apply(*acc, Codec::load(*in)); }
  // out = acc op in (out may be in)
  static void last(S* out, const A* acc, const S* in) { *out = Codec::store(Op::apply(*acc, Codec::load(*in))); }
};

template <typename Codec, typename = void>
struct HasVector : std::false_type {};
template <typename Codec>
struct HasVector<Codec, std::void_t<typename Codec::template Vector<SumOp>>> : std::true_type {};

// Calls body(i, steps) for every index: in steps of the codec's vector width
// when it has explicit vectors, then (or only) one element at a time, which
// the compiler vectorizes itself.
template <typename Codec, typename Op, typename Body>
inline void for_each_index(size_t count, Body&& body) {
  if constexpr (HasVector<Codec>::value) {
    using Vector = typename Codec::template Vector<Op>;
    size_t i = 0;
    for (; i + Vector::kWidth <= count; i += Vector::kWidth) body(i, Vector{});
    // At most kWidth - 1 left; saying so keeps the compiler from vectorizing
    // (and bloating) this tail as well.
    for (size_t left = std::min(count - i, Vector::kWidth - 1); left > 0; --left, ++i) {
      body(i, ScalarSteps<Codec, Op>{});
    }
  } else {
    for (size_t i = 0; i < count; ++i) body(i, ScalarSteps<Codec, Op>{});
  }
}

// ---- Loops ------------------------------------------------------------------

// out = a op b, three distinct buffers.
template <typename Codec, typename Op, typename S = typename Codec::Storage>
void combine(S* __restrict out, const S* __restrict a, const S* __restrict b, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.combine(out + i, a + i, b + i); });
}

// inout = inout op b.
template <typename Codec, typename Op, typename S = typename Codec::Storage>
void combine_into_left(S* __restrict inout, const S* __restrict b, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.combine(inout + i, inout + i, b + i); });
}

// inout = a op inout (kept separate from the above: MIN/MAX pick `a` on ties).
template <typename Codec, typename Op, typename S = typename Codec::Storage>
void combine_into_right(S* __restrict inout, const S* __restrict a, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.combine(inout + i, a + i, inout + i); });
}

// inout = inout op inout.
template <typename Codec, typename Op, typename S = typename Codec::Storage>
void combine_self(S* __restrict inout, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.combine(inout + i, inout + i, inout + i); });
}

// k-way reduction in blocks: an accumulator block in the compute type stays in
// L1 while every input streams past it once and the output is written once.
// 8 KiB leaves room in L1 for the input lines in flight.
constexpr size_t kBlockBytes = 8192;

template <typename Codec, typename Op, typename S = typename Codec::Storage, typename A = typename Codec::Acc>
void block_first(A* __restrict acc, const S* __restrict a, const S* __restrict b, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.first(acc + i, a + i, b + i); });
}

template <typename Codec, typename Op, typename S = typename Codec::Storage, typename A = typename Codec::Acc>
void block_fold(A* __restrict acc, const S* __restrict in, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.fold(acc + i, in + i); });
}

// The last input is folded on the way out; the output may be that input.
template <typename Codec, typename Op, typename S = typename Codec::Storage, typename A = typename Codec::Acc>
void block_last(S* __restrict out, const A* __restrict acc, const S* __restrict in, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.last(out + i, acc + i, in + i); });
}

template <typename Codec, typename Op, typename S = typename Codec::Storage, typename A = typename Codec::Acc>
void block_last_in_place(S* __restrict inout, const A* __restrict acc, size_t count) {
  for_each_index<Codec, Op>(count, [&](size_t i, auto steps) { steps.last(inout + i, acc + i, inout + i); });
}

// ---- Entry points per dtype x op ------------------------------------------------

using BinaryKernel = void (*)(void* out, const void* a, const void* b, size_t count);
using ManyKernel = void (*)(void* out, const void* const* inputs, size_t num_inputs, size_t count);

template <typename Codec, typename Op>
void binary_kernel(void* out_bytes, const void* a_bytes, const void* b_bytes, size_t count) {
  using S = typename Codec::Storage;
  S* out = static_cast<S*>(out_bytes);
  const S* a = static_cast<const S*>(a_bytes);
  const S* b = static_cast<const S*>(b_bytes);
  if (out == a && out == b) {
    combine_self<Codec, Op>(out, count);
  } else if (out == a) {
    combine_into_left<Codec, Op>(out, b, count);
  } else if (out == b) {
    combine_into_right<Codec, Op>(out, a, count);
  } else {
    combine<Codec, Op>(out, a, b, count);
  }
}

// num_inputs >= 3 (reduce_many handles 1 and 2). The output is written only
// after every input's block has been read, so it may be any of the inputs.
template <typename Codec, typename Op>
void many_kernel(void* out_bytes, const void* const* inputs, size_t num_inputs, size_t count) {
  using S = typename Codec::Storage;
  using A = typename Codec::Acc;
  constexpr size_t kBlock = kBlockBytes / sizeof(A);
  alignas(64) A acc[kBlock];
  S* out = static_cast<S*>(out_bytes);
  const auto input = [inputs](size_t j) { return static_cast<const S*>(inputs[j]); };
  const S* last = input(num_inputs - 1);
  for (size_t start = 0; start < count; start += kBlock) {
    const size_t n = std::min(kBlock, count - start);
    block_first<Codec, Op>(acc, input(0) + start, input(1) + start, n);
    for (size_t j = 2; j + 1 < num_inputs; ++j) block_fold<Codec, Op>(acc, input(j) + start, n);
    if (out == last) {
      block_last_in_place<Codec, Op>(out + start, acc, n);
    } else {
      block_last<Codec, Op>(out + start, acc, last + start, n);
    }
  }
}

// ---- Dispatch tables --------------------------------------------------------------

struct Kernels {
  BinaryKernel binary;
  ManyKernel many;
};

// Columns follow ReduceOp: SUM, PROD, MIN, MAX (MEAN maps to SUM).
constexpr int kKernelOps = 4;
struct KernelTable {
  Kernels entries[kDTypeCount][kKernelOps];
};

// The portable entries are the templates themselves.
struct PortableEntries {
  template <typename Codec, typename Op>
  static constexpr Kernels get() {
    return {&binary_kernel<Codec, Op>, &many_kernel<Codec, Op>};
  }
};

// Rows follow DType; `F16` and `BF16` are the codecs the instruction set uses
// for the 16-bit floats.
template <typename Entries, typename F16, typename BF16>
constexpr KernelTable make_table() {
  using E = Entries;
#define DIST_KERNEL_ROW(codec)                                                                      \
  {                                                                                                 \
    E::template get<codec, SumOp>(), E::template get<codec, ProdOp>(), E::template get<codec, MinOp>(), \
        E::template get<codec, MaxOp>()                                                             \
  }
  return {{
      DIST_KERNEL_ROW(PlainCodec<int8_t>),  DIST_KERNEL_ROW(PlainCodec<uint8_t>),
      DIST_KERNEL_ROW(PlainCodec<int32_t>), DIST_KERNEL_ROW(PlainCodec<uint32_t>),
      DIST_KERNEL_ROW(PlainCodec<int64_t>), DIST_KERNEL_ROW(PlainCodec<uint64_t>),
      DIST_KERNEL_ROW(F16),                 DIST_KERNEL_ROW(BF16),
      DIST_KERNEL_ROW(PlainCodec<float>),   DIST_KERNEL_ROW(PlainCodec<double>),
  }};
#undef DIST_KERNEL_ROW
}

constexpr KernelTable kPortableTable = make_table<PortableEntries, F16Codec, BF16Codec>();

#if DIST_KERNELS_AVX2

#define DIST_AVX2 __attribute__((target("avx2,f16c")))

// The arithmetic on eight f32 lanes, with the same results as the scalar ops:
// min_ps(b, a) is `b < a ? b : a` (it returns `a` on NaN and on ties), then
// a NaN `b` is blended in.
template <typename Op>
DIST_AVX2 inline __m256 apply_avx2(__m256 a, __m256 b) {
  if constexpr (std::is_same_v<Op, SumOp>) {
    return _mm256_add_ps(a, b);
  } else if constexpr (std::is_same_v<Op, ProdOp>) {
    return _mm256_mul_ps(a, b);
  } else {
    const __m256 picked = std::is_same_v<Op, MinOp> ? _mm256_min_ps(b, a) : _mm256_max_ps(b, a);
    return _mm256_blendv_ps(picked, b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  }
}

// The four loop steps of ScalarSteps for a vector of `Lanes::kWidth`
// elements. Lanes provides load/store of storage elements, load_acc/store_acc
// of f32 accumulators, and apply.
template <typename Lanes>
struct Avx2Steps {
  static constexpr size_t kWidth = Lanes::kWidth;
  DIST_AVX2 static void combine(uint16_t* out, const uint16_t* a, const uint16_t* b) {
    Lanes::store(out, Lanes::apply(Lanes::load(a), Lanes::load(b)));
  }
  DIST_AVX2 static void first(float* acc, const uint16_t* a, const uint16_t* b) {
    Lanes::store_acc(acc, Lanes::apply(Lanes::load(a), Lanes::load(b)));
  }
  DIST_AVX2 static void fold(float* acc, const uint16_t* in) {
    Lanes::store_acc(acc, Lanes::apply(Lanes::load_acc(acc), Lanes::load(in)));
  }
  DIST_AVX2 static void last(uint16_t* out, const float* acc, const uint16_t* in) {
    Lanes::store(out, Lanes::apply(Lanes::load_acc(acc), Lanes::load(in)));
  }
};

// f16 with F16C, eight lanes. The conversions round to nearest-even by their
// immediate (not MXCSR), ignore denormals-are-zero, and treat NaN like
// base/half.h, which the scalar tail uses: the same bits either way.
template <typename Op>
struct F16Avx2Lanes {
  static constexpr size_t kWidth = 8;
  DIST_AVX2 static __m256 load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  DIST_AVX2 static void store(uint16_t* p, __m256 value) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  DIST_AVX2 static __m256 load_acc(const float* p) { return _mm256_loadu_ps(p); }
  DIST_AVX2 static void store_acc(float* p, __m256 value) { _mm256_storeu_ps(p, value); }
  DIST_AVX2 static __m256 apply(__m256 a, __m256 b) { return apply_avx2<Op>(a, b); }
};

struct F16Avx2Codec : F16Codec {
  template <typename Op>
  using Vector = Avx2Steps<F16Avx2Lanes<Op>>;
};

// bf16, sixteen lanes per step with no shuffles: a bf16 is the top half of
// an f32, so shifting each 32-bit lane left by 16 widens the even elements
// and masking off its low half widens the odd ones. Results narrow the same
// way back and merge with one OR. (The accumulator block of reduce_many
// holds each step's even lanes, then its odd lanes; every loop of a block
// steps identically, so the order never shows.)
struct BF16Pair {
  __m256 even;
  __m256 odd;
};

// base/half.h's rounding, leaving the bf16 in the top half of each lane.
DIST_AVX2 inline __m256i round_to_top_half(__m256 value) {
  const __m256i bits = _mm256_castps_si256(value);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd));
  const __m256i quiet_nan = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
  const __m256 is_nan = _mm256_cmp_ps(value, value, _CMP_UNORD_Q);
  return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(quiet_nan), is_nan));
}

template <typename Op>
struct BF16Avx2Lanes {
  static constexpr size_t kWidth = 16;
  DIST_AVX2 static __m256i top_halves() { return _mm256_set1_epi32(static_cast<int>(0xffff0000u)); }
  DIST_AVX2 static BF16Pair load(const uint16_t* p) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(bits, 16)),
            _mm256_castsi256_ps(_mm256_and_si256(bits, top_halves()))};
  }
  DIST_AVX2 static void store(uint16_t* p, BF16Pair value) {
    const __m256i even = _mm256_srli_epi32(round_to_top_half(value.even), 16);
    const __m256i odd = _mm256_and_si256(round_to_top_half(value.odd), top_halves());
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_or_si256(even, odd));
  }
  DIST_AVX2 static BF16Pair load_acc(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  DIST_AVX2 static void store_acc(float* p, BF16Pair value) {
    _mm256_storeu_ps(p, value.even);
    _mm256_storeu_ps(p + 8, value.odd);
  }
  DIST_AVX2 static BF16Pair apply(BF16Pair a, BF16Pair b) {
    return {apply_avx2<Op>(a.even, b.even), apply_avx2<Op>(a.odd, b.odd)};
  }
};

struct BF16Avx2Codec : BF16Codec {
  template <typename Op>
  using Vector = Avx2Steps<BF16Avx2Lanes<Op>>;
};

template <typename Codec, typename Op>
DIST_AVX2 __attribute__((flatten)) void binary_kernel_avx2(void* out, const void* a, const void* b, size_t count) {
  binary_kernel<Codec, Op>(out, a, b, count);
}

template <typename Codec, typename Op>
DIST_AVX2 __attribute__((flatten)) void many_kernel_avx2(void* out, const void* const* inputs, size_t num_inputs,
                                                         size_t count) {
  many_kernel<Codec, Op>(out, inputs, num_inputs, count);
}

struct Avx2Entries {
  template <typename Codec, typename Op>
  static constexpr Kernels get() {
    return {&binary_kernel_avx2<Codec, Op>, &many_kernel_avx2<Codec, Op>};
  }
};

constexpr KernelTable kAvx2Table = make_table<Avx2Entries, F16Avx2Codec, BF16Avx2Codec>();

// __builtin_cpu_supports("avx2") also checks that the OS saves YMM registers;
// F16C is read from CPUID directly (older clang does not know its name).
bool cpu_has_avx2() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__builtin_cpu_supports("avx2") || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_F16C) != 0;
}

#undef DIST_AVX2
#else
bool cpu_has_avx2() { return false; }
#endif

const KernelTable* table_for(KernelIsa isa) {
#if DIST_KERNELS_AVX2
  if (isa == KernelIsa::kAvx2) return &kAvx2Table;
#endif
  return isa == KernelIsa::kPortable ? &kPortableTable : nullptr;
}

// Chosen once, at the first use; tests and benchmarks may switch it.
std::atomic<const KernelTable*>& active_table() {
  static std::atomic<const KernelTable*> table{cpu_has_avx2() ? table_for(KernelIsa::kAvx2) : &kPortableTable};
  return table;
}

// Validates both values (throwing with the offending number) and picks the entry.
const Kernels& kernels_for(DType dtype, ReduceOp op) {
  const int32_t row = static_cast<int32_t>(dtype_from_int(static_cast<int32_t>(dtype)));
  const ReduceOp checked = reduce_op_from_int(static_cast<int32_t>(op));
  const int column = checked == ReduceOp::MEAN ? static_cast<int>(ReduceOp::SUM) : static_cast<int>(checked);
  return active_table().load(std::memory_order_relaxed)->entries[row][column];
}

}  // namespace

void reduce(void* out, const void* a, const void* b, size_t count, DType dtype, ReduceOp op) {
  const Kernels& kernels = kernels_for(dtype, op);
  if (count == 0) return;
  if (count * size_of(dtype) >= kTracedReduceBytes) {
    PhaseScope reducing(CallPhase::kReducing);
    kernels.binary(out, a, b, count);
    return;
  }
  kernels.binary(out, a, b, count);
}

void reduce_many(void* out, const void* const* inputs, size_t num_inputs, size_t count, DType dtype,
                 ReduceOp op) {
  const Kernels& kernels = kernels_for(dtype, op);
  if (num_inputs == 0) fail_invalid("reduce_many: the number of inputs must be at least 1, got 0");
  if (count == 0) return;
  auto run = [&] {
    if (num_inputs == 1) {
      if (out != inputs[0]) std::memcpy(out, inputs[0], count * size_of(dtype));
    } else if (num_inputs == 2) {
      kernels.binary(out, inputs[0], inputs[1], count);
    } else {
      kernels.many(out, inputs, num_inputs, count);
    }
  };
  if (num_inputs > 1 && count * size_of(dtype) >= kTracedReduceBytes) {
    PhaseScope reducing(CallPhase::kReducing);
    run();
    return;
  }
  run();
}

KernelIsa kernel_isa() {
  return active_table().load(std::memory_order_relaxed) == &kPortableTable ? KernelIsa::kPortable
                                                                             : KernelIsa::kAvx2;
}

bool kernel_isa_supported(KernelIsa isa) {
  if (isa == KernelIsa::kPortable) return true;
  return isa == KernelIsa::kAvx2 && table_for(isa) != nullptr && cpu_has_avx2();
}

void set_kernel_isa(KernelIsa isa) {
  if (!kernel_isa_supported(isa)) {
    fail_invalid("kernel instruction set " + std::to_string(static_cast<int32_t>(isa)) +
                 " is not supported by this CPU or build");
  }
  active_table().store(table_for(isa), std::memory_order_relaxed);
}

}  // namespace dist
