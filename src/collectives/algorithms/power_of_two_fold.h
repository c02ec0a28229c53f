// Runs a power-of-two algorithm (recursive doubling, recursive halving) on any
// rank count: with n = 2^k + extra, the first 2*extra ranks pair up; the
// even rank of each pair hands its input to the odd one and sits out, the odd
// one continues with the pair's combined data, and at the end hands the result
// back. The 2^k remaining ranks are numbered 0..2^k-1 as "core ranks", in
// the order of their ranks, so a lower core rank always stands for lower ranks.
#pragma once

#include <cstddef>

#include "collectives/algorithms/payload.h"
#include "transport/channel.h"

namespace dist {

class PowerOfTwoFold {
 public:
  PowerOfTwoFold(int size, int rank);

  int core_size() const { return core_size_; }
  bool sits_out() const { return rank_ < 2 * extra_ && rank_ % 2 == 0; }
  // This rank's core rank (meaningless when it sits out).
  int core_rank() const { return rank_ < 2 * extra_ ? rank_ / 2 : rank_ - extra_; }
  // The communicator rank standing for `core_rank`.
  int rank_of(int core_rank) const { return core_rank < extra_ ? 2 * core_rank + 1 : core_rank + extra_; }

  // The pairs combine their inputs: a rank that sits out sends `send`; its
  // partner combines it with its own `send` into `out`. Returns where this
  // rank's contribution now is (`send`, or `out` for a partner), or nullptr
  // for a rank that sits out.
  const void* fold_in(Channel& channel, const void* send, void* out, size_t count, const Payload& payload) const;

  // The partners send the finished `out` to the ranks that sat out.
  void fold_out(Channel& channel, void* out, size_t count, const Payload& payload) const;

 private:
  int rank_;
  int core_size_;
  int extra_;
};

}  // namespace dist
