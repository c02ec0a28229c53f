#include "strategy/run.h"

#include <atomic>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/timeline.h"
#include "topology/thread_binding.h"
#ifdef DIST_HAVE_CUDA
#include <optional>

#include "gpu/cuda_memory.h"
#endif

namespace dist {
namespace {

// The first failure of a run; later ones are usually its echo (kAborted).
class FirstFailure {
 public:
  // `who`: "replica 3", or what failed outside any replica.
  void record(const std::string& who, Status status, const std::string& message) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (failed_) return;
    failed_ = true;
    status_ = status;
    message_ = who + ": " + message;
  }
  void rethrow() {
    std::lock_guard<std::mutex> guard(mutex_);
    if (failed_) throw Error(status_, message_);
  }

 private:
  std::mutex mutex_;
  bool failed_ = false;
  Status status_ = Status::kOk;
  std::string message_;
};

// Clears the strategy's "running" flag however run_replicas leaves.
class ActiveRun {
 public:
  explicit ActiveRun(std::atomic<bool>& flag) : flag_(flag) {
    if (flag_.exchange(true)) fail_invalid("dist_strategy_run is already running on this strategy");
  }
  ~ActiveRun() { flag_ = false; }

 private:
  std::atomic<bool>& flag_;
};

}  // namespace

void run_replicas(Strategy& strategy, const std::function<void(ReplicaContext&)>& body) {
  ActiveRun active(strategy.running());
  ReplicaRendezvous& rendezvous = strategy.rendezvous();
  rendezvous.reset();
  FirstFailure failure;
  const int replicas = strategy.num_local_replicas();
  auto run_one = [&](int local_index) {
    ReplicaContext context(strategy, local_index);
    const std::string who = "replica " + std::to_string(context.replica_id());
    try {
      // A lone replica runs on the caller's thread, which is never rebound.
      if (replicas > 1 && !strategy.replica_pus(local_index).empty()) {
        bind_current_thread(strategy.replica_pus(local_index));
      }
#ifdef DIST_HAVE_CUDA
      // A GPU replica's thread drives its GPU (the caller's own current
      // device comes back after a lone replica ran on its thread).
      std::optional<DeviceScope> device;
      if (strategy.replica_device(local_index) >= 0) device.emplace(strategy.replica_device(local_index));
#endif
      TimelineSpan span(strategy.timeline(), "replica fn", "replica", who);
      if (span.recording()) span.event().add("replica", context.replica_id());
      body(context);
      return;
    } catch (const Error& e) {
      failure.record(who, e.status(), e.what());
    } catch (const std::bad_alloc&) {
      failure.record(who, Status::kNoMemory, "out of memory");
    } catch (const std::exception& e) {
      failure.record(who, Status::kInternal, e.what());
    }
    rendezvous.abort(who + " failed");
  };
  if (replicas == 1) {
    run_one(0);  // no thread to start for a single replica
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(replicas));
    try {
      for (int i = 0; i < replicas; ++i) threads.emplace_back(run_one, i);
    } catch (const std::system_error& e) {
      failure.record("dist_strategy_run", Status::kSystem, std::string("cannot start a replica thread: ") + e.what());
      rendezvous.abort("a replica thread could not be started");
    }
    for (std::thread& t : threads) t.join();
  }
  failure.rethrow();
}

}  // namespace dist
