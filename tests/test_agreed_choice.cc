// The choice rank 0 makes for every rank of a shared-memory group
// (collectives/shm/agreed_choice.h): the words' format, that a decision
// never changes what a word says for a call a rank may already have begun,
// and that a rank one call ahead of rank 0 still takes what rank 0 takes.
#include <atomic>
#include <vector>

#include "collectives/shm/agreed_choice.h"
#include "collectives/shm/segment.h"
#include "internal_test_support.h"

namespace {

using dist::AgreedChoice;
namespace word = dist::agreed_word;

void test_word_format(void**) {
  for (uint64_t seq : {0ull, 1ull, 5ull, 1ull << 40}) assert_false(word::second_at(0, seq));
  const uint64_t w = word::make(false, true, 10);
  assert_false(word::second_at(w, 0));
  assert_false(word::second_at(w, 9));
  assert_true(word::second_at(w, 10));
  assert_true(word::second_at(w, 11));
  const uint64_t v = word::make(true, false, 3);
  assert_true(word::second_at(v, 2));
  assert_false(word::second_at(v, 3));
}

// after_call(w, k, x): seq k + 1 keeps what w said for it; x from k + 2 on.
void test_after_call_keeps_the_next_call(void**) {
  for (int before = 0; before < 2; ++before) {
    for (int from = 0; from < 2; ++from) {
      for (uint64_t switch_seq = 0; switch_seq <= 6; ++switch_seq) {
        const uint64_t w = word::make(before != 0, from != 0, switch_seq);
        for (uint64_t k = switch_seq > 0 ? switch_seq - 1 : 0; k <= 8; ++k) {
          for (int next = 0; next < 2; ++next) {
            const uint64_t after = word::after_call(w, k, next != 0);
            if (word::second_at(after, k + 1) != word::second_at(w, k + 1)) {
              fail_msg("word (%d, %d, %llu) after call %llu: call %llu changed", before, from,
                       static_cast<unsigned long long>(switch_seq), static_cast<unsigned long long>(k),
                       static_cast<unsigned long long>(k + 1));
            }
            for (uint64_t later = k + 2; later < k + 6; ++later) {
              assert_int_equal(word::second_at(after, later), next != 0);
            }
          }
        }
      }
    }
  }
}

// Rank 0 (the leader) and a follower share the words. The follower runs one
// call ahead: it begins call k + 1 before the leader finishes call k, the
// furthest ahead the group's steps let a rank be. Every call, both must take
// the same way; over the first calls of a size both ways are taken.
void test_follower_one_call_ahead_agrees(void**) {
  dist::ShmAgreedChoices shared{};  // all zero, as a new segment's
  AgreedChoice leader(shared.words, true);
  AgreedChoice follower(shared.words, false);
  const size_t sizes[] = {1 << 20, 300 * 1024};  // two size classes, interleaved
  const int calls = 200;
  std::vector<int> follower_took(calls);
  follower_took[0] = follower.begin(0, sizes[0]).second;
  int second_ways = 0;
  for (int k = 0; k < calls; ++k) {
    const size_t bytes = sizes[k % 3 == 2 ? 1 : 0];
    const AgreedChoice::Call mine = leader.begin(static_cast<uint64_t>(k), bytes);
    if (k + 1 < calls) {
      const size_t next_bytes = sizes[(k + 1) % 3 == 2 ? 1 : 0];
      follower_took[k + 1] = follower.begin(static_cast<uint64_t>(k + 1), next_bytes).second;
    }
    if (follower_took[k] != static_cast<int>(mine.second)) {
      fail_msg("call %d of %zu bytes: rank 0 took %d, the follower %d", k, bytes, mine.second, follower_took[k]);
    }
    second_ways += mine.second ? 1 : 0;
    leader.finished(mine);
  }
  // The first six timed calls of a class alternate, so each way ran.
  if (second_ways == 0 || second_ways == calls) {
    fail_msg("of %d calls, %d took the second way: the learning never tried both", calls, second_ways);
  }
}

// A follower never writes, and a call that failed (finished() not called)
// changes nothing.
void test_only_the_leader_writes(void**) {
  dist::ShmAgreedChoices shared{};  // all zero, as a new segment's
  AgreedChoice follower(shared.words, false);
  for (uint64_t k = 0; k < 50; ++k) follower.finished(follower.begin(k, 1 << 20));
  for (auto& w : shared.words) assert_int_equal(w.load(), 0);
  AgreedChoice leader(shared.words, true);
  (void)leader.begin(0, 1 << 20);  // fails: never finished
  for (auto& w : shared.words) assert_int_equal(w.load(), 0);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_word_format),
      cmocka_unit_test(test_after_call_keeps_the_next_call),
      cmocka_unit_test(test_follower_one_call_ahead_agrees),
      cmocka_unit_test(test_only_the_leader_writes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
