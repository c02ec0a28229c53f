// The steady clock's nanoseconds at a fraction of clock_gettime's cost,
// for what stamps every call (a timeline's events and phases, the call
// timing of dist_comm_stats): an 8-byte call on one host lasts a few hundred
// nanoseconds, and on this project's virtual machines one clock_gettime
// takes 25-45 of them, a bare time-stamp-counter read 10-20.
//
// Where Linux itself keeps time by the time-stamp counter (clocksource
// "tsc", x86-64), the counter is read and converted with a rate measured
// against the steady clock: first over a short spin, then again at every
// re-anchoring (at growing intervals up to about 50 ms), each time over
// everything since the first reading, so the estimate keeps improving.
// A re-anchoring does not set the clock back, and readings stay within a
// few microseconds of steady_clock (tests/test_fast_clock). Anywhere else,
// or once a re-anchoring finds the counter more than kFastClockMostDrift
// (plus a thousandth of the time since the last anchor) off the steady
// clock (a warning says so), it is steady_clock; DIST_FAST_CLOCK=0 makes it
// steady_clock always (to compare the two).
#pragma once

#include <cstdint>

namespace dist {

// The steady clock (CLOCK_MONOTONIC) in nanoseconds.
int64_t fast_steady_ns();

// Whether fast_steady_ns() reads the time-stamp counter (else steady_clock),
// as decided at the first reading.
bool fast_clock_uses_tsc();

// How far from the steady clock a re-anchoring may find the counter's
// reading before the counter is given up for the rest of the process.
constexpr int64_t kFastClockMostDrift = 200000;

// The counter's conversion as plain arithmetic, apart from any counter
// (tests/test_fast_clock checks it on made-up readings).
struct CounterReading {
  uint64_t ticks;  // the counter
  int64_t ns;      // the steady clock at the same moment
};
constexpr int kCounterRateShift = 32;
struct CounterAnchor {
  uint64_t ticks;
  int64_t ns;
  int64_t rate;         // nanoseconds per tick << kCounterRateShift
  uint64_t next_ticks;  // when it is renewed
};
// The steady clock's rate against the counter between two readings; 0 when
// `to` is not after `from` on both.
int64_t counter_rate(const CounterReading& from, const CounterReading& to);
// `ticks` in the steady clock's nanoseconds by `anchor` (ticks before the
// anchor's give earlier times).
int64_t counter_ns(const CounterAnchor& anchor, uint64_t ticks);
// The anchor that follows `old` at the fresh reading `now`, with the rate
// measured since `first` and the next renewal `interval` ticks on. Its time
// is the steady clock's, unless `old` converted `now` later than that: then
// the later, but no later than the end of `old` (so the clock is not set back
// against any reading `old` gave, and a pause's error is not carried on),
// with a rate lowered by at most a thousandth to close the gap over the
// interval. False where the counter is no clock: `old` off by more than
// kFastClockMostDrift plus a thousandth of the time since it, or a counter or
// steady clock that did not advance since `first`.
bool renew_counter_anchor(const CounterAnchor& old, const CounterReading& first, const CounterReading& now,
                          uint64_t interval, CounterAnchor* renewed);

}  // namespace dist
