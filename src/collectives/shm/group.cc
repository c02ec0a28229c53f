#include "collectives/shm/group.h"

#include <sched.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "base/call_phases.h"
#include "base/status.h"
#include "collectives/shm/single_copy.h"
#include "transport/stall_watch.h"

namespace dist {
namespace {

// Polls before the first yield. With a core for every rank, a few
// microseconds: a peer that is copying a slot arrives within them, and a
// yield (a system call) costs more than the spin. With more ranks than cores,
// about a microsecond: the peer a rank spins for may be waiting for its core.
// The first kPausedPolls pause (about 17 ns each here), long enough for a
// peer that is about to arrive.
constexpr unsigned kSpinPollsOwnCore = 2000;
constexpr unsigned kSpinPollsSharedCore = 512;
constexpr unsigned kPausedPolls = 16;

// After this long a peer is probably computing, not communicating: poll less
// often so that waiting costs little CPU.
constexpr auto kSleepAfter = std::chrono::milliseconds(20);
constexpr auto kSleepBetweenPolls = std::chrono::microseconds(50);

// The longest withdraw() waits for a peer's copy to end.
constexpr auto kWithdrawWait = std::chrono::seconds(1);

inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::optional<CallSignature> signature_of(const ShmCallRecord& record) {
  return signature_from_wire(record.kind, record.dtype, record.op, record.root, record.count);
}

}  // namespace

int ShmGroup::usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

ShmGroup::ShmGroup(ShmSegment segment, int rank, std::vector<std::string> names,
                   std::shared_ptr<FailureFlag> failure, std::vector<pid_t> pids, int cores)
    : segment_(std::move(segment)),
      rank_(rank),
      names_(std::move(names)),
      failure_(std::move(failure)),
      pids_(std::move(pids)),
      shares_cores_(segment_.ranks() > (cores > 0 ? cores : usable_cores())),
      spin_polls_(shares_cores_ ? kSpinPollsSharedCore : kSpinPollsOwnCore),
      all_reduce_choice_(segment_.agreed_words(), rank == 0) {}

void ShmGroup::begin(const CallSignature& signature, uint64_t seq, std::chrono::milliseconds timeout) {
  recorded_.kind = static_cast<int16_t>(signature.kind);
  recorded_.dtype = static_cast<int16_t>(dtype_and_memory(signature));
  recorded_.op = static_cast<int16_t>(signature.op);
  recorded_.root = signature.root;
  recorded_.count = signature.count;
  seq_ = seq;
  timeout_ = timeout;
  deadline_ = {};
  call_first_step_ = step_;
  ++calls_;
  slot_offset_ = 0;
}

void ShmGroup::rotate_slots(size_t bytes) {
  if (bytes < kShmRotationMinBytes) return;
  constexpr size_t kPage = 4096;
  const size_t stride = (bytes + kPage - 1) / kPage * kPage;
  const size_t places = std::max<size_t>(step_bytes() / stride, 1);
  slot_offset_ = static_cast<size_t>(call_index() % places) * stride;
}

size_t ShmGroup::claim_chunk(int owner, size_t chunks) {
  std::atomic<uint64_t>& word = segment_.control(owner).claimed;
  const uint64_t call = call_index() & 0xFFFFFFFFu;
  uint64_t seen = word.load(std::memory_order_relaxed);
  for (;;) {
    // A word of an earlier call says nothing of this one: no chunk is taken.
    const uint64_t next = (seen >> 32) == call ? (seen & 0xFFFFFFFFu) : 0;
    if (next >= chunks) return chunks;
    // Relaxed: a claim orders no data; the call's last step publishes the
    // chunks' results to every rank.
    if (word.compare_exchange_weak(seen, call << 32 | (next + 1), std::memory_order_relaxed)) {
      if (owner != rank_) ++chunks_taken_over_;
      return static_cast<size_t>(next);
    }
  }
}

void ShmGroup::arrive() {
  ShmCallRecord& record = segment_.control(rank_).calls[step_ & 1];
  if (step_ == call_first_step_) {
    // Written just before the announcement, not at begin(): peers already
    // poll this line, and every store between their polls moves it again.
    record.first_step = step_;
    record.seq = seq_;
    record.kind = recorded_.kind;
    record.dtype = recorded_.dtype;
    record.op = recorded_.op;
    record.root = recorded_.root;
    record.count = recorded_.count;
  }
  record.announced.store(step_, std::memory_order_release);
}

template <typename Copy>
int ShmGroup::copy_with(int rank, Copy&& copy) const {
  // With withdraw(), a Dekker pair: this rank says it copies, then looks at
  // the peer; the peer says it withdrew, then looks at this rank. Sequentially
  // consistent on both sides, at least one of them sees the other's store, so
  // either this copy does not start or the peer waits for it to end.
  std::atomic<uint32_t>& copying = segment_.control(rank_).copies.copying;
  copying.store(1, std::memory_order_seq_cst);
  if (segment_.control(rank).copies.withdrawn.load(std::memory_order_seq_cst) != 0) {
    copying.store(0, std::memory_order_release);
    return kPeerWithdrew;
  }
  const int error = copy(pids_[static_cast<size_t>(rank)]);
  copying.store(0, std::memory_order_release);
  return error;
}

int ShmGroup::read_from(int rank, const void* remote, void* local, size_t bytes) const {
  if (!single_copy()) fail(Status::kInternal, "ShmGroup::read_from without single copies");
  return copy_with(rank, [&](pid_t pid) { return read_process_memory(pid, remote, local, bytes); });
}

int ShmGroup::write_to(int rank, void* remote, const void* local, size_t bytes) const {
  if (!single_copy()) fail(Status::kInternal, "ShmGroup::write_to without single copies");
  return copy_with(rank, [&](pid_t pid) { return write_process_memory(pid, remote, local, bytes); });
}

void ShmGroup::withdraw() {
  std::atomic<uint32_t>& withdrawn = segment_.control(rank_).copies.withdrawn;
  if (!single_copy() || withdrawn.load(std::memory_order_relaxed) != 0) return;
  withdrawn.store(1, std::memory_order_seq_cst);
  // A copy takes milliseconds at most; a peer stopped in the middle of one
  // (SIGSTOP, a debugger) would hold the caller's error this long, no longer.
  const auto give_up = std::chrono::steady_clock::now() + kWithdrawWait;
  for (int peer = 0; peer < size(); ++peer) {
    if (peer == rank_) continue;
    const std::atomic<uint32_t>& copying = segment_.control(peer).copies.copying;
    for (unsigned polls = 1; copying.load(std::memory_order_seq_cst) != 0; ++polls) {
      if (polls < kSpinPollsSharedCore) continue;
      sched_yield();
      // Now and then: whether the peer is still there, and the clock.
      if (polls % 64 == 0 &&
          (process_ended(pids_[static_cast<size_t>(peer)]) || std::chrono::steady_clock::now() >= give_up)) {
        break;
      }
    }
  }
}

void ShmGroup::publish_reduced() { segment_.control(rank_).reduced.store(step_, std::memory_order_release); }

void ShmGroup::wait_for_all(Counter counter) {
  const int n = size();
  for (int peer = 0; peer < n; ++peer) {
    if (peer == rank_) continue;
    const ShmRankControl& control = segment_.control(peer);
    const std::atomic<uint64_t>& published =
        counter == Counter::kArrived ? control.calls[step_ & 1].announced : control.reduced;
    unsigned polls = 0;
    std::chrono::steady_clock::time_point waiting_since{};
    WaitingPhase waiting;
    while (published.load(std::memory_order_acquire) < step_) {
      waiting.begin();
      if (failure_->failed()) failure_->check();
      ++polls;
      if (polls < spin_polls_) {
        // The first polls pause: that eases off the line the peer is about to
        // write and spares the pipeline flush a spin loop's speculative loads
        // cost when it ends. Later ones do not: under a hypervisor, a long
        // run of pauses traps to it (pause-loop exiting), which cost a 64 KiB
        // all-reduce 8 % here.
        if (polls < kPausedPolls) spin_pause();
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (polls == spin_polls_) {
        waiting_since = now;
        if (deadline_ == std::chrono::steady_clock::time_point{}) deadline_ = now + timeout_;
      }
      // The call has waited since its first long wait (when the deadline was set).
      const auto call_waiting_since = deadline_ - timeout_;
      if (stall_ != nullptr && stall_->due(seq_, call_waiting_since, now)) {
        stall_->warn(seq_, describe_call() + " (call " + std::to_string(seq_) + ", shared memory)",
                     call_waiting_since, now);
      }
      if (now >= deadline_) timed_out(peer, counter == Counter::kArrived ? "to arrive" : "to reduce");
      if (idle_work_) idle_work_();
      if (now - waiting_since > kSleepAfter) {
        std::this_thread::sleep_for(kSleepBetweenPolls);
      } else {
        sched_yield();
      }
    }
    if (counter == Counter::kArrived && step_ == call_first_step_) check_signature(peer);
  }
}

void ShmGroup::check_signature(int peer) const {
  const ShmCallRecord& theirs = segment_.control(peer).calls[step_ & 1];
  // Field by field against what arrive() wrote for this rank: the same
  // encoding, so equal fields are equal signatures, and only a disagreement
  // decodes anything.
  const RecordedSignature& own = recorded_;
  if (theirs.first_step == step_ && theirs.seq == seq_ && theirs.kind == own.kind && theirs.dtype == own.dtype &&
      theirs.op == own.op && theirs.root == own.root && theirs.count == own.count) {
    return;
  }
  const std::optional<CallSignature> signature = signature_of(theirs);
  // Messages are built only here, off the fast path.
  const std::string& who = names_[static_cast<size_t>(peer)];
  const std::string& me = names_[static_cast<size_t>(rank_)];
  const std::string mine = describe_call() + " (call " + std::to_string(seq_) + ")";
  const std::string message =
      theirs.first_step != step_
          ? who + " is inside another call at step " + std::to_string(step_) + " where " + me + " called " + mine
          : who + " called " + (signature ? describe(*signature) : std::string("an unknown call")) +
                " (call " + std::to_string(theirs.seq) + ") but " + me + " called " + mine;
  failure_->set(Status::kMismatch, message);
  failure_->check();
  throw Error(Status::kMismatch, message);
}

void ShmGroup::await_failure(std::chrono::milliseconds most) const {
  const auto until = std::chrono::steady_clock::now() + most;
  while (!failure_->failed() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  failure_->check();
}

std::string ShmGroup::describe_call() const {
  const std::optional<CallSignature> signature =
      signature_from_wire(recorded_.kind, recorded_.dtype, recorded_.op, recorded_.root, recorded_.count);
  return signature ? describe(*signature) : "an unknown call";
}

void ShmGroup::timed_out(int peer, const char* what) const {
  const std::string message = names_[static_cast<size_t>(rank_)] + " timed out waiting for " +
                              names_[static_cast<size_t>(peer)] + " " + what + " in " + describe_call() +
                              " (call " + std::to_string(seq_) + ", shared memory)" +
                              (stall_ != nullptr ? stall_->behind_note(seq_) : "");
  failure_->set(Status::kTimeout, message);
  failure_->check();
  throw Error(Status::kTimeout, message);
}

}  // namespace dist
