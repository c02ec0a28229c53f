#include "gpu/nccl_watchdog.h"

namespace dist {
namespace {

// How often pending calls are polled: far below any deadline, and a light
// load (one event query per call, one error query) on a core.
constexpr auto kPollInterval = std::chrono::microseconds(200);

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
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  Status status = Status::kOk;
  std::string message;
  watch(std::move(mark), deadline, what, [&](Status s, const std::string& m) {
    std::lock_guard<std::mutex> guard(mutex);
    status = s;
    message = m;
    done = true;
    finished.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  finished.wait(lock, [&] { return done; });
  if (status != Status::kOk) throw Error(status, message);
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
