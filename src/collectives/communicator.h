// A communicator: a group of context members with its own id, sequence of calls,
// channel (and, on one host, shared-memory group; across hosts with neighbours,
// a hierarchy of host groups and channel views), deadline and failure state. Calls run strictly in call order: a
// blocking call on an idle communicator runs in the calling thread (no hand-off
// on the fast path); otherwise calls queue for the communicator's own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/call_stats.h"
#include "collectives/call_trace.h"
#include "collectives/collective_call.h"
#include "collectives/flight_recorder.h"
#include "collectives/hierarchical/hierarchy.h"
#include "collectives/host_layout.h"
#include "collectives/operation.h"
#include "collectives/shm/group.h"
#include "collectives/shm/run_shm.h"
#include "transport/channel.h"
#include "transport/context.h"
#include "transport/message_port.h"
#include "transport/stall_watch.h"

namespace dist {

class DeviceCalls;
class Timeline;

class Communicator {
 public:
  // members[r] is the context rank of communicator rank r.
  Communicator(Context& context, uint32_t id, std::vector<int> members);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(members_.size()); }
  uint32_t id() const { return id_; }
  // Which ranks share a host (dist_comm_local_rank, dist_comm_num_hosts, ...).
  const HostLayout& hosts() const { return hosts_; }

  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  // How long a call waits before it logs who is behind (0: never); default
  // 30 s, or DIST_STALL_WARNING_SECONDS. Not while calls run.
  void set_stall_warning(std::chrono::milliseconds after) { stall_.set_warn_after(after); }
  std::chrono::milliseconds stall_warning() const { return stall_.warn_after(); }
  // Floating-point SUM, PROD and MEAN combined in rank order, the same bits on
  // every path (deterministic.h); default DIST_DETERMINISTIC. Not while calls run.
  void set_deterministic(bool deterministic) { deterministic_ = deterministic; }
  bool deterministic() const { return deterministic_; }
  // Who holds call `seq` up, asking every member where it is ("" when none is
  // behind): what a stall warning and a timeout say.
  std::string describe_behind(uint64_t seq);
  // What dist_context_dump says of it: id, members, path, progress and its
  // flight recorder's calls.
  Json dump() const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  // The deadline of a wait that starts now.
  std::chrono::steady_clock::time_point deadline() const { return std::chrono::steady_clock::now() + timeout_; }
  void set_algorithms(const AlgorithmOptions& algorithms);
  // Whether its calls are timed (dist_comm_stats' time): off by default, on
  // with DIST_COMM_TIMING=1. Not while calls run.
  void set_timing(bool timing) { trace_target_.timing = timing; }
  bool timing() const { return trace_target_.timing; }
  // The timeline its calls are recorded on; null when none records.
  const std::shared_ptr<Timeline>& timeline() const { return timeline_; }
  // Its counters, per collective, path and algorithm: calls on host memory,
  // then those on CUDA memory (device_calls.h counts them).
  std::vector<CallStatsRow> stats() const;
  void reset_stats();
  CallStats& device_stats() { return device_stats_; }
  const AlgorithmOptions& algorithms() const { return algorithms_; }
  // True when all ranks share one host and run collectives through a shared
  // segment (collectives/shm/attach.h says when).
  bool has_shared_memory() const { return shm_ != nullptr; }
  // How its collectives travel: self (one rank), shared memory, hierarchical,
  // or point to point.
  Path path() const { return path_; }
  // True when an all-reduce may take its input in pieces and hand its result
  // to a sink (CollectiveCall::pieces): on the shared segment, unless a
  // point-to-point all-reduce is forced.
  bool takes_pieces() const;

  // The algorithm a call of `kind` with `bytes` per rank runs (static string:
  // its row's name in the table, or "self").
  const char* algorithm_for(CollectiveKind kind, size_t bytes) const;

  // Runs the call (blocking); throws its failure.
  void run(const CollectiveCall& call);
  // Queues the call; the operation completes when it has run.
  std::shared_ptr<Operation> submit(const CollectiveCall& call);

  // Its point-to-point messages (point_to_point.h), apart from the calls
  // above; null on a communicator of one rank, which has no peer.
  MessagePort* messages() { return messages_.get(); }

#ifdef DIST_HAVE_CUDA
  // Its calls on CUDA buffers (device_calls.h).
  DeviceCalls& device_calls();
  // The path they took, once the first chose (false before).
  bool device_path(Path* path) const;
#endif
  // Its failure state: the first failure, which every later call reports.
  const std::shared_ptr<FailureFlag>& failure() const { return failure_; }

  // Collective over this communicator; nullptr for a negative color.
  std::unique_ptr<Communicator> split(int32_t color, int32_t key);
  // Collective: the ranks of this rank's host, in this communicator's order.
  std::unique_ptr<Communicator> split_host();

 private:
  // Runs one call in this thread; throws its failure after recording it.
  void execute_call(const CollectiveCall& call);
  // After a failed call: the peers on this host stop copying to and from
  // this rank's buffers before the call returns (ShmGroup::withdraw).
  void withdraw_from_host();
  void execute(Operation& op);
  // The all-reduce algorithm forced by options or DIST_ALLREDUCE_ALGO; empty for AUTO.
  const std::string& forced_all_reduce() const;
  // Reads forced_all_reduce() into forced_ and all_reduce_path_, once per
  // change rather than by string comparisons on every call.
  void resolve_forced_all_reduce();
  // The path a call of `kind` takes.
  Path path_for(CollectiveKind kind) const {
    if (kind == CollectiveKind::kAllToAllV) return path_ == Path::kSelf ? path_ : Path::kPointToPoint;
    return kind == CollectiveKind::kAllReduce ? all_reduce_path_ : path_;
  }
  void enqueue(const std::shared_ptr<Operation>& op);
  // Take the right to run calls (kBusy): for the queue's next operation (the
  // worker, under queue_mutex_), or only when nothing is queued (split).
  bool claim_for_queued();
  bool claim_when_idle();
  // Gives it back, waking the worker when operations wait.
  void release();
  void worker_loop();
  std::vector<int64_t> exchange_split_keys(int32_t color, int32_t key);

  Context& context_;
  uint32_t id_;
  std::vector<int> members_;
  int rank_ = -1;
  HostLayout hosts_;
  std::shared_ptr<FailureFlag> failure_;
  std::unique_ptr<Channel> channel_;
  std::unique_ptr<MessagePort> messages_;
  std::unique_ptr<ShmGroup> shm_;  // null: every call goes through channel_
  std::unique_ptr<Hierarchy> hierarchy_;  // the hierarchical path's groups and views, over channel_
  std::chrono::milliseconds timeout_;
  AlgorithmOptions algorithms_;
  std::string environment_all_reduce_;  // DIST_ALLREDUCE_ALGO, used when AUTO
  Path path_ = Path::kSelf;
  ForcedAllReduce forced_;
  // path_, or the path a forced all-reduce asks for where this communicator
  // offers it (point to point beside shared memory).
  Path all_reduce_path_ = Path::kSelf;
  uint64_t next_seq_ = 0;
  CallStats stats_;
  bool deterministic_ = false;
  std::shared_ptr<CallProgress> progress_ = std::make_shared<CallProgress>();  // what peers asking are told
  StallWatch stall_;
  FlightRecorder recorder_{FlightRecorder::entries_from_environment()};
  std::shared_ptr<Timeline> timeline_;
  CallTraceTarget trace_target_;  // what each call's trace notes to
  CallStats device_stats_;  // written by device_calls_, which the first call on CUDA memory makes

  std::mutex queue_mutex_;
  std::condition_variable queue_signal_;
  std::deque<std::shared_ptr<Operation>> queue_;
  // kBusy while a call runs, plus kQueued per operation in queue_ (changed
  // under queue_mutex_): a blocking call claims an idle communicator with one
  // compare-and-swap, no lock.
  static constexpr uint32_t kBusy = 1;
  static constexpr uint32_t kQueued = 2;
  std::atomic<uint32_t> state_{0};
  bool stopping_ = false;
  std::thread worker_;
#ifdef DIST_HAVE_CUDA
  std::unique_ptr<DeviceCalls> device_calls_;  // made at the first call on CUDA buffers
#endif
};

}  // namespace dist
