// The per-call choice of stores (collectives/shm/store_choice.h): which calls
// use which stores, that the faster by its last three times wins, that the
// other is tried every 32nd call so that a change of the machine's mode is
// followed, that size classes learn apart, and that DIST_SHM_STREAM_STORES or
// the constructor fixes it.
#include <cstdlib>
#include <vector>

#include "collectives/shm/store_choice.h"
#include "internal_test_support.h"

namespace {

using dist::StoreChoice;

constexpr size_t k1MiB = 1 << 20;

// Runs `calls` calls of `bytes`, each taking `ordinary_ns` or `streamed_ns`
// by the stores it used; returns what each call used (1: streamed).
std::vector<int> run(StoreChoice& choice, size_t bytes, int calls, int64_t ordinary_ns, int64_t streamed_ns,
                     std::vector<int>* timed = nullptr) {
  std::vector<int> used;
  for (int i = 0; i < calls; ++i) {
    const StoreChoice::Call call = choice.choose(bytes);
    used.push_back(call.streamed ? 1 : 0);
    if (timed != nullptr) timed->push_back(call.timed ? 1 : 0);
    choice.took(call, call.streamed ? streamed_ns : ordinary_ns);
  }
  return used;
}

int count_streamed(const std::vector<int>& used, size_t from, size_t to) {
  int n = 0;
  for (size_t i = from; i < to; ++i) n += used[i];
  return n;
}

void test_tries_both_then_the_faster(void**) {
  unsetenv("DIST_SHM_STREAM_STORES");
  StoreChoice choice;
  std::vector<int> timed;
  // Streamed twice as fast (the slow mode).
  const std::vector<int> used = run(choice, k1MiB, 64, 200000, 100000, &timed);
  // The first six alternate, ordinary first; then streamed stores, but for
  // a try of ordinary ones every 32nd call. Every call is timed.
  for (int i = 0; i < 64; ++i) {
    assert_int_equal(timed[i], 1);
    assert_int_equal(used[i], i < 6 ? i % 2 : (i % 32 == 0 ? 0 : 1));
  }
}

void test_follows_a_change_of_mode(void**) {
  unsetenv("DIST_SHM_STREAM_STORES");
  StoreChoice choice;
  run(choice, k1MiB, 64, 200000, 100000);  // slow mode: streamed wins
  // The fast mode: ordinary stores now take less than two thirds as long.
  // Once two of the last three ordinary times say so (the tries at calls 64
  // and 96 of the class), ordinary stores win, and the streamed ones are
  // tried every 32nd call (128).
  const std::vector<int> used = run(choice, k1MiB, 96, 60000, 100000);
  assert_int_equal(count_streamed(used, 0, 33), 31);
  for (int i = 33; i < 96; ++i) assert_int_equal(used[i], i == 64 ? 1 : 0);
  // One slow call among fast ones does not turn it (the median of three).
  StoreChoice steady;
  run(steady, k1MiB, 64, 60000, 100000);
  std::vector<int> after;
  for (int i = 0; i < 48; ++i) {
    const StoreChoice::Call call = steady.choose(k1MiB);
    after.push_back(call.streamed ? 1 : 0);
    steady.took(call, call.streamed ? 100000 : (i == 5 ? 900000 : 60000));
  }
  assert_int_equal(count_streamed(after, 0, 48), 2);  // the tries at 64 and 96 only
}

void test_size_classes_learn_apart(void**) {
  unsetenv("DIST_SHM_STREAM_STORES");
  StoreChoice choice;
  run(choice, 256 << 10, 40, 50000, 20000);     // 256 KiB: streamed faster
  run(choice, 4 * k1MiB, 40, 600000, 1200000);  // 4 MiB: ordinary faster
  // Calls 40-71 of each class (300 KiB is in 256 KiB's): the try at 64.
  assert_int_equal(count_streamed(run(choice, 300 << 10, 32, 50000, 20000), 0, 32), 31);
  assert_int_equal(count_streamed(run(choice, 4 * k1MiB + 5, 32, 600000, 1200000), 0, 32), 1);
}

void test_fixed(void**) {
  setenv("DIST_SHM_STREAM_STORES", "1", 1);
  StoreChoice streamed;
  std::vector<int> timed;
  assert_int_equal(count_streamed(run(streamed, k1MiB, 40, 10, 1000, &timed), 0, 40), 40);
  assert_int_equal(count_streamed(timed, 0, 40), 0);  // nothing timed
  setenv("DIST_SHM_STREAM_STORES", "0", 1);
  StoreChoice ordinary;
  assert_int_equal(count_streamed(run(ordinary, k1MiB, 40, 1000, 10), 0, 40), 0);
  setenv("DIST_SHM_STREAM_STORES", "maybe", 1);  // not 0 or 1: chosen per call
  StoreChoice chosen;
  // All but the ordinary calls among the first six and the try at 32.
  assert_int_equal(count_streamed(run(chosen, k1MiB, 40, 1000, 10), 0, 40), 36);
  unsetenv("DIST_SHM_STREAM_STORES");
  StoreChoice always(true);
  assert_int_equal(count_streamed(run(always, k1MiB, 40, 10, 1000), 0, 40), 40);
}

// A call that failed is not timed: with no times of one kind, the other is
// taken, and the untimed one only tried.
void test_untimed_is_not_chosen(void**) {
  unsetenv("DIST_SHM_STREAM_STORES");
  StoreChoice choice;
  std::vector<int> used;
  for (int i = 0; i < 40; ++i) {
    const StoreChoice::Call call = choice.choose(k1MiB);
    used.push_back(call.streamed ? 1 : 0);
    if (!call.streamed) choice.took(call, 500000);  // every streamed call fails
  }
  // The streamed calls: 1, 3, 5 of the first six, and the try at 32.
  assert_int_equal(count_streamed(used, 0, 40), 4);
  assert_int_equal(used[32], 1);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tries_both_then_the_faster),
      cmocka_unit_test(test_follows_a_change_of_mode),
      cmocka_unit_test(test_size_classes_learn_apart),
      cmocka_unit_test(test_fixed),
      cmocka_unit_test(test_untimed_is_not_chosen),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
