// Which stores a rank writes chunks into its slot with, call by call: ordinary
// ones, or non-temporal ones (stream_store, memory_copy.h).
//
// This machine runs in two speed modes and switches between them within
// seconds (bench/README.md, "What the slow mode is"). In the fast mode
// ordinary stores into a slot are faster (a 1 MiB broadcast 54-58 us against
// 76-105 streamed); in the slow mode an ordinary store to a line the other
// core has just read waits for that line, and non-temporal ones win by as much
// (180-223 against 76-105). No fixed choice is right in both, so each rank
// chooses per call from what its recent calls of the same size class took
// (timed_choice.h). Only how a rank writes its own slot depends on it, so
// ranks never need to agree.
//
// DIST_SHM_STREAM_STORES=0 or 1 fixes the choice (ordinary, non-temporal).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "collectives/shm/timed_choice.h"

namespace dist {

class StoreChoice {
 public:
  // What one call uses.
  struct Call {
    bool streamed = false;
    bool timed = false;  // its time counts towards the choice
    int size_class = 0;
  };
  // With the choice DIST_SHM_STREAM_STORES fixes, if it does.
  StoreChoice();
  // Always ordinary (false) or always streamed (true), whatever the environment says.
  explicit StoreChoice(bool streamed);

  Call choose(size_t bytes);
  // A call's time (ignored where it was not timed).
  void took(const Call& call, int64_t ns);

 private:
  int fixed_ = -1;  // -1: chosen per call; 0 or 1: always that
  TimedChoice learned_;  // second: streamed
};

// The stores of one call of an algorithm: the choice, and the call's time from
// the making of this to finished() (a call that fails teaches nothing).
class ChosenStores {
 public:
  ChosenStores(StoreChoice& choice, size_t bytes);
  bool streamed() const { return call_.streamed; }
  void finished();

 private:
  StoreChoice& choice_;
  StoreChoice::Call call_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace dist
