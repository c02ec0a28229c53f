// Strict number parsing for configuration text (the whole string must be a
// decimal integer within [min, max], or the error names the field and the
// value), durations as messages print them, and the integer tests the
// algorithms share.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace dist {

// `field` names where the text came from ("SLURM_PROCID", "TF_CONFIG: task.index").
int64_t parse_integer(const std::string& text, const std::string& field, int64_t min, int64_t max);

// Same, for int32 fields with a lower bound (most counts and indices).
inline int32_t parse_int32(const std::string& text, const std::string& field, int32_t min = 0,
                           int32_t max = INT32_MAX) {
  return static_cast<int32_t>(parse_integer(text, field, min, max));
}

// The environment variable `name` as parse_integer reads it, or `fallback`
// when it is unset or empty.
int64_t integer_from_environment(const char* name, int64_t min, int64_t max, int64_t fallback);

// "8 s", "1.5 s": a duration as people set it, for messages ("did not
// connect within 8 s").
std::string describe_seconds(std::chrono::milliseconds duration);

// 1, 2, 4, 8, ...: rank counts that halving algorithms need no fold for, and
// divisors whose reciprocal is exact in binary floating point.
constexpr bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace dist
