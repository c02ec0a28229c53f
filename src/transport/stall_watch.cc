#include "transport/stall_watch.h"

#include <cstdio>

#include "base/log.h"

namespace dist {

bool StallWatch::due(uint64_t seq, Clock::time_point waiting_since, Clock::time_point now) {
  if (warn_after_.count() <= 0 || warned_seq_ == seq || now - waiting_since < warn_after_) return false;
  warned_seq_ = seq;
  return true;
}

void StallWatch::warn(uint64_t seq, const std::string& call, Clock::time_point waiting_since, Clock::time_point now) const {
  char waited[32];
  std::snprintf(waited, sizeof waited, "%.1f s", std::chrono::duration<double>(now - waiting_since).count());
  const std::string behind = behind_ ? behind_(seq) : std::string();
  // Only a warning: the call goes on waiting until its deadline.
  log_message(LogLevel::kWarn,
              who_ + ": " + call + " has waited " + waited + (behind.empty() ? std::string() : ": " + behind));
}

std::string StallWatch::behind_note(uint64_t seq) const {
  const std::string behind = behind_ ? behind_(seq) : std::string();
  return behind.empty() ? std::string() : " (" + behind + ")";
}

}  // namespace dist
