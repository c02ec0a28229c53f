#include "gpu/nccl_watchdog.h"

namespace dist {
namespace {

// How often pending calls are polled: far below any deadline, and a light
// load (one event query per call, one error query) on a core.
constexpr auto kPollInterval = std::chrono::microseconds(200);
// A blocking call spins this long in its own thread, then polls every
// kLongCallPoll: late by at most that, a small part of a call this long.
constexpr auto kSpinFor = std::chrono::milliseconds(10);
constexpr auto kLongCallPoll = std::chrono::microseconds(20);

}  // namespace

NcclWatchdog::NcclWatchdog(NcclCommunicator& nccl, std::shared_ptr<FailureFlag> failure)
    : nccl_(nccl), failure_(std::move(failure)), thread_([this] { loop(); }) {}

NcclWatchdog::~NcclWatchdog() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Each pending call ends by its deadline at the latest.
    wake_.wait(lock, [this] { return pending_.empty(); });
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void NcclWatchdog::enqueue(const std::function<void()>& enqueue) {
  std::lock_guard<std::mutex> guard(mutex_);
  failure_->check();
  nccl_.check();
  enqueue();
}

void NcclWatchdog::watch(std::unique_ptr<StreamMark> mark, std::chrono::steady_clock::time_point deadline,
                         std::string what, Done done) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    pending_.push_back(Pending{std::move(mark), deadline, std::move(what), std::move(done)});
  }
  wake_.notify_all();
}

void NcclWatchdog::wait(std::unique_ptr<StreamMark> mark, std::chrono::steady_clock::time_point deadline,
                        const std::string& what) {
  // Polled in the calling thread: handing the call to the watchdog's thread
  // and back costs more than a short call takes on the GPU. Spins while a
  // call is short, then polls often enough that a long one is seen done
  // within a fraction of its time.
  const auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
  for (;;) {
    try {
      if (mark->reached()) return;
    } catch (const Error& e) {
      fail_now(e.status(), what + ": " + e.what());
    }
    try {
      // The communicator may be aborted meanwhile by the watchdog's thread:
      // asked under its lock.
      std::lock_guard<std::mutex> guard(mutex_);
      failure_->check();
      nccl_.check();
    } catch (const Error& e) {
      fail_now(e.status(), e.what());
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      fail_now(Status::kTimeout,
               what + " did not finish on its stream by the deadline: the NCCL communicator was aborted");
    }
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kLongCallPoll);
    }
  }
}

void NcclWatchdog::fail_now(Status status, const std::string& message) {
  std::vector<Outcome> outcomes;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    fail_locked(status, message, outcomes);
  }
  wake_.notify_all();  // a destructor may wait for the pending calls
  for (Outcome& o : outcomes) o.done(o.status, o.message);
  throw Error(status, message);
}

void NcclWatchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::vector<Outcome> outcomes;
  while (!stopping_) {
    if (pending_.empty()) {
      wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      continue;
    }
    poll_locked(outcomes);
    if (!outcomes.empty()) {
      lock.unlock();
      for (Outcome& o : outcomes) o.done(o.status, o.message);
      outcomes.clear();
      lock.lock();
    }
    if (pending_.empty()) {
      wake_.notify_all();  // a destructor may wait for this
      continue;
    }
    wake_.wait_for(lock, kPollInterval);
  }
}

void NcclWatchdog::poll_locked(std::vector<Outcome>& outcomes) {
  try {
    failure_->check();
    nccl_.check();
  } catch (const Error& e) {
    fail_locked(e.status(), e.what(), outcomes);
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    bool reached = false;
    try {
      reached = p.mark->reached();
    } catch (const Error& e) {
      fail_locked(e.status(), p.what + ": " + e.what(), outcomes);
      return;
    }
    if (reached) {
      outcomes.push_back(Outcome{std::move(p.done), Status::kOk, ""});
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (now >= p.deadline) {
      fail_locked(Status::kTimeout,
                  p.what + " did not finish on its stream by the deadline: the NCCL communicator was aborted",
                  outcomes);
      return;
    }
    ++i;
  }
}

void NcclWatchdog::fail_locked(Status status, const std::string& message, std::vector<Outcome>& outcomes) {
  // Kernels that wait for a peer never end: only an abort frees the streams.
  nccl_.abort();
  failure_->set(status, message);
  for (Pending& p : pending_) outcomes.push_back(Outcome{std::move(p.done), status, message});
  pending_.clear();
}

}  // namespace dist
