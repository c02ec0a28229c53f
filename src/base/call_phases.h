// Where a traced collective's time goes: waiting for peers, reducing, or
// moving data (everything else). While a timeline records, the call's thread
// holds a CallPhases; the places that wait or reduce mark their phase with a
// PhaseScope, which without one costs a thread-local load. Waits mark
// themselves only once they actually have to wait, reductions only when they
// are large enough for two clock reads not to matter (kTracedReduceBytes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dist {

enum class CallPhase : uint8_t { kMoving = 0, kWaiting = 1, kReducing = 2 };

// "moving data", "waiting for peers", "reducing".
const char* name(CallPhase phase);

// Reductions smaller than this count as moving data.
constexpr size_t kTracedReduceBytes = 16 << 10;

class CallPhases {
 public:
  struct Interval {
    CallPhase phase;
    int64_t start_ns;
    int64_t end_ns;
  };
  // Intervals kept per call (beyond them only the totals grow); intervals of
  // one phase closer than kMergeGapNs are kept as one.
  static constexpr size_t kMaxIntervals = 16;
  static constexpr int64_t kMergeGapNs = 2000;

  explicit CallPhases(int64_t start_ns) : current_start_ns_(start_ns) {}
  // Switches to `phase` now; returns the phase it was in.
  CallPhase enter(CallPhase phase);
  // Closes the last interval at `end_ns`.
  void finish(int64_t end_ns);

  // The waiting and reducing intervals, in order.
  struct Intervals {
    const Interval* first;
    const Interval* last;
    const Interval* begin() const { return first; }
    const Interval* end() const { return last; }
  };
  Intervals intervals() const { return {intervals_, intervals_ + interval_count_}; }
  int64_t total_ns(CallPhase phase) const { return totals_[static_cast<int>(phase)]; }

 private:
  void close(int64_t now_ns);

  CallPhase current_ = CallPhase::kMoving;
  int64_t current_start_ns_;
  int64_t totals_[3] = {0, 0, 0};
  // Kept in place: a traced call allocates nothing.
  Interval intervals_[kMaxIntervals];
  size_t interval_count_ = 0;
};

// How many timelines are open in the whole process (base/timeline.h keeps
// the count): while none is, the marks below read this one word and stop.
// (Not initial-exec TLS, which would be one load too: a library loaded late,
// as Python loads it after torch, may find no static TLS left for it.) A
// count of timelines rather than of traced calls spares each traced call two
// atomic read-modify-writes.
extern std::atomic<int> g_open_timelines;

// This thread's slot for the phases of the call it runs (null when it runs
// no traced call): a traced call sets it at its start and clears it at its
// end through the one address, one thread-local access for both.
CallPhases** current_call_phases_slot();

// The current call's phases, or null at the cost of one load when no
// timeline is open.
inline CallPhases* recording_call_phases() {
  return g_open_timelines.load(std::memory_order_relaxed) == 0 ? nullptr : *current_call_phases_slot();
}

// Marks `phase` for its scope in the current call, if one is traced.
class PhaseScope {
 public:
  explicit PhaseScope(CallPhase phase) : phases_(recording_call_phases()) {
    if (phases_ != nullptr) previous_ = phases_->enter(phase);
  }
  ~PhaseScope() {
    if (phases_ != nullptr) phases_->enter(previous_);
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  CallPhases* phases_;
  CallPhase previous_ = CallPhase::kMoving;
};

// A wait's mark, begun only once it has to wait (begin() may be called on
// every turn of its loop; only the first does anything).
class WaitingPhase {
 public:
  WaitingPhase() = default;
  void begin() {
    if (begun_) return;
    begun_ = true;
    phases_ = recording_call_phases();
    if (phases_ != nullptr) previous_ = phases_->enter(CallPhase::kWaiting);
  }
  ~WaitingPhase() {
    if (phases_ != nullptr) phases_->enter(previous_);
  }
  WaitingPhase(const WaitingPhase&) = delete;
  WaitingPhase& operator=(const WaitingPhase&) = delete;

 private:
  bool begun_ = false;
  CallPhases* phases_ = nullptr;
  CallPhase previous_ = CallPhase::kMoving;
};

}  // namespace dist
