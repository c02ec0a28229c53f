// The element types dist-bench times, and the element reads and writes its
// result checks need. Check values are small integers, which every dtype
// holds exactly (within exact_limit for the float types).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <distribute/c_api.h>

namespace dist::bench {

struct Dtype {
  const char* name;  // as on the command line: i8 ... f64
  dist_dtype_t id;
  size_t size;       // bytes per element
  // The largest integer m such that every integer in [-m, m] is exact in this
  // type, so sums that stay below it are exact; 0 for the integer types,
  // whose sums wrap modulo 2^bits exactly.
  int64_t exact_limit;
};

// Throws dist::Error naming `flag` when `name` is not a dtype.
const Dtype& parse_dtype(const std::string& name, const std::string& flag);

// "i8 u8 ... f64": for usage and error messages.
std::string dtype_names();

// Writes the integer `value` as element `index` of an array of `dtype`:
// integers wrap modulo 2^bits; floats must be exact (|value| <= exact_limit).
void store_integer(const Dtype& dtype, void* array, uint64_t index, int64_t value);

// Element `index` as a double, for messages.
double load_as_double(const Dtype& dtype, const void* array, uint64_t index);

}  // namespace dist::bench
