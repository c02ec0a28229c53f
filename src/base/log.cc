#include "base/log.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace dist {

namespace {

LogLevel level_from_environment() {
  const char* setting = std::getenv("DIST_LOG_LEVEL");
  if (setting == nullptr) return LogLevel::kWarn;
  if (std::strcmp(setting, "error") == 0) return LogLevel::kError;
  if (std::strcmp(setting, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(setting, "debug") == 0) return LogLevel::kDebug;
  return LogLevel::kWarn;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "?";
}

}  // namespace

bool log_enabled(LogLevel level) {
  static const LogLevel threshold = level_from_environment();
  return static_cast<int>(level) <= static_cast<int>(threshold);
}

void log_message(LogLevel level, const std::string& message, const std::string& source) {
  if (!log_enabled(level)) return;
  std::string line = "libdistribute[" + std::to_string(getpid()) + "] " + level_name(level) + ": ";
  if (!source.empty()) line += source + ": ";
  line += message;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  line += '\n';
  // One write per line, so lines of several threads do not interleave.
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace dist
