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
// few microseconds of steady_clock (tests/test_fast_clock). Anywhere else, or when a re-anchoring finds the counter
// more than kFastClockMostDrift (plus a thousandth of the time since the
// last anchor) off the steady clock, it is steady_clock;
// DIST_FAST_CLOCK=0 makes it steady_clock always (to compare the two).
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

}  // namespace dist
