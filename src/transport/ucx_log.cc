#include "transport/ucx_log.h"

#include <ucs/debug/log_def.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "base/log.h"

namespace dist {

namespace {

std::mutex route_mutex;
int route_users = 0;  // route_mutex

LogLevel library_level(ucs_log_level_t level) {
  // The user asked UCX for these messages: show them as asked.
  static const bool user_asked = std::getenv("UCX_LOG_LEVEL") != nullptr;
  if (level <= UCS_LOG_LEVEL_FATAL) return LogLevel::kError;
  if (user_asked) return LogLevel::kError;
  if (level <= UCS_LOG_LEVEL_WARN) return LogLevel::kInfo;
  return LogLevel::kDebug;
}

ucs_log_func_rc_t route_message(const char* file, unsigned line, const char* function, ucs_log_level_t level,
                                const ucs_log_component_config_t*, const char* format, va_list ap) {
  const LogLevel mapped = library_level(level);
  if (!log_enabled(mapped)) return UCS_LOG_FUNC_RC_STOP;
  char text[1024];
  va_list copy;
  va_copy(copy, ap);
  std::vsnprintf(text, sizeof text, format, copy);
  va_end(copy);
  std::string where = std::string(file != nullptr ? file : "?") + ":" + std::to_string(line);
  if (mapped == LogLevel::kDebug && function != nullptr) where += " " + std::string(function);
  log_message(mapped, std::string(text) + " (" + where + ")", "ucx");
  return UCS_LOG_FUNC_RC_STOP;
}

}  // namespace

UcxLogRoute::UcxLogRoute() {
  std::lock_guard<std::mutex> guard(route_mutex);
  if (route_users++ == 0) ucs_log_push_handler(&route_message);
}

UcxLogRoute::~UcxLogRoute() {
  std::lock_guard<std::mutex> guard(route_mutex);
  if (--route_users == 0) ucs_log_pop_handler();
}

}  // namespace dist
