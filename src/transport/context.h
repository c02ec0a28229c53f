// A process's membership in the cluster: the bootstrap, the UCX worker and its
// endpoints, and the control channel that carries aborts and notices dead peers.
// Communicators (src/collectives) register here to learn of failures.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/environment.h"
#include "base/json.h"
#include "cluster/resolved_cluster.h"
#include "transport/bootstrap.h"
#include "transport/call_progress.h"
#include "transport/cluster_token.h"
#include "transport/failure_flag.h"

namespace dist {

class Timeline;
class UcxWorker;  // transport/ucx_worker.h, which only the transport includes

struct ContextOptions {
  TokenSources token;
  std::chrono::milliseconds connect_timeout{120000};
  std::chrono::milliseconds timeout{60000};  // default deadline of each collective
  // Records a timeline to "<prefix>.<rank>.json" (base/timeline.h); empty:
  // DIST_TIMELINE's, when set.
  std::string timeline_prefix;
  Environment env = Environment::from_process();
};

class Context {
 public:
  // Joins the cluster: the chief and the workers, in that order, are ranks
  // 0..n-1. Blocks until every member has connected or the connect deadline.
  Context(const ResolvedCluster& cluster, const ContextOptions& options);
  // The same, for a task already listening at its cluster address (a port the
  // system picked, swapped before the cluster was known: transport/
  // oob_bootstrap.h), with a connect deadline already running.
  Context(const ResolvedCluster& cluster, const ContextOptions& options, Socket listener, SteadyTime deadline);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(names_.size()); }
  const std::string& name(int rank) const { return names_[static_cast<size_t>(rank)]; }
  // The machine a member runs on (topology/host_identity.h): equal strings <=>
  // one host. Known for every member once the context exists.
  const std::string& host_id(int rank) const { return host_ids_[static_cast<size_t>(rank)]; }
  // "worker:1 on host NAME (ADDRESS)": a task and where it runs, for messages
  // about a peer (the name alone before the bootstrap told where).
  std::string describe(int rank) const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  // The timeline this rank records, opened at the first ask; null when none
  // was asked for.
  std::shared_ptr<Timeline> timeline();
  // Null for a single-process context.
  UcxWorker* worker() { return worker_.get(); }
  // Whether the worker gives large payloads endpoints of their own
  // (UcxWorker::bulk_endpoint); false for a single-process context.
  bool has_bulk_endpoints() const;

  // A communicator over `members` (context ranks) learns of failures through
  // the returned flag; a local failure set on it is sent to those members.
  std::shared_ptr<FailureFlag> register_comm(uint32_t comm_id, const std::vector<int>& members);
  // Where the communicator is in its calls, for peers that ask (below), and
  // what dump() says of it (a JSON object; called under the registry's lock,
  // never after unregister_comm).
  void publish_state(uint32_t comm_id, std::shared_ptr<const CallProgress> progress, std::function<Json()> dump);
  // This rank and every registered communicator, as JSON (dist_context_dump).
  Json dump();
  // Asks each of `members` (context ranks; this one is read here) where it is
  // in communicator `comm_id`'s calls; returns their answers, by position in
  // `members`, within `wait` (a member that has not answered by then, or does
  // not have the communicator, is left unanswered).
  std::vector<MemberProgress> query_progress(uint32_t comm_id, const std::vector<int>& members,
                                             std::chrono::milliseconds wait);
  void unregister_comm(uint32_t comm_id);

  // Fails every communicator here and on every peer with `reason`.
  void abort(const std::string& reason);

  // Communicator ids: the next one this process has not used (for split).
  uint32_t next_comm_id() const { return next_comm_id_; }
  void use_comm_id(uint32_t id) { next_comm_id_ = std::max(next_comm_id_, id + 1); }

 private:
  // The constructors' work: bootstrap, UCX endpoints, the monitor.
  void join_cluster(const ResolvedCluster& cluster, const ContextOptions& options, Socket listener,
                    SteadyTime deadline);
  struct Registration {
    std::vector<int> members;
    std::shared_ptr<FailureFlag> flag;
    std::shared_ptr<const CallProgress> progress;
    std::function<Json()> dump;
  };
  // A progress query of this process, waiting for its answers.
  struct ProgressQuery {
    uint32_t comm_id = 0;
    std::map<int, MemberProgress> answers;  // by context rank
  };
  void answer_progress(int rank, const std::string& question);
  void take_progress_answer(int rank, const std::string& answer);
  void start_monitor();
  void monitor_loop();
  void on_peer_lost(int rank, const std::string& reason, bool left_cleanly);
  // UCX reports endpoint errors also when a peer closes after a clean finish;
  // the control channel decides which it was.
  void on_transport_error(int rank, const std::string& reason);
  void on_frame(int rank);
  void send_frame(int rank, uint32_t type, uint32_t comm_id, Status status, const std::string& message);
  void fail_comm_locally(uint32_t comm_id, Status status, const std::string& message);
  bool is_lost(size_t rank);
  // Members of a communicator that failed here: their endpoints are closed
  // without waiting for an orderly finish.
  void mark_troubled(const std::vector<int>& members);
  // By rank: lost, or a member of a failed communicator.
  std::vector<bool> lost_or_troubled();

  int rank_ = 0;
  std::string timeline_prefix_;
  std::once_flag timeline_once_;
  std::shared_ptr<Timeline> timeline_;
  std::vector<std::string> names_;
  std::vector<std::string> host_ids_;  // by rank
  std::chrono::milliseconds timeout_;
  std::unique_ptr<UcxWorker> worker_;
  std::vector<BootstrapPeer> peers_;
  std::vector<std::mutex> send_locks_;  // one writer per control socket

  std::mutex queries_mutex_;
  std::condition_variable queries_signal_;
  std::map<uint64_t, ProgressQuery> queries_;  // by query id
  uint64_t next_query_ = 1;

  std::mutex registry_mutex_;
  std::map<uint32_t, Registration> registry_;
  // Failures peers reported for communicators not registered here yet (a fast
  // peer can fail a call before this process has finished creating the comm).
  std::map<uint32_t, std::pair<Status, std::string>> early_failures_;
  std::vector<std::string> lost_;  // by rank: why the peer is gone ("" while alive); registry_mutex_
  std::vector<std::string> transport_errors_;  // by rank; registry_mutex_
  std::vector<SteadyTime> transport_error_at_;  // by rank; registry_mutex_
  std::mutex troubled_mutex_;  // apart: flags are set under registry_mutex_
  std::vector<bool> troubled_;  // by rank; troubled_mutex_

  std::thread monitor_;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  uint32_t next_comm_id_ = 1;  // 0 is the world communicator
};

}  // namespace dist
