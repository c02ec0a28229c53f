/* Test values for every dtype, computed independently of the library: each
 * rank's inputs come from a formula, kept small so that sums, products and
 * means are exact (or nearly, for MEAN) in every type, f16 and bf16 included. */
#ifndef DIST_TEST_ELEMENT_VALUES_H
#define DIST_TEST_ELEMENT_VALUES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <distribute/c_api.h>

static inline size_t dtype_size(dist_dtype_t dtype) {
  switch (dtype) {
    case DIST_DTYPE_I8: case DIST_DTYPE_U8: return 1;
    case DIST_DTYPE_F16: case DIST_DTYPE_BF16: return 2;
    case DIST_DTYPE_I32: case DIST_DTYPE_U32: case DIST_DTYPE_F32: return 4;
    default: return 8;
  }
}

/* binary16 <-> double for the small exact values used here. */
static inline uint16_t half_from_double(double v) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  double a = fabs(v);
  int exponent = 0;
  double mantissa = frexp(a, &exponent); /* a = mantissa * 2^exponent, mantissa in [0.5, 1) */
  uint16_t bits = (uint16_t)((exponent - 1 + 15) << 10);
  bits |= (uint16_t)((mantissa * 2 - 1) * 1024.0 + 0.5);
  return (uint16_t)(sign | bits);
}

static inline double half_to_double(uint16_t h) {
  int exponent = (h >> 10) & 0x1F;
  int mantissa = h & 0x3FF;
  double v;
  if (exponent == 0) v = ldexp(mantissa, -24);
  else if (exponent == 31) v = mantissa ? NAN : INFINITY;
  else v = ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

static inline uint16_t bf16_from_double(double v) {
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return (uint16_t)(bits >> 16); /* exact for the small values used */
}

static inline double bf16_to_double(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline void store_value(void* base, size_t i, dist_dtype_t dtype, double v) {
  switch (dtype) {
    case DIST_DTYPE_I8: ((int8_t*)base)[i] = (int8_t)v; break;
    case DIST_DTYPE_U8: ((uint8_t*)base)[i] = (uint8_t)v; break;
    case DIST_DTYPE_I32: ((int32_t*)base)[i] = (int32_t)v; break;
    case DIST_DTYPE_U32: ((uint32_t*)base)[i] = (uint32_t)v; break;
    case DIST_DTYPE_I64: ((int64_t*)base)[i] = (int64_t)v; break;
    case DIST_DTYPE_U64: ((uint64_t*)base)[i] = (uint64_t)v; break;
    case DIST_DTYPE_F16: ((uint16_t*)base)[i] = half_from_double(v); break;
    case DIST_DTYPE_BF16: ((uint16_t*)base)[i] = bf16_from_double(v); break;
    case DIST_DTYPE_F32: ((float*)base)[i] = (float)v; break;
    default: ((double*)base)[i] = v; break;
  }
}

static inline double load_value(const void* base, size_t i, dist_dtype_t dtype) {
  switch (dtype) {
    case DIST_DTYPE_I8: return ((const int8_t*)base)[i];
    case DIST_DTYPE_U8: return ((const uint8_t*)base)[i];
    case DIST_DTYPE_I32: return ((const int32_t*)base)[i];
    case DIST_DTYPE_U32: return ((const uint32_t*)base)[i];
    case DIST_DTYPE_I64: return (double)((const int64_t*)base)[i];
    case DIST_DTYPE_U64: return (double)((const uint64_t*)base)[i];
    case DIST_DTYPE_F16: return half_to_double(((const uint16_t*)base)[i]);
    case DIST_DTYPE_BF16: return bf16_to_double(((const uint16_t*)base)[i]);
    case DIST_DTYPE_F32: return ((const float*)base)[i];
    default: return ((const double*)base)[i];
  }
}

/* Rank r's i-th input: 1..7 for SUM/MIN/MAX/MEAN, 1..2 for PROD (products of up
 * to 4 ranks stay <= 16, exact everywhere). */
static inline double input_value(int rank, size_t i, dist_op_t op) {
  if (op == DIST_OP_PROD) return (double)(1 + (rank + i) % 2);
  return (double)(1 + (size_t)(rank * 3 + i * 5) % 7);
}

static inline int is_integer_dtype(dist_dtype_t dtype) {
  return dtype != DIST_DTYPE_F16 && dtype != DIST_DTYPE_BF16 && dtype != DIST_DTYPE_F32 && dtype != DIST_DTYPE_F64;
}

/* The reduction of element i over n ranks, as the library must compute it. */
static inline double expected_reduction(int n, size_t i, dist_op_t op, dist_dtype_t dtype) {
  double acc = input_value(0, i, op);
  for (int r = 1; r < n; ++r) {
    double v = input_value(r, i, op);
    if (op == DIST_OP_SUM || op == DIST_OP_MEAN) acc += v;
    else if (op == DIST_OP_PROD) acc *= v;
    else if (op == DIST_OP_MIN) acc = v < acc ? v : acc;
    else acc = v > acc ? v : acc;
  }
  if (op == DIST_OP_MEAN) acc = is_integer_dtype(dtype) ? trunc(acc / n) : acc / n;
  return acc;
}

/* MEAN of floats may round; everything else must be exact. */
static inline int values_match(double got, double expected, dist_op_t op, dist_dtype_t dtype) {
  if (op != DIST_OP_MEAN || is_integer_dtype(dtype)) return got == expected;
  double tolerance = (dtype == DIST_DTYPE_F16 || dtype == DIST_DTYPE_BF16) ? 1e-2 : 1e-6;
  return fabs(got - expected) <= tolerance * fabs(expected);
}

#endif /* DIST_TEST_ELEMENT_VALUES_H */
