// What a wait does when its call stalls. After `warn_after` of waiting it
// logs, once per call, who is behind; at its deadline the timeout's message
// says it too. The communicator gives `behind`, which asks the members where
// they are (Context::query_progress) and names the late ones; the waits (a
// shared-memory group's, a UCX channel's) call check() when they read the
// clock anyway, so a call that does not wait pays nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace dist {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // 0: no warning (the deadline's message still names who is behind).
  void set_warn_after(std::chrono::milliseconds after) { warn_after_ = after; }
  std::chrono::milliseconds warn_after() const { return warn_after_; }
  // `who`: this rank's name; behind(seq): "worker:3 is at ... while ...", or
  // "" when it cannot tell.
  void set_behind(std::string who, std::function<std::string(uint64_t seq)> behind) {
    who_ = std::move(who);
    behind_ = std::move(behind);
  }

  // A wait of call `seq` that began waiting at `waiting_since`: true once per
  // call, when it has waited warn_after (the wait then calls warn()).
  bool due(uint64_t seq, Clock::time_point waiting_since, Clock::time_point now);
  // Logs that `call` (its description) has waited since `waiting_since`, and who is behind.
  void warn(uint64_t seq, const std::string& call, Clock::time_point waiting_since, Clock::time_point now) const;
  // For a timeout's message: " (" + behind(seq) + ")", or "".
  std::string behind_note(uint64_t seq) const;

 private:
  std::chrono::milliseconds warn_after_{30000};
  std::string who_;
  std::function<std::string(uint64_t)> behind_;
  uint64_t warned_seq_ = UINT64_MAX;
};

}  // namespace dist
