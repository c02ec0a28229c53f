// A communicator's flight recorder: its last calls in a ring (kind, dtype,
// count, op, root, the path and algorithm that ran them, how they ended and,
// when timing is on, when and how long), kept always, so that a job that
// hangs or fails can say what each rank was doing (dist_context_dump, or a
// signal: transport/context.h). Written by the thread running the calls, one
// at a time, with plain stores; read from any thread (a slot being written
// reads as in flight).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "collectives/path.h"
#include "collectives/signature.h"

namespace dist {

class FlightRecorder {
 public:
  // Calls kept: DIST_FLIGHT_RECORDER_ENTRIES (default 256; 0 keeps none),
  // rounded up to a power of two.
  static size_t entries_from_environment();

  explicit FlightRecorder(size_t entries);
  void begin(uint64_t seq, const CallSignature& signature, int64_t start_ns);
  void end(uint64_t seq, Status status, Path path, const char* algorithm, int64_t end_ns);
  // The kept calls, oldest first: [{"seq", "kind", "dtype", "count", "op",
  // "root", "state": "in flight"|"done"|"failed", "status", "path",
  // "algorithm", "start_us", "duration_us"}] (times only when timed; path and
  // algorithm once one took the call).
  Json entries() const;

 private:
  // One cache line, written with few stores: begin publishes five, end
  // three (what end writes is read only once its outcome says it ended).
  struct alignas(64) Slot {
    std::atomic<uint64_t> seq_plus_one{0};  // 0: never used
    std::atomic<uint64_t> call{0};          // kind, dtype and op (a byte each), root (the high 32 bits)
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> start_ns{0};
    std::atomic<uint64_t> outcome{0};  // state (0 in flight, 1 done, 2 failed), path (a byte each), status (high 32)
    std::atomic<const char*> algorithm{nullptr};
    std::atomic<int64_t> end_ns{0};
  };
  std::unique_ptr<Slot[]> slots_;
  size_t size_;  // a power of two (or 0): a mask finds the slot, not a division
  size_t mask_;
};

}  // namespace dist
