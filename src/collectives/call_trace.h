// What a communicator notes of each call it runs: its counters
// (call_stats.h), its flight recorder's entry (flight_recorder.h), its time
// when timing is on, and, while a timeline records, an event with its phases
// (base/call_phases.h). Made at the call's start in
// the thread that runs it; finish() once it ended, either way.
#pragma once

#include <cstdint>
#include <optional>

#include "base/call_phases.h"
#include "base/status.h"
#include "collectives/call_stats.h"
#include "collectives/collective_call.h"
#include "collectives/path.h"

namespace dist {

class FlightRecorder;
class Timeline;

struct CallTraceTarget {
  CallStats* stats = nullptr;
  FlightRecorder* recorder = nullptr;
  bool timing = false;
  Timeline* timeline = nullptr;  // null: none records
  uint32_t lane = 0;             // the communicator's lane on it
  uint32_t comm_id = 0;
};

class CallTrace {
 public:
  CallTrace(const CallTraceTarget& target, const CollectiveCall& call, uint64_t seq);
  ~CallTrace();
  CallTrace(const CallTrace&) = delete;
  CallTrace& operator=(const CallTrace&) = delete;

  // Counts the call under `algorithm` on `path` (with its outcome), and
  // records its event.
  void finish(Status status, Path path, const char* algorithm);
  // A call refused for its arguments: only the flight recorder notes it (failed).
  void refuse(Status status);

 private:
  // Whether the call was timed: its start was read.
  bool timed() const { return start_ns_ != 0; }

  const CallTraceTarget& target_;
  const CollectiveCall& call_;
  uint64_t seq_;
  int64_t start_ns_ = 0;  // the steady clock's, through base/fast_clock.h
  std::optional<CallPhases> phases_;
  CallPhases** phases_slot_ = nullptr;  // this thread's slot while it holds &*phases_
};

}  // namespace dist
