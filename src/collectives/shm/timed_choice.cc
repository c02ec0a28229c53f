#include "collectives/shm/timed_choice.h"

#include <algorithm>

namespace dist {

namespace {

// Calls k < kFirstTrials of a class alternate between the two; after them,
// calls k % kTrialPeriod == 0 try the way that is not the faster: 1 call in
// 32 costs what the slower way costs (up to 2.5x at 1 MiB here, for stores),
// and a change of mode is followed within 64 calls (6 ms at 1 MiB).
constexpr uint64_t kFirstTrials = 6;
constexpr uint64_t kTrialPeriod = 32;

}  // namespace

int TimedChoice::size_class_of(size_t bytes) {
  int c = 0;
  while (bytes > 1 && c < kClasses - 1) {
    bytes >>= 1;
    ++c;
  }
  return c;
}

int64_t TimedChoice::Tries::median() const {
  // Of two, the lower: a call slowed by something else says less.
  switch (count) {
    case 0: return INT64_MAX;  // never timed (its calls failed): not chosen
    case 1: return ns[0];
    case 2: return std::min(ns[0], ns[1]);
    default: return std::max(std::min(ns[0], ns[1]), std::min(std::max(ns[0], ns[1]), ns[2]));
  }
}

TimedChoice::Call TimedChoice::choose(size_t bytes) {
  Call call;
  call.size_class = size_class_of(bytes);
  SizeClass& c = classes_[call.size_class];
  const uint64_t k = c.calls++;
  const bool second_faster = c.tries[1].median() < c.tries[0].median();
  if (k < kFirstTrials) {
    call.second = (k & 1) != 0;
  } else if (k % kTrialPeriod == 0) {
    call.second = !second_faster;  // a try of the other
  } else {
    call.second = second_faster;
  }
  return call;
}

void TimedChoice::took(const Call& call, int64_t ns) {
  Tries& tries = classes_[call.size_class].tries[call.second ? 1 : 0];
  tries.ns[tries.next] = ns;
  tries.next = (tries.next + 1) % kSamples;
  tries.count = std::min(tries.count + 1, kSamples);
}

}  // namespace dist
