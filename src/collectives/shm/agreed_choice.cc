#include "collectives/shm/agreed_choice.h"

#include "collectives/shm/segment.h"

namespace dist {

namespace agreed_word {

uint64_t make(bool before, bool from, uint64_t switch_seq) {
  return (switch_seq << 2) | (from ? 2u : 0u) | (before ? 1u : 0u);
}

bool second_at(uint64_t word, uint64_t seq) { return seq >= (word >> 2) ? (word & 2) != 0 : (word & 1) != 0; }

uint64_t after_call(uint64_t word, uint64_t seq, bool next) {
  return make(second_at(word, seq + 1), next, seq + 2);
}

}  // namespace agreed_word

static_assert(TimedChoice::kClasses == kShmAgreedClasses, "one word per size class of the learning");

AgreedChoice::Call AgreedChoice::begin(uint64_t seq, size_t bytes) {
  Call call;
  call.seq = seq;
  call.bytes = bytes;
  // Relaxed: the arrivals' release and acquire order rank 0's writes (above).
  const uint64_t word = words_[TimedChoice::size_class_of(bytes)].load(std::memory_order_relaxed);
  call.second = agreed_word::second_at(word, seq);
  if (leader_) call.start = std::chrono::steady_clock::now();
  return call;
}

void AgreedChoice::finished(const Call& call) {
  if (!leader_) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - call.start);
  // This call's time first, so that the decision already counts it.
  const int size_class = TimedChoice::size_class_of(call.bytes);
  learned_.took({call.second, size_class}, ns.count());
  const TimedChoice::Call proposal = learned_.choose(call.bytes);
  std::atomic<uint64_t>& word = words_[size_class];
  const uint64_t now = word.load(std::memory_order_relaxed);
  // The word's switch is at most seq + 1 (written when an earlier call
  // finished, for two calls on), so it says the same from seq + 1 on: where
  // that is the proposal, nothing changes and nothing is written (a write
  // would cost every rank a cache miss on its next call).
  if (agreed_word::second_at(now, call.seq + 1) == proposal.second) return;
  word.store(agreed_word::after_call(now, call.seq, proposal.second), std::memory_order_relaxed);
}

}  // namespace dist
