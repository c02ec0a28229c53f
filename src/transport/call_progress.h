// Where a communicator is in its sequence of calls, readable from another
// thread: what a peer's progress query (Context::query_progress) is told.
// Written by the thread running the calls with plain stores (one call at a
// time), read by the context's monitor thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace dist {

struct CallProgress {
  std::atomic<uint64_t> started{0};   // calls begun; the current one is #started-1 while started > finished
  std::atomic<uint64_t> finished{0};  // calls ended, either way
  std::atomic<int32_t> kind{-1};      // the last begun call's kind (collectives' CollectiveKind)

  void begin(uint64_t seq, int32_t call_kind) {
    kind.store(call_kind, std::memory_order_relaxed);
    started.store(seq + 1, std::memory_order_release);
  }
  void end(uint64_t seq) { finished.store(seq + 1, std::memory_order_release); }
};

// What a member said of its progress on a communicator.
struct MemberProgress {
  bool answered = false;
  uint64_t started = 0;
  uint64_t finished = 0;
  int32_t kind = -1;
};

}  // namespace dist
