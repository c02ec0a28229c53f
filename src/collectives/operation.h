// The state of one submitted call (a collective, or a point-to-point send or
// receive): what the C ABI's dist_request_t points at. Completed once, by
// whichever thread ran the call; a completion callback registered on it runs
// exactly once, so that it outlives the caller's handle.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "base/status.h"
#include "collectives/collective_call.h"

namespace dist {

class Operation {
 public:
  // Runs once with the call's status and message ("" on success).
  using Callback = std::function<void(Status status, const std::string& message)>;

  explicit Operation(const CollectiveCall& call) : call_(call) {}
  // A point-to-point send or receive: no collective call behind it.
  explicit Operation(bool is_receive) : is_receive_(is_receive) {}

  const CollectiveCall& call() const { return call_; }
  bool is_receive() const { return is_receive_; }

  // `source`: the communicator rank a receive came from (-1 otherwise).
  void complete(Status status, const std::string& message, int source = -1) {
    Callback callback;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      status_ = status;
      message_ = message;
      source_ = source;
      done_ = true;
      callback.swap(callback_);
    }
    done_signal_.notify_all();
    // Outside the lock: the callback may look at this operation again.
    if (callback) callback(status, message);
  }

  // Registers the completion callback, or runs it at once (on this thread)
  // when the call has completed already. False when one was registered before.
  bool on_complete(Callback callback) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (has_callback_) return false;
      has_callback_ = true;
      if (!done_) {
        callback_ = std::move(callback);
        return true;
      }
    }
    callback(status(), message());
    return true;
  }

  bool done() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return done_;
  }

  // Waits up to `timeout` (negative: without limit); true when done.
  bool wait_for(std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mutex_);
    if (timeout.count() < 0) {
      done_signal_.wait(lock, [this] { return done_; });
      return true;
    }
    return done_signal_.wait_for(lock, timeout, [this] { return done_; });
  }

  // The outcome; only meaningful once done.
  Status status() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return status_;
  }
  std::string message() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return message_;
  }
  int source() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return source_;
  }

 private:
  CollectiveCall call_;
  bool is_receive_ = false;
  mutable std::mutex mutex_;
  mutable std::condition_variable done_signal_;
  bool done_ = false;
  Status status_ = Status::kOk;
  std::string message_;
  int source_ = -1;
  bool has_callback_ = false;
  Callback callback_;
};

}  // namespace dist
