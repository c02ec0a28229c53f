#include "collectives/call_trace.h"

#include "base/dtype.h"
#include "base/timeline.h"
#include "collectives/flight_recorder.h"

namespace dist {

namespace {

// Calls shorter than this get no phase spans (their totals are arguments).
constexpr int64_t kPhaseSpansMinNs = 1000000;

int64_t steady_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

CallTrace::CallTrace(const CallTraceTarget& target, const CollectiveCall& call, uint64_t seq)
    : target_(target), call_(call), seq_(seq) {
  // Read the clock only when timing is on: an 8-byte call on one host takes
  // a few clock reads' time.
  if (target.timing || target.timeline != nullptr) {
    start_ = std::chrono::steady_clock::now();
    if (target.timeline != nullptr) {
      phases_.emplace(steady_ns(start_));
      set_current_call_phases(&*phases_);
      phases_current_ = true;
    }
  }
  target.recorder->begin(seq, call.signature, timed() ? steady_ns(start_) : 0);
}

void CallTrace::refuse(Status status) { target_.recorder->end(seq_, status, Path::kSelf, nullptr, 0); }

CallTrace::~CallTrace() {
  // A call that ended without finish() (an exception) leaves no stale phases
  // behind; finish() has cleared them already (a thread-local access each).
  if (phases_current_) set_current_call_phases(nullptr);
}

void CallTrace::finish(Status status, Path path, const char* algorithm) {
  const auto end = timed() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const uint64_t bytes = counted_bytes(call_);
  target_.recorder->end(seq_, status, path, algorithm, timed() ? steady_ns(end) : 0);
  target_.stats->record(call_.signature.kind, path, algorithm, bytes, status == Status::kOk,
                        timed() ? std::chrono::duration_cast<std::chrono::nanoseconds>(end - start_).count() : -1);
  if (!phases_) return;
  set_current_call_phases(nullptr);
  phases_current_ = false;
  const int64_t start_ns = steady_ns(start_), end_ns = steady_ns(end);
  phases_->finish(end_ns);
  const CallSignature& s = call_.signature;
  TimelineCollective event;
  event.kind = name(s.kind);
  event.dtype = name(s.dtype);
  event.path = name(path);
  event.algorithm = algorithm;
  if (status != Status::kOk) event.status = status_name(status);
  event.start_ns = start_ns;
  event.duration_ns = end_ns - start_ns;
  event.lane = target_.lane;
  event.comm = target_.comm_id;
  event.seq = seq_;
  event.bytes = bytes;
  event.waiting_ns = phases_->total_ns(CallPhase::kWaiting);
  event.reducing_ns = phases_->total_ns(CallPhase::kReducing);
  event.moving_ns = phases_->total_ns(CallPhase::kMoving);
  target_.timeline->record(event);
  // A short call's phases are its arguments alone: spans of a few
  // microseconds each would cost more to write than the call took.
  if (end_ns - start_ns < kPhaseSpansMinNs) return;
  for (const CallPhases::Interval& interval : phases_->intervals()) {
    TimelineEvent phase;
    phase.name = name(interval.phase);
    phase.category = "phase";
    phase.start_ns = interval.start_ns;
    phase.duration_ns = interval.end_ns - interval.start_ns;
    phase.lane = target_.lane;
    phase.add("seq", static_cast<int64_t>(seq_));
    target_.timeline->record(phase);
  }
}

}  // namespace dist
