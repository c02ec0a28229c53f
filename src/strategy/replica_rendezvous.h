// Where the local replica threads meet for a collective step (an all-reduce, a
// merge call, a variable update): each deposits its contribution, the last to
// arrive runs the step once for all of them, and everyone leaves with the
// step's outcome. A failed replica aborts the rendezvous so that the others
// never wait for it forever.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace dist {

// What one replica brings: which call it is making (`what`, e.g.
// "all_reduce(f32, sum, count=10)", and `key`, e.g. a variable id), and its
// argument. Replicas that disagree on what or key all fail.
struct Contribution {
  std::string what;
  uint64_t key = 0;
  void* payload = nullptr;
};

class ReplicaRendezvous {
 public:
  using Step = std::function<void(const std::vector<void*>& payloads)>;

  explicit ReplicaRendezvous(int replicas);

  // Called by every local replica; the last arrival runs its `step` with the
  // payloads in replica order. Rethrows the step's error in every replica;
  // throws Status::kAborted once abort() was called.
  void exchange(int replica, const Contribution& contribution, const Step& step);

  // Releases every waiting replica (and every later exchange) with kAborted.
  void abort(const std::string& reason);
  // Ready for a new run: no arrivals, not aborted.
  void reset();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int replicas_;
  std::vector<Contribution> contributions_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  std::string abort_reason_;
  // The outcome of the last finished generation.
  Status step_status_ = Status::kOk;
  std::string step_message_;
};

}  // namespace dist
