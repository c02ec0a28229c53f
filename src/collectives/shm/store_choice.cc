#include "collectives/shm/store_choice.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dist {

namespace {

// Calls k < kFirstTrials of a class alternate between the two; after them,
// calls k % kTrialPeriod == 0 try the kind that is not the faster: 1 call in
// 32 costs what the slower kind costs (up to 2.5x at 1 MiB here), and a
// change of mode is followed within 64 calls (6 ms at 1 MiB).
constexpr uint64_t kFirstTrials = 6;
constexpr uint64_t kTrialPeriod = 32;

int fixed_from_environment() {
  const char* setting = std::getenv("DIST_SHM_STREAM_STORES");
  if (setting == nullptr) return -1;
  if (std::strcmp(setting, "0") == 0) return 0;
  if (std::strcmp(setting, "1") == 0) return 1;
  return -1;  // anything else: chosen per call, the default
}

int size_class_of(size_t bytes) {
  int c = 0;
  while (bytes > 1 && c < 63) {
    bytes >>= 1;
    ++c;
  }
  return c;
}

}  // namespace

StoreChoice::StoreChoice() : fixed_(fixed_from_environment()) {}

StoreChoice::StoreChoice(bool streamed) : fixed_(streamed ? 1 : 0) {}

int64_t StoreChoice::Tries::median() const {
  // Of two, the lower: a call slowed by something else says less.
  switch (count) {
    case 0: return INT64_MAX;  // never timed (its calls failed): not chosen
    case 1: return ns[0];
    case 2: return std::min(ns[0], ns[1]);
    default: return std::max(std::min(ns[0], ns[1]), std::min(std::max(ns[0], ns[1]), ns[2]));
  }
}

StoreChoice::Call StoreChoice::choose(size_t bytes) {
  Call call;
  if (fixed_ >= 0) {
    call.streamed = fixed_ == 1;
    return call;
  }
  call.size_class = size_class_of(bytes);
  SizeClass& c = classes_[call.size_class];
  const uint64_t k = c.calls++;
  call.timed = true;
  const bool streamed_faster = c.tries[1].median() < c.tries[0].median();
  if (k < kFirstTrials) {
    call.streamed = (k & 1) != 0;
  } else if (k % kTrialPeriod == 0) {
    call.streamed = !streamed_faster;  // a try of the other
  } else {
    call.streamed = streamed_faster;
  }
  return call;
}

void StoreChoice::took(const Call& call, int64_t ns) {
  if (!call.timed) return;
  Tries& tries = classes_[call.size_class].tries[call.streamed ? 1 : 0];
  tries.ns[tries.next] = ns;
  tries.next = (tries.next + 1) % kSamples;
  tries.count = std::min(tries.count + 1, kSamples);
}

ChosenStores::ChosenStores(StoreChoice& choice, size_t bytes) : choice_(choice), call_(choice.choose(bytes)) {
  if (call_.timed) start_ = std::chrono::steady_clock::now();
}

void ChosenStores::finished() {
  if (!call_.timed) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
  choice_.took(call_, ns.count());
}

}  // namespace dist
