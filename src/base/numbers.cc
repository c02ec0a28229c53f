#include "base/numbers.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "base/status.h"

namespace dist {

int64_t integer_from_environment(const char* name, int64_t min, int64_t max, int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return parse_integer(text, name, min, max);
}

int64_t parse_integer(const std::string& text, const std::string& field, int64_t min,
                      int64_t max) {
  const std::string shown = field + ": " + quoted(text);
  // strtoll accepts leading blanks and '+'; configuration values must be plain digits.
  size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
  if (text.size() == start) fail_invalid(shown + " is not an integer");
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') fail_invalid(shown + " is not an integer");
  }
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value < min || value > max) {
    fail_invalid(shown + " is out of range [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]");
  }
  return value;
}

std::string describe_seconds(std::chrono::milliseconds duration) {
  char text[32];
  const long long ms = duration.count();
  if (ms % 1000 == 0) {
    std::snprintf(text, sizeof text, "%lld s", ms / 1000);
  } else {
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000.0);
  }
  return text;
}

}  // namespace dist
