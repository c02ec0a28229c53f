#include "collectives/call_trace.h"

#include "base/dtype.h"
#include "base/fast_clock.h"
#include "base/timeline.h"
#include "collectives/flight_recorder.h"

namespace dist {

namespace {

// Calls shorter than this get no phase spans (their totals are arguments).
constexpr int64_t kPhaseSpansMinNs = 1000000;

}  // namespace

CallTrace::CallTrace(const CallTraceTarget& target, const CollectiveCall& call, uint64_t seq)
    : target_(target), call_(call), seq_(seq) {
  // Read the clock only when timing is on: an 8-byte call on one host takes
  // a few clock reads' time.
  if (target.timing || target.timeline != nullptr) {
    start_ns_ = fast_steady_ns();
    if (target.timeline != nullptr) {
      phases_.emplace(start_ns_);
      phases_slot_ = current_call_phases_slot();
      *phases_slot_ = &*phases_;
    }
  }
  target.recorder->begin(seq, call.signature, start_ns_);
}

void CallTrace::refuse(Status status) { target_.recorder->end(seq_, status, Path::kSelf, nullptr, 0); }

CallTrace::~CallTrace() {
  // A call that ended without finish() (an exception) leaves no stale phases
  // behind; finish() has cleared them already.
  if (phases_slot_ != nullptr) *phases_slot_ = nullptr;
}

void CallTrace::finish(Status status, Path path, const char* algorithm) {
  const int64_t end_ns = timed() ? fast_steady_ns() : 0;
  const uint64_t bytes = counted_bytes(call_);
  target_.recorder->end(seq_, status, path, algorithm, end_ns);
  target_.stats->record(call_.signature.kind, path, algorithm, bytes, status == Status::kOk,
                        timed() ? end_ns - start_ns_ : -1);
  if (!phases_) return;
  *phases_slot_ = nullptr;
  phases_slot_ = nullptr;
  phases_->finish(end_ns);
  const CallSignature& s = call_.signature;
  TimelineCollective event;
  event.kind = name(s.kind);
  event.dtype = name(s.dtype);
  event.path = name(path);
  event.algorithm = algorithm;
  if (status != Status::kOk) event.status = status_name(status);
  event.start_ns = start_ns_;
  event.duration_ns = end_ns - start_ns_;
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
  if (end_ns - start_ns_ < kPhaseSpansMinNs) return;
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
