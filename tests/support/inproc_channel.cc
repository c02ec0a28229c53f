#include "support/inproc_channel.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "collectives/signature.h"

namespace dist {
namespace {

using Clock = std::chrono::steady_clock;
using Lock = std::unique_lock<std::mutex>;

// One posted send or receive. Shared between its owner's table and a mailbox,
// so a send parked in a mailbox outlives its sender's call.
struct Transfer {
  bool is_send = false;
  int from = 0;                 // the sending rank
  int to = 0;                   // the receiving rank
  const void* source = nullptr; // sends: where the payload is read from
  void* target = nullptr;       // receives: where the payload lands
  size_t bytes = 0;
  std::vector<unsigned char> parked;  // a send's own copy of its payload
  CallWords call;
  uint64_t seq = 0;
  bool matched = false;   // paired with its counterpart; the copy may still run
  bool complete = false;  // sends: the sender's buffer is free; receives: data landed
  bool observed = false;  // the owner's wait() or test() has seen it complete
};
using TransferPtr = std::shared_ptr<Transfer>;

// Messages from one rank to another. At most one of the queues is non-empty:
// a new send or receive first pairs with the oldest entry of the other queue.
struct Mailbox {
  std::deque<TransferPtr> sends;
  std::deque<TransferPtr> receives;
};

struct RankState {
  std::condition_variable wake;
  bool in_call = false;
  CallWords call;
  uint64_t seq = 0;
  Deadline deadline = Deadline::max();
  const Transfer* blocked_on = nullptr;  // the unmatched receive this rank sleeps on
  bool at_end = false;                   // inside end(), waiting for the others
  int copies_touching = 0;  // copies into or out of this rank's buffers running unlocked
  bool failure_reported = false;  // this rank's thread has thrown the group's failure
};

std::string call_text(const CallWords& call, uint64_t seq) {
  return describe_call(call) + " (call " + std::to_string(seq) + ")";
}

std::string mismatch_text(int rank_a, const CallWords& a, uint64_t seq_a, int rank_b,
                          const CallWords& b, uint64_t seq_b) {
  const std::string head_a = "rank " + std::to_string(rank_a) + " called ";
  const std::string head_b = " but rank " + std::to_string(rank_b) + " called ";
  if (seq_a == seq_b) return head_a + describe_call(a) + head_b + describe_call(b) + " (call " + std::to_string(seq_a) + ")";
  return head_a + call_text(a, seq_a) + head_b + call_text(b, seq_b);
}

// Sleeps until woken or `deadline`; true when the deadline has passed.
bool sleep_until(Lock& lock, std::condition_variable& wake, Deadline deadline) {
  // wait_until(time_point::max()) overflows inside some standard libraries.
  if (deadline == Deadline::max()) {
    wake.wait(lock);
    return false;
  }
  wake.wait_until(lock, deadline);
  return Clock::now() >= deadline;
}

}  // namespace

class InProcessGroup::RankChannel : public Channel {
 public:
  RankChannel(Shared& shared, int rank) : shared_(shared), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override;
  void begin(const CallWords& call, uint64_t seq, Deadline deadline) override;
  void end() override;
  TransferId send(int peer, const void* data, size_t bytes) override;
  TransferId recv(int peer, void* data, size_t bytes) override;
  void wait(TransferId id) override;
  bool test(TransferId id) override;

 private:
  TransferPtr post(bool is_send, int peer, const void* data, size_t bytes, Lock& lock);
  const TransferPtr& lookup(TransferId id) const;
  void park(Lock& lock, const TransferPtr& send);

  Shared& shared_;
  const int rank_;
  std::vector<TransferPtr> transfers_;  // this call's, indexed by TransferId
};

struct InProcessGroup::Shared {
  explicit Shared(int n) : size(n), mailboxes(static_cast<size_t>(n) * n), ranks(n) {
    for (int rank = 0; rank < n; ++rank) channels.push_back(std::make_unique<RankChannel>(*this, rank));
  }

  const int size;
  mutable std::mutex mutex;
  std::vector<Mailbox> mailboxes;  // [from * size + to]
  std::vector<RankState> ranks;
  std::vector<std::unique_ptr<RankChannel>> channels;
  Status failure = Status::kOk;
  std::string failure_message;
  int ranks_at_end = 0;

  Mailbox& mailbox(int from, int to) { return mailboxes[static_cast<size_t>(from) * size + to]; }

  // Records the group's failure (the first one wins) and wakes every rank.
  void fail(Status status, const std::string& message) {
    if (failure != Status::kOk) return;
    failure = status;
    failure_message = message;
    for (RankState& rank : ranks) rank.wake.notify_all();
  }

  // Throws the failure on `rank`'s thread, once no copy touches its buffers
  // (the caller may free them as the exception unwinds).
  [[noreturn]] void throw_failure(Lock& lock, int rank) {
    RankState& state = ranks[rank];
    state.blocked_on = nullptr;
    while (state.copies_touching > 0) state.wake.wait(lock);
    state.failure_reported = true;
    throw Error(failure, failure_message);
  }

  void throw_if_failed(Lock& lock, int rank) {
    if (failure != Status::kOk) throw_failure(lock, rank);
  }

  // Pairs a send with a receive: checks that both belong to the same call and
  // that the payload fits, then copies with the lock released. `caller` is the
  // rank whose thread runs this.
  void deliver(Lock& lock, const TransferPtr& send, const TransferPtr& receive, int caller) {
    if (send->seq != receive->seq || send->call != receive->call) {
      fail(Status::kMismatch, mismatch_text(send->from, send->call, send->seq, receive->to,
                                            receive->call, receive->seq));
      throw_failure(lock, caller);
    }
    if (send->bytes > receive->bytes) {
      fail(Status::kMismatch, "rank " + std::to_string(send->from) + " sent " + std::to_string(send->bytes) +
                                  " bytes to rank " + std::to_string(receive->to) + ", which expected at most " +
                                  std::to_string(receive->bytes) + " bytes, in " +
                                  call_text(receive->call, receive->seq));
      throw_failure(lock, caller);
    }
    send->matched = true;
    receive->matched = true;
    ++ranks[send->from].copies_touching;
    ++ranks[receive->to].copies_touching;
    lock.unlock();
    if (send->bytes > 0) std::memcpy(receive->target, send->source, send->bytes);
    lock.lock();
    send->complete = true;
    receive->complete = true;
    --ranks[send->from].copies_touching;
    --ranks[receive->to].copies_touching;
    ranks[send->from].wake.notify_all();
    ranks[receive->to].wake.notify_all();
  }

  // True when no rank can make progress: every rank is inside a call and
  // either waits for a receive that no posted send matches or sits in end().
  bool all_blocked() const {
    for (const RankState& rank : ranks) {
      const bool waits_for_nothing = rank.blocked_on != nullptr && !rank.blocked_on->matched;
      if (!rank.in_call || !(rank.at_end || waits_for_nothing)) return false;
    }
    return true;
  }

  // The first rank whose call differs from rank 0's, or -1.
  int first_disagreeing_rank() const {
    for (int rank = 1; rank < size; ++rank) {
      if (ranks[rank].call != ranks[0].call || ranks[rank].seq != ranks[0].seq) return rank;
    }
    return -1;
  }

  std::string disagreement_text(int rank) const {
    return mismatch_text(rank, ranks[rank].call, ranks[rank].seq, 0, ranks[0].call, ranks[0].seq);
  }

  // Fails a group found blocked by all_blocked(): ranks in different calls are
  // a mismatch; ranks in the same call whose messages do not pair up are a bug.
  void fail_blocked() {
    const int other = first_disagreeing_rank();
    if (other >= 0) {
      fail(Status::kMismatch, disagreement_text(other));
      return;
    }
    std::string text = "ranks deadlocked in " + call_text(ranks[0].call, ranks[0].seq) + ":";
    for (int rank = 0; rank < size; ++rank) {
      const RankState& state = ranks[rank];
      text += rank == 0 ? " " : "; ";
      text += "rank " + std::to_string(rank);
      if (state.at_end) {
        text += " has finished the call";
      } else {
        text += " waits for " + std::to_string(state.blocked_on->bytes) + " bytes from rank " +
                std::to_string(state.blocked_on->from);
      }
    }
    fail(Status::kInternal, text);
  }

  // Run by the last rank to reach end(): every rank must have made the same
  // call, and every message of the call must have been received.
  void finish_call() {
    const int other = first_disagreeing_rank();
    if (other >= 0) return fail(Status::kMismatch, disagreement_text(other));
    for (const Mailbox& box : mailboxes) {
      if (box.sends.empty()) continue;
      const Transfer& left = *box.sends.front();
      return fail(Status::kMismatch,
                  "rank " + std::to_string(left.from) + " sent " + std::to_string(left.bytes) + " bytes to rank " +
                      std::to_string(left.to) + " in " + call_text(left.call, left.seq) + " that rank " +
                      std::to_string(left.to) + " never received");
    }
    // Released ranks leave the call here, under the lock, so a rank that starts
    // its next call right away never sees them as blocked.
    for (RankState& rank : ranks) {
      rank.at_end = false;
      rank.in_call = false;
      rank.wake.notify_all();
    }
    ranks_at_end = 0;
  }
};

// ---- RankChannel ----------------------------------------------------------------

int InProcessGroup::RankChannel::size() const { return shared_.size; }

void InProcessGroup::RankChannel::begin(const CallWords& call, uint64_t seq, Deadline deadline) {
  Lock lock(shared_.mutex);
  shared_.throw_if_failed(lock, rank_);
  RankState& state = shared_.ranks[rank_];
  if (state.in_call) {
    fail(Status::kInternal, "rank " + std::to_string(rank_) + " began " + call_text(call, seq) +
                                " before ending " + call_text(state.call, state.seq));
  }
  state.in_call = true;
  state.call = call;
  state.seq = seq;
  state.deadline = deadline;
  transfers_.clear();
}

void InProcessGroup::RankChannel::end() {
  Lock lock(shared_.mutex);
  RankState& state = shared_.ranks[rank_];
  if (shared_.failure != Status::kOk && state.failure_reported) {
    // Cleanup after this rank's call has already thrown: nothing more to say.
    // No copy can touch this rank's buffers any more (see throw_failure).
    state.in_call = false;
    transfers_.clear();
    return;
  }
  shared_.throw_if_failed(lock, rank_);
  if (!state.in_call) fail(Status::kInternal, "rank " + std::to_string(rank_) + " ended a call it never began");
  for (size_t id = 0; id < transfers_.size(); ++id) {
    const Transfer& transfer = *transfers_[id];
    if (transfer.observed) continue;
    // The unfinished transfer may still be written to: nobody can use the group safely.
    shared_.fail(Status::kInternal,
                 "rank " + std::to_string(rank_) + " ended " + call_text(state.call, state.seq) + " without waiting for its " +
                     (transfer.is_send ? "send to rank " + std::to_string(transfer.to)
                                       : "receive from rank " + std::to_string(transfer.from)) +
                     " (transfer " + std::to_string(id) + ")");
    shared_.throw_failure(lock, rank_);
  }
  state.at_end = true;
  if (++shared_.ranks_at_end == shared_.size) {
    shared_.finish_call();
  } else {
    while (state.at_end) {
      shared_.throw_if_failed(lock, rank_);
      if (shared_.all_blocked()) {
        shared_.fail_blocked();
        continue;
      }
      if (sleep_until(lock, state.wake, state.deadline) && state.at_end && shared_.failure == Status::kOk) {
        std::string missing;
        for (int rank = 0; rank < shared_.size; ++rank) {
          if (shared_.ranks[rank].at_end) continue;
          missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
        }
        shared_.fail(Status::kTimeout, "rank " + std::to_string(rank_) + " timed out at the end of " +
                                           call_text(state.call, state.seq) + " waiting for rank(s) " + missing +
                                           " to finish it");
      }
    }
  }
  shared_.throw_if_failed(lock, rank_);
  transfers_.clear();
}

TransferPtr InProcessGroup::RankChannel::post(bool is_send, int peer, const void* data, size_t bytes, Lock& lock) {
  const char* what = is_send ? "send" : "recv";
  if (peer < 0 || peer >= shared_.size) {
    fail(Status::kInternal, std::string(what) + " to rank " + std::to_string(peer) + " of a group of " +
                                std::to_string(shared_.size));
  }
  if (data == nullptr && bytes > 0) {
    fail(Status::kInternal, std::string(what) + " of " + std::to_string(bytes) + " bytes from a null buffer");
  }
  shared_.throw_if_failed(lock, rank_);
  const RankState& state = shared_.ranks[rank_];
  if (!state.in_call) fail(Status::kInternal, std::string(what) + " outside a call (begin() was not called)");
  auto transfer = std::make_shared<Transfer>();
  transfer->is_send = is_send;
  transfer->from = is_send ? rank_ : peer;
  transfer->to = is_send ? peer : rank_;
  transfer->bytes = bytes;
  transfer->call = state.call;
  transfer->seq = state.seq;
  transfers_.push_back(transfer);
  return transfer;
}

TransferId InProcessGroup::RankChannel::send(int peer, const void* data, size_t bytes) {
  Lock lock(shared_.mutex);
  TransferPtr transfer = post(true, peer, data, bytes, lock);
  transfer->source = data;
  const auto id = static_cast<TransferId>(transfers_.size() - 1);
  Mailbox& box = shared_.mailbox(rank_, peer);
  if (box.receives.empty()) {
    box.sends.push_back(transfer);
  } else {
    TransferPtr receive = box.receives.front();
    box.receives.pop_front();
    shared_.deliver(lock, transfer, receive, rank_);
  }
  return id;
}

TransferId InProcessGroup::RankChannel::recv(int peer, void* data, size_t bytes) {
  Lock lock(shared_.mutex);
  TransferPtr transfer = post(false, peer, data, bytes, lock);
  transfer->target = data;
  const auto id = static_cast<TransferId>(transfers_.size() - 1);
  Mailbox& box = shared_.mailbox(peer, rank_);
  if (box.sends.empty()) {
    box.receives.push_back(transfer);
  } else {
    TransferPtr send = box.sends.front();
    box.sends.pop_front();
    shared_.deliver(lock, send, transfer, rank_);
  }
  return id;
}

const TransferPtr& InProcessGroup::RankChannel::lookup(TransferId id) const {
  if (id >= transfers_.size()) {
    fail(Status::kInternal, "rank " + std::to_string(rank_) + " waited for transfer " + std::to_string(id) +
                                ", which this call never posted");
  }
  return transfers_[id];
}

// The sender stops waiting for a receiver: the payload moves into the mailbox
// entry. The copy runs unlocked; a receive that matches meanwhile reads the
// sender's buffer, which stays valid until this returns.
void InProcessGroup::RankChannel::park(Lock& lock, const TransferPtr& send) {
  std::vector<unsigned char> copy;
  if (send->bytes > 0) {
    lock.unlock();
    copy.assign(static_cast<const unsigned char*>(send->source),
                static_cast<const unsigned char*>(send->source) + send->bytes);
    lock.lock();
  }
  if (send->matched) return;  // received while copying; the caller waits for that copy
  send->parked = std::move(copy);
  send->source = send->parked.data();
  send->complete = true;
}

void InProcessGroup::RankChannel::wait(TransferId id) {
  const TransferPtr transfer = lookup(id);
  Lock lock(shared_.mutex);
  RankState& state = shared_.ranks[rank_];
  for (;;) {
    shared_.throw_if_failed(lock, rank_);
    if (transfer->complete) {
      transfer->observed = true;
      return;
    }
    if (transfer->is_send && !transfer->matched) {
      park(lock, transfer);
      continue;
    }
    if (transfer->matched) {
      // The copy is running on the peer's thread and ends without waiting for anything.
      state.wake.wait(lock);
      continue;
    }
    state.blocked_on = transfer.get();
    if (shared_.all_blocked()) {
      shared_.fail_blocked();
      continue;
    }
    const bool late = sleep_until(lock, state.wake, state.deadline);
    state.blocked_on = nullptr;
    if (late && !transfer->matched && shared_.failure == Status::kOk) {
      shared_.fail(Status::kTimeout, "rank " + std::to_string(rank_) + " timed out in " +
                                         call_text(state.call, state.seq) + " waiting for " +
                                         std::to_string(transfer->bytes) + " bytes from rank " +
                                         std::to_string(transfer->from));
    }
  }
}

bool InProcessGroup::RankChannel::test(TransferId id) {
  const TransferPtr transfer = lookup(id);
  Lock lock(shared_.mutex);
  shared_.throw_if_failed(lock, rank_);
  if (transfer->is_send && !transfer->matched && !transfer->complete) park(lock, transfer);
  if (!transfer->complete) return false;
  transfer->observed = true;
  return true;
}

// ---- InProcessGroup ---------------------------------------------------------------

InProcessGroup::InProcessGroup(int size) {
  if (size < 1) fail_invalid("an in-process group needs at least 1 rank, got " + std::to_string(size));
  shared_ = std::make_shared<Shared>(size);
}

InProcessGroup::~InProcessGroup() = default;

int InProcessGroup::size() const { return shared_->size; }

Channel& InProcessGroup::channel(int rank) {
  if (rank < 0 || rank >= shared_->size) {
    fail_invalid("rank " + std::to_string(rank) + " is out of range for an in-process group of " +
                 std::to_string(shared_->size));
  }
  return *shared_->channels[rank];
}

void InProcessGroup::abort(Status status, const std::string& message) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->fail(status, message);
}

Status InProcessGroup::failure() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->failure;
}

std::string InProcessGroup::failure_message() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->failure_message;
}

std::vector<RankOutcome> run_ranks(InProcessGroup& group, const std::function<void(int, Channel&)>& body) {
  std::vector<RankOutcome> outcomes(static_cast<size_t>(group.size()));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < group.size(); ++rank) {
    threads.emplace_back([&, rank] {
      RankOutcome& outcome = outcomes[static_cast<size_t>(rank)];
      try {
        body(rank, group.channel(rank));
      } catch (const Error& error) {
        outcome = {error.status(), error.what()};
      } catch (const std::exception& error) {
        outcome = {Status::kInternal, std::string("unexpected exception: ") + error.what()};
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

}  // namespace dist
