// base/fast_clock.h: the steady clock read through the time-stamp counter.
// Its readings lie between steady_clock readings taken around them (within
// a few microseconds of calibration error), a second after the first
// reading, across the re-anchorings of the next half second, in one thread
// and in several at once; one thread's readings never go backwards; it reads the counter exactly where the
// kernel keeps time by it, and not with DIST_FAST_CLOCK=0 (ctest runs the
// suite with that setting too). The conversion and the renewal of its
// anchor are checked as arithmetic on made-up readings as well.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/fast_clock.h"
#include "internal_test_support.h"

namespace {

// Calibration error allowed beside steady_clock: the counter's first rate
// comes from a 0.2 ms spin, so its error over the first intervals is some
// hundreds of nanoseconds; a conversion off by more is wrong.
constexpr int64_t kSlackNs = 20000;
constexpr auto kCheckedFor = std::chrono::milliseconds(500);

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool forced_off() {
  const char* setting = std::getenv("DIST_FAST_CLOCK");
  return setting != nullptr && std::strcmp(setting, "0") == 0;
}

bool kernel_keeps_time_by_tsc() {
  std::ifstream file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(file >> name) && name == "tsc";
}

struct Check {
  long readings = 0;
  // How far a reading fell before the steady clock's before it, and came
  // after the one after it (negative: inside by that much, every time).
  int64_t worst_before = INT64_MIN;
  int64_t worst_after = INT64_MIN;
  int64_t worst_backwards = 0;

  // One reading, with the steady clock's just before and just after it.
  void add(int64_t before, int64_t reading, int64_t after) {
    ++readings;
    worst_before = std::max(worst_before, before - reading);
    worst_after = std::max(worst_after, reading - after);
  }
};

// Readings bracketed by the steady clock for kCheckedFor; with `pause`, a
// short sleep now and then so that readings fall at many points of the
// re-anchoring intervals.
Check check_readings(bool pause) {
  Check check;
  int64_t previous = dist::fast_steady_ns();
  const auto until = std::chrono::steady_clock::now() + kCheckedFor;
  while (std::chrono::steady_clock::now() < until) {
    const int64_t before = steady_ns();
    const int64_t reading = dist::fast_steady_ns();
    const int64_t after = steady_ns();
    check.add(before, reading, after);
    check.worst_backwards = std::max(check.worst_backwards, previous - reading);
    previous = reading;
    if (pause && check.readings % 4096 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  return check;
}

void expect_close(const char* what, const Check& check) {
  print_message("%s: %ld readings; farthest outside the steady clock's around them: %lld ns before, "
                "%lld ns after (negative: inside)\n",
                what, check.readings, static_cast<long long>(check.worst_before),
                static_cast<long long>(check.worst_after));
  if (check.worst_before > kSlackNs || check.worst_after > kSlackNs) {
    fail_msg("%s: a reading was %lld ns before / %lld ns after the steady clock around it (allowed %lld)", what,
             static_cast<long long>(check.worst_before), static_cast<long long>(check.worst_after),
             static_cast<long long>(kSlackNs));
  }
}

// The first reading anchors the counter with a rate from a 0.2 ms spin; a
// reading a second later, with nothing read between, still lies within the
// steady clock's around it (a stale anchor is renewed before it converts),
// and the counter is still in use (the renewal did not find it drifting).
void test_first_reading_after_a_pause(void**) {
  const bool counter = dist::fast_clock_uses_tsc();  // the first reading
  std::this_thread::sleep_for(std::chrono::seconds(1));
  Check check;
  const int64_t before = steady_ns();
  const int64_t reading = dist::fast_steady_ns();
  const int64_t after = steady_ns();
  check.add(before, reading, after);
  expect_close("a second after the first reading", check);
  assert_int_equal(dist::fast_clock_uses_tsc(), counter);
}

void test_one_thread(void**) {
  const Check check = check_readings(true);
  expect_close("one thread", check);
  if (check.worst_backwards > 0) {
    fail_msg("a reading was %lld ns before the one just before it", static_cast<long long>(check.worst_backwards));
  }
}

void test_threads_at_once(void**) {
  std::vector<Check> checks(3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < checks.size(); ++i) {
    threads.emplace_back([&checks, i] { checks[i] = check_readings(i % 2 == 0); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Check& check : checks) expect_close("threads at once", check);
}

// The counter is read where (and only where) the kernel keeps time by it,
// unless DIST_FAST_CLOCK=0; and it is still in use after the checks above,
// so they checked the counter's conversion, not steady_clock.
void test_source(void**) {
#if defined(__x86_64__)
  const bool expected = !forced_off() && kernel_keeps_time_by_tsc();
#else
  const bool expected = false;
#endif
  print_message("clocksource tsc: %s, DIST_FAST_CLOCK=0: %s, counter in use: %s\n",
                kernel_keeps_time_by_tsc() ? "yes" : "no", forced_off() ? "yes" : "no",
                dist::fast_clock_uses_tsc() ? "yes" : "no");
  assert_int_equal(dist::fast_clock_uses_tsc(), expected);
}

// The arithmetic on made-up readings: a counter of exactly 2.5 GHz. (Rates
// are in units of 2^-32 ns per tick, 0.4 ns being about 1.7e9 of them.)
constexpr int64_t kTicksPerUs = 2500;
const int64_t kRate = (int64_t{1} << dist::kCounterRateShift) * 2 / 5;  // 0.4 ns per tick
constexpr uint64_t kInterval = uint64_t{1} << 27;

void test_rate_and_conversion(void**) {
  const dist::CounterReading first{1000, 5000};
  const dist::CounterReading later{1000 + 2500000000ull, 5000 + 1000000000};  // a second on
  const int64_t rate = dist::counter_rate(first, later);
  assert_true(std::llabs(rate - kRate) <= 1);
  const dist::CounterAnchor anchor{1000, 5000, rate, 1000 + kInterval};
  assert_true(std::llabs(dist::counter_ns(anchor, later.ticks) - later.ns) <= 1);
  // Ticks before the anchor give earlier times.
  assert_true(std::llabs(dist::counter_ns(anchor, 1000 - 2500) - (5000 - 1000)) <= 1);
  // Nothing advanced, or went backwards: no rate.
  assert_int_equal(dist::counter_rate(first, first), 0);
  assert_int_equal(dist::counter_rate(later, first), 0);
  assert_int_equal(dist::counter_rate(first, dist::CounterReading{later.ticks, first.ns}), 0);
}

void test_renewal_on_time(void**) {
  const dist::CounterReading first{0, 0};
  const dist::CounterAnchor old{0, 0, kRate, kInterval};
  const dist::CounterReading now{kInterval + 100, static_cast<int64_t>((kInterval + 100) * 2 / 5)};  // to 0.2 ns
  dist::CounterAnchor renewed{};
  assert_true(dist::renew_counter_anchor(old, first, now, kInterval, &renewed));
  assert_true(renewed.ticks == now.ticks);
  assert_int_equal(renewed.ns, now.ns);
  assert_true(std::llabs(renewed.rate - kRate) <= 8);  // the 0.2 ns of truncation over 54 ms: 4e-9
  assert_true(renewed.next_ticks == now.ticks + kInterval);
}

// The old rate a little fast: the new anchor keeps the old conversion's
// time (no step back) and a rate at most a thousandth slower closes the gap.
void test_renewal_behind_the_old_rate(void**) {
  const dist::CounterReading first{0, 0};
  const dist::CounterAnchor old{0, 0, kRate + kRate / 100000, 2 * kInterval};  // 10 ppm fast
  const dist::CounterReading now{kInterval, static_cast<int64_t>(kInterval * 2 / 5)};
  const int64_t predicted = dist::counter_ns(old, now.ticks);
  assert_true(predicted > now.ns);
  dist::CounterAnchor renewed{};
  assert_true(dist::renew_counter_anchor(old, first, now, kInterval, &renewed));
  assert_int_equal(renewed.ns, predicted);
  assert_true(renewed.rate < kRate && renewed.rate >= kRate - kRate / 1000 - 1);
  // By the next renewal the gap is closed (to rounding).
  const uint64_t next = now.ticks + kInterval;
  assert_true(std::llabs(dist::counter_ns(renewed, next) - static_cast<int64_t>(next * 2 / 5)) <= 2);
}

// After a pause with a rough first rate: the new anchor is the steady
// clock's time, not the old rate's extrapolation, once that lies past the
// end of the old anchor.
void test_renewal_after_a_pause(void**) {
  const dist::CounterReading first{0, 0};
  const dist::CounterAnchor old{0, 0, kRate + kRate / 10000, uint64_t{1} << 21};  // 100 ppm fast
  const uint64_t ten_seconds = 10 * 1000000 * kTicksPerUs;
  const dist::CounterReading now{ten_seconds, 10000000000};
  assert_true(dist::counter_ns(old, now.ticks) - now.ns > 900000);  // 1 ms ahead by now
  dist::CounterAnchor renewed{};
  assert_true(dist::renew_counter_anchor(old, first, now, kInterval, &renewed));
  assert_int_equal(renewed.ns, now.ns);
  assert_true(std::llabs(renewed.rate - kRate) <= 1);
}

// A counter that is no clock is given up: one off by more than the
// allowance, one that stood still.
void test_renewal_gives_up(void**) {
  const dist::CounterReading first{0, 0};
  const dist::CounterAnchor old{0, 0, kRate, kInterval};
  dist::CounterAnchor renewed{};
  // 300 us off a millisecond after the anchor (allowed: 200 us + 1 us).
  const dist::CounterReading jumped{1000 * kTicksPerUs, 1000000 - 300000};
  assert_false(dist::renew_counter_anchor(old, first, jumped, kInterval, &renewed));
  // The same 300 us two hundred seconds after it lie within 200 us + 200 ms.
  const uint64_t later = uint64_t{200} * 1000000 * kTicksPerUs;
  const dist::CounterReading slewed{later, 200000000000 - 300000};
  assert_true(dist::renew_counter_anchor(old, first, slewed, kInterval, &renewed));
  // A counter that did not advance since the first reading.
  const dist::CounterAnchor stuck{0, 0, kRate, kInterval};
  assert_false(dist::renew_counter_anchor(stuck, first, dist::CounterReading{0, 100}, kInterval, &renewed));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_reading_after_a_pause),
      cmocka_unit_test(test_rate_and_conversion),
      cmocka_unit_test(test_renewal_on_time),
      cmocka_unit_test(test_renewal_behind_the_old_rate),
      cmocka_unit_test(test_renewal_after_a_pause),
      cmocka_unit_test(test_renewal_gives_up),
      cmocka_unit_test(test_one_thread),
      cmocka_unit_test(test_threads_at_once),
      cmocka_unit_test(test_source),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
