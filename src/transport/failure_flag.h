// The sticky failure state of one communicator. The first failure wins and is
// what every pending and later call reports; checking it is one atomic load,
// cheap enough for every turn of a polling loop.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "base/status.h"

namespace dist {

class FailureFlag {
 public:
  // Told about failures found here (not those reported by peers), so that the
  // peers learn of them too.
  using Propagate = std::function<void(Status, const std::string&)>;
  void set_propagate(Propagate propagate) { propagate_ = std::move(propagate); }
  // Told once, when the first failure is recorded (whatever its origin).
  // Called with no lock of this flag held.
  void set_observer(std::function<void()> observer) { observer_ = std::move(observer); }

  // Records the failure unless one is already recorded; true if this one won.
  // `local` failures are passed on to the peers.
  bool set(Status status, const std::string& message, bool local = true) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (status_.load(std::memory_order_relaxed) != 0) return false;
      message_ = message;
      status_.store(static_cast<int32_t>(status), std::memory_order_release);
    }
    if (observer_) observer_();
    if (local && propagate_) propagate_(status, message);
    return true;
  }

  bool failed() const { return status_.load(std::memory_order_acquire) != 0; }

  // Throws the recorded failure, if any.
  void check() const {
    if (!failed()) return;
    std::lock_guard<std::mutex> guard(mutex_);
    throw Error(static_cast<Status>(status_.load()), message_);
  }

 private:
  std::atomic<int32_t> status_{0};
  mutable std::mutex mutex_;
  std::string message_;
  Propagate propagate_;
  std::function<void()> observer_;
};

}  // namespace dist
