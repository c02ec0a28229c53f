// The library's log: one line per message on stderr, for what a user should
// see without asking (warn and error) and, when asked (DIST_LOG_LEVEL=info or
// debug), what helps to find out why. The level is read once, from the
// environment, never written. Thread-safe: each line is one write().
#pragma once

#include <string>

namespace dist {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// Whether messages of `level` are printed (DIST_LOG_LEVEL: error, warn, info,
// debug; warn when unset or unknown).
bool log_enabled(LogLevel level);

// Prints "libdistribute[PID] LEVEL: message" when the level is enabled.
// `source` names the part that speaks ("ucx" for UCX's own messages); empty
// for the library itself.
void log_message(LogLevel level, const std::string& message, const std::string& source = "");

}  // namespace dist
