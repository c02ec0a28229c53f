// A choice between two algorithms that every rank of a shared-memory group
// makes alike, call by call, without a message.
//
// Which of two algorithms is faster can depend on the machine's speed mode
// (bench/README.md): out of place, from 256 KiB to 16 MiB, reading the peers'
// inputs and writing their results (shm_read_write) took 0.81-0.91 of the
// split's time in one sitting and 1.5x its time in another. But all ranks must
// run the same algorithm, so a rank cannot choose for itself as it does its
// stores (store_choice.h). Here rank 0 alone learns, from the times of its own
// calls (timed_choice.h), and writes its decision into the segment
// (ShmAgreedChoices: one word per size class) for the calls from two sequence
// numbers on; every rank reads, at the start of its call, what the word says
// for that call's sequence number.
//
// Why two calls on: rank 0 writes when it finishes call k, after which no
// rank can read a word for call k again (each read it before arriving at
// call k's first step, which rank 0 waited for); a rank may already have
// begun call k + 1, so that call keeps what the word said for it; and no rank
// begins call k + 2 before rank 0 has arrived at call k + 1, which publishes
// the write (release) to every rank that sees the arrival (acquire).
//
// A word holds the choice before a switch, the choice from it, and the
// switch's sequence number (bits 0, 1 and 2-63; zero: the first algorithm).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "collectives/shm/timed_choice.h"

namespace dist {

// The words' format (pure functions; agreed_choice.cc).
namespace agreed_word {
uint64_t make(bool before, bool from, uint64_t switch_seq);
// What `word` says for the call of `seq`: true for the second algorithm.
bool second_at(uint64_t word, uint64_t seq);
// The word after the call of `seq` finished, that says `next` from seq + 2
// on and keeps what `word` said for seq + 1 (whatever it said before: no
// rank reads those again).
uint64_t after_call(uint64_t word, uint64_t seq, bool next);
}  // namespace agreed_word

class AgreedChoice {
 public:
  // One call's choice, and on rank 0 what it needs to learn from its time.
  struct Call {
    bool second = false;
    uint64_t seq = 0;
    size_t bytes = 0;
    std::chrono::steady_clock::time_point start{};
  };

  // `words`: the segment's (kShmAgreedClasses); `leader`: this rank learns
  // and writes them (rank 0).
  AgreedChoice(std::atomic<uint64_t>* words, bool leader) : words_(words), leader_(leader) {}

  // The algorithm for the call of `seq` and `bytes`, the same on every rank.
  Call begin(uint64_t seq, size_t bytes);
  // After the call succeeded (a failed one teaches nothing): rank 0 counts
  // its time and decides for the calls two on.
  void finished(const Call& call);

 private:
  std::atomic<uint64_t>* words_;
  bool leader_;
  TimedChoice learned_;  // rank 0's
};

}  // namespace dist
