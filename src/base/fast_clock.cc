#include "base/fast_clock.h"

#include "base/log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace dist {

namespace {

// Products of ticks and rates need more than 64 bits (__extension__: a GCC
// and Clang type, which -pedantic would otherwise flag).
__extension__ typedef __int128 Wide;

}  // namespace

int64_t counter_rate(const CounterReading& from, const CounterReading& to) {
  if (to.ticks <= from.ticks || to.ns <= from.ns) return 0;
  return static_cast<int64_t>((static_cast<Wide>(to.ns - from.ns) << kCounterRateShift) /
                              static_cast<Wide>(to.ticks - from.ticks));
}

int64_t counter_ns(const CounterAnchor& anchor, uint64_t ticks) {
  const auto elapsed = static_cast<int64_t>(ticks - anchor.ticks);  // negative for a counter read earlier
  return anchor.ns + static_cast<int64_t>((static_cast<Wide>(elapsed) * anchor.rate) >> kCounterRateShift);
}

bool renew_counter_anchor(const CounterAnchor& old, const CounterReading& first, const CounterReading& now,
                          uint64_t interval, CounterAnchor* renewed) {
  const int64_t predicted = counter_ns(old, now.ticks);
  // The old rate's error grows with the time since its anchor (and the
  // steady clock may be slewed by up to 500 ppm): what is allowed grows with
  // it, by a thousandth.
  const int64_t allowed = kFastClockMostDrift + std::max<int64_t>(now.ns - old.ns, 0) / 1000;
  if (std::llabs(predicted - now.ns) > allowed) return false;
  const int64_t measured = counter_rate(first, now);
  if (measured <= 0) return false;
  // No reading converted by the old anchor came past its end (a later one
  // renewed it first, or read the steady clock).
  const int64_t anchor_ns = std::max(now.ns, std::min(predicted, counter_ns(old, old.next_ticks)));
  int64_t rate = measured;
  const int64_t ahead = anchor_ns - now.ns;
  if (ahead > 0) {
    const auto interval_ns = static_cast<int64_t>((static_cast<Wide>(interval) * measured) >> kCounterRateShift);
    // At most a thousandth slower, so the clock never stands still.
    const auto slowed = static_cast<int64_t>(static_cast<Wide>(measured) * ahead / std::max<int64_t>(interval_ns, 1));
    rate = measured - std::min(slowed, measured / 1000);
  }
  *renewed = CounterAnchor{now.ticks, anchor_ns, rate, now.ticks + interval};
  return true;
}

namespace {

int64_t steady_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

enum class Source : int { kUndecided = 0, kCounter = 1, kSteadyClock = 2 };
std::atomic<int> g_source{static_cast<int>(Source::kUndecided)};

#if defined(__x86_64__)

// Re-anchoring intervals: the first soon (the first rate comes from a short
// spin), then doubling up to about 50 ms at this kind of machine's 2-3 GHz.
constexpr uint64_t kFirstIntervalTicks = uint64_t{1} << 21;
constexpr uint64_t kLongestIntervalTicks = uint64_t{1} << 27;
constexpr int64_t kFirstSpinNs = 200000;

bool kernel_keeps_time_by_counter() {
  std::ifstream file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(file >> name) && name == "tsc";
}

// Both clocks at one moment: the counter read on either side of the steady
// clock, best of a few tries (preemption between the reads spoils one).
CounterReading read_both() {
  CounterReading best{0, 0};
  uint64_t best_spread = ~uint64_t{0};
  for (int attempt = 0; attempt < 5; ++attempt) {
    const uint64_t before = __rdtsc();
    const int64_t ns = steady_clock_ns();
    const uint64_t after = __rdtsc();
    if (after - before < best_spread) {
      best_spread = after - before;
      best = CounterReading{before + (after - before) / 2, ns};
    }
  }
  return best;
}

// The conversion in use (a CounterAnchor) is published as a sequence lock:
// readers take a consistent copy, retrying while a re-anchoring writes it.
class CounterClock {
 public:
  // False when the counter does not behave as a clock here.
  bool start() {
    first_ = read_both();
    while (steady_clock_ns() - first_.ns < kFirstSpinNs) {
    }
    const CounterReading second = read_both();
    const int64_t rate = counter_rate(first_, second);
    // Plausible counters tick at 0.2-20 GHz.
    if (rate <= (int64_t{1} << kCounterRateShift) / 20 || rate >= (int64_t{5} << kCounterRateShift)) return false;
    interval_ = kFirstIntervalTicks;
    publish(CounterAnchor{second.ticks, second.ns, rate, second.ticks + interval_});
    return true;
  }

  int64_t now() {
    const uint64_t ticks = __rdtsc();
    CounterAnchor anchor = current();
    if (ticks >= anchor.next_ticks) {
      // A stale anchor (perhaps from seconds ago, with the first spin's
      // rough rate) converts this reading only once it is renewed; a thread
      // that finds another renewing it reads the steady clock this once.
      if (!anchoring_.try_lock()) return steady_clock_ns();
      const bool kept = reanchor();
      anchoring_.unlock();
      if (!kept) return steady_clock_ns();
      anchor = current();
    }
    return counter_ns(anchor, ticks);
  }

 private:
  CounterAnchor current() const {
    for (;;) {
      const uint32_t version = version_.load(std::memory_order_acquire);
      if ((version & 1U) == 0) {
        const CounterAnchor anchor{ticks_.load(std::memory_order_relaxed), ns_.load(std::memory_order_relaxed),
                                   rate_.load(std::memory_order_relaxed),
                                   next_ticks_.load(std::memory_order_relaxed)};
        std::atomic_thread_fence(std::memory_order_acquire);
        if (version_.load(std::memory_order_relaxed) == version) return anchor;
      }
    }
  }

  void publish(const CounterAnchor& anchor) {
    const uint32_t version = version_.load(std::memory_order_relaxed);
    version_.store(version + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    ticks_.store(anchor.ticks, std::memory_order_relaxed);
    ns_.store(anchor.ns, std::memory_order_relaxed);
    rate_.store(anchor.rate, std::memory_order_relaxed);
    next_ticks_.store(anchor.next_ticks, std::memory_order_relaxed);
    version_.store(version + 2, std::memory_order_release);
  }

  // Under anchoring_: a new anchor at a fresh reading of both clocks
  // (renew_counter_anchor); false when it gave the counter up.
  bool reanchor() {
    const CounterReading now = read_both();
    CounterAnchor renewed{};
    interval_ = std::min(interval_ * 2, kLongestIntervalTicks);
    const CounterAnchor old = current();
    if (!renew_counter_anchor(old, first_, now, interval_, &renewed)) {
      g_source.store(static_cast<int>(Source::kSteadyClock), std::memory_order_relaxed);
      // Once per process: timestamps get dearer from here on, and whoever
      // compares timings should know why.
      log_message(LogLevel::kWarn, "fast clock: the time-stamp counter read " +
                                       std::to_string(counter_ns(old, now.ticks) - now.ns) +
                                       " ns off the steady clock; timestamps use clock_gettime from now on");
      return false;
    }
    publish(renewed);
    return true;
  }

  std::atomic<uint32_t> version_{0};  // odd while an anchor is written
  std::atomic<uint64_t> ticks_{0};
  std::atomic<int64_t> ns_{0};
  std::atomic<int64_t> rate_{0};
  std::atomic<uint64_t> next_ticks_{0};
  std::mutex anchoring_;        // one thread re-anchors; the others convert meanwhile
  CounterReading first_{0, 0};  // written before the counter is in use
  uint64_t interval_ = 0;       // under anchoring_
};

CounterClock g_counter_clock;

#endif  // __x86_64__

Source decide() {
  static std::once_flag once;
  std::call_once(once, [] {
    Source source = Source::kSteadyClock;
#if defined(__x86_64__)
    const char* forced = std::getenv("DIST_FAST_CLOCK");
    const bool allowed = forced == nullptr || std::string(forced) != "0";
    if (allowed && kernel_keeps_time_by_counter() && g_counter_clock.start()) source = Source::kCounter;
#endif
    g_source.store(static_cast<int>(source), std::memory_order_release);
  });
  return static_cast<Source>(g_source.load(std::memory_order_acquire));
}

// The source decided, deciding it at the first call.
Source current_source() {
  const auto source = static_cast<Source>(g_source.load(std::memory_order_acquire));
  return source == Source::kUndecided ? decide() : source;
}

}  // namespace

int64_t fast_steady_ns() {
#if defined(__x86_64__)
  if (current_source() == Source::kCounter) return g_counter_clock.now();
#endif
  return steady_clock_ns();
}

bool fast_clock_uses_tsc() { return current_source() == Source::kCounter; }

}  // namespace dist
