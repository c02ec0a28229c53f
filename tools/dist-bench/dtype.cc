#include "dtype.h"

#include <cmath>
#include <cstring>

#include "base/status.h"

namespace dist::bench {

namespace {

constexpr Dtype kDtypes[] = {
    {"i8", DIST_DTYPE_I8, 1, 0},           {"u8", DIST_DTYPE_U8, 1, 0},
    {"i32", DIST_DTYPE_I32, 4, 0},         {"u32", DIST_DTYPE_U32, 4, 0},
    {"i64", DIST_DTYPE_I64, 8, 0},         {"u64", DIST_DTYPE_U64, 8, 0},
    {"f16", DIST_DTYPE_F16, 2, 1 << 11},   {"bf16", DIST_DTYPE_BF16, 2, 1 << 8},
    {"f32", DIST_DTYPE_F32, 4, 1 << 24},   {"f64", DIST_DTYPE_F64, 8, int64_t{1} << 53},
};

template <typename T>
void put(void* array, uint64_t index, T value) {
  std::memcpy(static_cast<unsigned char*>(array) + index * sizeof(T), &value, sizeof(T));
}

template <typename T>
T get(const void* array, uint64_t index) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(array) + index * sizeof(T), sizeof(T));
  return value;
}

// Binary16 bits of an integer with |value| <= 2048 (written out here rather
// than taken from the library, so the check does not share its conversions).
uint16_t f16_of_integer(int64_t value) {
  uint16_t sign = value < 0 ? 0x8000u : 0u;
  uint64_t magnitude = static_cast<uint64_t>(value < 0 ? -value : value);
  if (magnitude == 0) return sign;
  int exponent = 0;
  while ((magnitude >> (exponent + 1)) != 0) ++exponent;  // floor(log2)
  uint64_t mantissa = (magnitude << (10 - exponent)) & 0x3ffu;
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

double f16_to_double(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  double mantissa = bits & 0x3ff;
  double magnitude = exponent == 0    ? mantissa * 0x1p-24
                     : exponent == 31 ? (mantissa == 0 ? 1.0 / 0.0 : 0.0 / 0.0)
                                      : (1.0 + mantissa / 1024.0) * std::ldexp(1.0, exponent - 15);
  return (bits & 0x8000u) ? -magnitude : magnitude;
}

// bfloat16 is the upper half of a float32; small integers lose nothing there.
uint16_t bf16_of_integer(int64_t value) {
  float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

double bf16_to_double(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

}  // namespace

const Dtype& parse_dtype(const std::string& name, const std::string& flag) {
  for (const Dtype& d : kDtypes) {
    if (name == d.name) return d;
  }
  fail_invalid(flag + ": " + quoted(name) + " is not a dtype (" + dtype_names() + ")");
}

std::string dtype_names() {
  std::string names;
  for (const Dtype& d : kDtypes) names += (names.empty() ? "" : " ") + std::string(d.name);
  return names;
}

void store_integer(const Dtype& dtype, void* array, uint64_t index, int64_t value) {
  // Integer types: the low bits of the two's-complement value, i.e. modulo 2^bits.
  const uint64_t bits = static_cast<uint64_t>(value);
  switch (dtype.id) {
    case DIST_DTYPE_I8: case DIST_DTYPE_U8: put(array, index, static_cast<uint8_t>(bits)); break;
    case DIST_DTYPE_I32: case DIST_DTYPE_U32: put(array, index, static_cast<uint32_t>(bits)); break;
    case DIST_DTYPE_I64: case DIST_DTYPE_U64: put(array, index, bits); break;
    case DIST_DTYPE_F16: put(array, index, f16_of_integer(value)); break;
    case DIST_DTYPE_BF16: put(array, index, bf16_of_integer(value)); break;
    case DIST_DTYPE_F32: put(array, index, static_cast<float>(value)); break;
    default: put(array, index, static_cast<double>(value)); break;
  }
}

double load_as_double(const Dtype& dtype, const void* array, uint64_t index) {
  switch (dtype.id) {
    case DIST_DTYPE_I8: return get<int8_t>(array, index);
    case DIST_DTYPE_U8: return get<uint8_t>(array, index);
    case DIST_DTYPE_I32: return get<int32_t>(array, index);
    case DIST_DTYPE_U32: return get<uint32_t>(array, index);
    case DIST_DTYPE_I64: return static_cast<double>(get<int64_t>(array, index));
    case DIST_DTYPE_U64: return static_cast<double>(get<uint64_t>(array, index));
    case DIST_DTYPE_F16: return f16_to_double(get<uint16_t>(array, index));
    case DIST_DTYPE_BF16: return bf16_to_double(get<uint16_t>(array, index));
    case DIST_DTYPE_F32: return get<float>(array, index);
    default: return get<double>(array, index);
  }
}

}  // namespace dist::bench
