#include "base/call_phases.h"

#include "base/timeline.h"

namespace dist {

namespace {
thread_local CallPhases* t_current = nullptr;
}  // namespace

const char* name(CallPhase phase) {
  switch (phase) {
    case CallPhase::kWaiting: return "waiting for peers";
    case CallPhase::kReducing: return "reducing";
    case CallPhase::kMoving: break;
  }
  return "moving data";
}

std::atomic<int> g_open_timelines{0};

CallPhases** current_call_phases_slot() { return &t_current; }

void CallPhases::close(int64_t now_ns) {
  totals_[static_cast<int>(current_)] += now_ns - current_start_ns_;
  if (current_ == CallPhase::kMoving || now_ns <= current_start_ns_) return;
  Interval* last = interval_count_ > 0 ? &intervals_[interval_count_ - 1] : nullptr;
  if (last != nullptr && last->phase == current_ && current_start_ns_ - last->end_ns < kMergeGapNs) {
    last->end_ns = now_ns;
  } else if (interval_count_ < kMaxIntervals) {
    intervals_[interval_count_++] = Interval{current_, current_start_ns_, now_ns};
  }
}

CallPhase CallPhases::enter(CallPhase phase) {
  const CallPhase previous = current_;
  if (phase == current_) return previous;
  const int64_t now = timeline_now_ns();
  close(now);
  current_ = phase;
  current_start_ns_ = now;
  return previous;
}

void CallPhases::finish(int64_t end_ns) {
  close(end_ns);
  current_ = CallPhase::kMoving;
  current_start_ns_ = end_ns;
}

}  // namespace dist
