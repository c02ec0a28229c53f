#include "strategy/replica_rendezvous.h"

namespace dist {

namespace {

// Every replica must make the same call; names the first that differs.
void check_same_call(const std::vector<Contribution>& contributions) {
  for (size_t r = 1; r < contributions.size(); ++r) {
    if (contributions[r].what != contributions[0].what || contributions[r].key != contributions[0].key) {
      fail_invalid("local replicas disagree: replica 0 called " + contributions[0].what + " but replica " +
                   std::to_string(r) + " called " + contributions[r].what);
    }
  }
}

}  // namespace

ReplicaRendezvous::ReplicaRendezvous(int replicas)
    : replicas_(replicas), contributions_(static_cast<size_t>(replicas)) {}

void ReplicaRendezvous::exchange(int replica, const Contribution& contribution, const Step& step) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (aborted_) fail(Status::kAborted, abort_reason_);
  contributions_[static_cast<size_t>(replica)] = contribution;
  const uint64_t generation = generation_;
  if (++arrived_ < replicas_) {
    changed_.wait(lock, [&] { return generation_ != generation || aborted_; });
    if (generation_ == generation) fail(Status::kAborted, abort_reason_);
  } else {
    // Everyone else is waiting here, so the step owns every contribution.
    Status status = Status::kOk;
    std::string message;
    lock.unlock();
    try {
      check_same_call(contributions_);
      std::vector<void*> payloads;
      for (const Contribution& c : contributions_) payloads.push_back(c.payload);
      step(payloads);
    } catch (const Error& e) {
      status = e.status();
      message = e.what();
    } catch (const std::bad_alloc&) {
      status = Status::kNoMemory;
      message = "out of memory";
    } catch (const std::exception& e) {
      status = Status::kInternal;
      message = e.what();
    }
    lock.lock();
    step_status_ = status;
    step_message_ = message;
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
  }
  if (step_status_ != Status::kOk) throw Error(step_status_, step_message_);
}

void ReplicaRendezvous::abort(const std::string& reason) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (aborted_) return;
  aborted_ = true;
  abort_reason_ = reason;
  changed_.notify_all();
}

void ReplicaRendezvous::reset() {
  std::lock_guard<std::mutex> guard(mutex_);
  aborted_ = false;
  abort_reason_.clear();
  arrived_ = 0;
  step_status_ = Status::kOk;
  step_message_.clear();
}

}  // namespace dist
