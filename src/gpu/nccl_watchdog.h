// The watchdog of an NCCL communicator: NCCL's own calls never end on their
// own when a peer is gone (its kernels spin), so a thread polls every pending
// call's stream mark, NCCL's asynchronous error, the communicator's failure
// flag (a dead peer, dist_context_abort) and each call's deadline; a blocking
// call polls its own the same way in the calling thread. The first failure
// aborts the NCCL communicator, is recorded on the failure flag (so the peers
// learn of it over the context) and fails every pending call and every later
// one: never a hang.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "gpu/cuda_memory.h"
#include "gpu/nccl_communicator.h"
#include "transport/failure_flag.h"

namespace dist {

class NcclWatchdog {
 public:
  using Done = std::function<void(Status status, const std::string& message)>;

  NcclWatchdog(NcclCommunicator& nccl, std::shared_ptr<FailureFlag> failure);
  // Waits for the pending calls (each by its deadline), then stops.
  ~NcclWatchdog();
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;

  // Runs `enqueue` (which puts NCCL work on a stream) unless the
  // communicator failed, excluding an abort meanwhile; throws the failure.
  void enqueue(const std::function<void()>& enqueue);

  // Calls done(kOk) once the stream reaches `mark`, or done(error) when the
  // communicator fails or `deadline` passes first. `what` names the call.
  void watch(std::unique_ptr<StreamMark> mark, std::chrono::steady_clock::time_point deadline, std::string what,
             Done done);
  // The same for a blocking call, polled in the calling thread (no hand-off
  // to the watchdog's): returns once reached, throws the failure.
  void wait(std::unique_ptr<StreamMark> mark, std::chrono::steady_clock::time_point deadline, const std::string& what);

 private:
  struct Pending {
    std::unique_ptr<StreamMark> mark;
    std::chrono::steady_clock::time_point deadline;
    std::string what;
    Done done;
  };
  // A call's outcome, delivered once the lock is released (the callback may
  // issue the next call).
  struct Outcome {
    Done done;
    Status status;
    std::string message;
  };
  void loop();
  // One pass over the pending calls: those reached, or all on a failure,
  // move to `outcomes`. Called with mutex_ held.
  void poll_locked(std::vector<Outcome>& outcomes);
  // Aborts the NCCL communicator, records the failure and fails every
  // pending call into `outcomes`. Called with mutex_ held.
  void fail_locked(Status status, const std::string& message, std::vector<Outcome>& outcomes);
  // The same from a blocking call's thread, which then throws the failure.
  [[noreturn]] void fail_now(Status status, const std::string& message);

  NcclCommunicator& nccl_;
  std::shared_ptr<FailureFlag> failure_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dist
