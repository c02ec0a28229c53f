// Which of two ways to do a call, learned from the times of the same
// process's recent calls of the same size class (a power of two).
//
// It keeps the last three times of each way and takes the way whose median is
// lower; the first six calls of a class alternate, and every 32nd call after
// them tries the other way, so that a change of the machine's speed mode
// (bench/README.md, "What the slow mode is") shows within about 64 calls. A
// call that failed is not timed, and a way never timed is never preferred.
//
// Used by StoreChoice (each rank's stores, no agreement needed) and by
// AgreedChoice (an algorithm rank 0 chooses for every rank).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dist {

class TimedChoice {
 public:
  // What one call does.
  struct Call {
    bool second = false;  // the second way, else the first
    int size_class = 0;
  };

  // The size class of `bytes`: the highest set bit, 0 to kClasses - 1.
  static int size_class_of(size_t bytes);
  static constexpr int kClasses = 64;

  Call choose(size_t bytes);
  // A call's time; only calls that succeeded should report one.
  void took(const Call& call, int64_t ns);

 private:
  static constexpr int kSamples = 3;   // Tries::median() takes the middle one
  struct Tries {
    int64_t ns[kSamples] = {0, 0, 0};
    int count = 0;  // samples taken, up to kSamples
    int next = 0;   // where the next goes
    int64_t median() const;
  };
  struct SizeClass {
    uint64_t calls = 0;
    Tries tries[2];  // first, second
  };
  SizeClass classes_[kClasses];
};

}  // namespace dist
