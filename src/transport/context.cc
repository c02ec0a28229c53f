#include "transport/context.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "base/log.h"
#include "base/status.h"
#include "base/timeline.h"
#include "cluster/worker_position.h"
#include "topology/host_identity.h"
#include "transport/dump_on_signal.h"
#include "transport/ucx_worker.h"

namespace dist {

namespace {

enum FrameType : uint32_t {
  kGoodbye = 1,   // the peer destroys its context after finishing its calls
  kFailComm = 2,  // a communicator failed on the peer (mismatch, timeout, ...)
  kAbort = 3,     // the peer called dist_context_abort
  kProgressQuestion = 4,  // "where are you in comm_id's calls?" message: the query's id
  kProgressAnswer = 5,    // message: "<query id> <started> <finished> <kind>", or "<query id> unknown"
};

struct Frame {
  uint32_t type;
  uint32_t comm_id;
  int32_t status;
  uint32_t message_bytes;
};

constexpr uint32_t kMaxFrameMessage = 4096;
constexpr auto kFrameDeadline = std::chrono::seconds(2);
// A peer that said goodbye has finished its calls; a call still waiting for it
// this much later never gets an answer.
constexpr auto kGoodbyeGrace = std::chrono::seconds(2);

bool is_member(const std::vector<int>& members, int rank) {
  for (int m : members) {
    if (m == rank) return true;
  }
  return false;
}

}  // namespace

Context::Context(const ResolvedCluster& cluster, const ContextOptions& options)
    : Context(cluster, options, Socket(), std::chrono::steady_clock::now() + options.connect_timeout) {}

Context::Context(const ResolvedCluster& cluster, const ContextOptions& options, Socket listener, SteadyTime deadline)
    : timeout_(options.timeout) {
  timeline_prefix_ = options.timeline_prefix;
  if (timeline_prefix_.empty()) timeline_prefix_ = options.env.get("DIST_TIMELINE").value_or("");
  const int dump_signal = dump_signal_from_environment();  // a bad name fails before anything starts
  join_cluster(cluster, options, std::move(listener), deadline);
  // Complete: a signal may dump it from now on.
  watch_dump_signal(this, dump_signal);
}

void Context::join_cluster(const ResolvedCluster& cluster, const ContextOptions& options, Socket listener,
                           SteadyTime deadline) {
  if (cluster.spec.empty()) {
    names_.push_back("worker:0");  // a single process: nothing to connect
    host_ids_.push_back(host_identity());
    lost_.assign(1, "");
    return;
  }
  if (!cluster.task_type || !cluster.task_id) {
    fail_invalid("context: the cluster does not say which task this process is (task type/id unset)");
  }
  auto tasks = collective_members(cluster.spec);
  if (tasks.empty()) fail_invalid("context: the cluster has no chief or worker tasks (jobs: " + cluster.spec.job_names() + ")");
  std::vector<std::string> addresses;
  rank_ = -1;
  for (size_t r = 0; r < tasks.size(); ++r) {
    names_.push_back(tasks[r].first + ":" + std::to_string(tasks[r].second));
    addresses.push_back(cluster.spec.task_address(tasks[r].first, tasks[r].second));
    if (tasks[r].first == *cluster.task_type && tasks[r].second == *cluster.task_id) rank_ = static_cast<int>(r);
  }
  if (rank_ < 0) {
    fail(Status::kUnsupported, "context: task " + *cluster.task_type + ":" + std::to_string(*cluster.task_id) +
                                   " is not a chief or worker; only those join the collective context");
  }
  lost_.assign(names_.size(), "");
  if (names_.size() == 1) {
    host_ids_.push_back(host_identity());
    return;
  }

  const std::string token = require_cluster_token(options.token, options.env, "context");
  worker_ = std::make_unique<UcxWorker>();
  BootstrapRequest request;
  request.addresses = addresses;
  request.names = names_;
  request.rank = rank_;
  request.token = token;
  request.cluster_fingerprint = cluster_fingerprint(addresses);
  request.transport_address = worker_->address();
  request.network_address = worker_->network_address();
  request.deadline = deadline;
  request.connect_timeout = options.connect_timeout;
  peers_ = run_bootstrap(request, std::move(listener));

  std::vector<UcxPeer> remote(peers_.size());
  const std::string& my_host = peers_[static_cast<size_t>(rank_)].hello.host_id;
  for (size_t r = 0; r < peers_.size(); ++r) {
    const PeerHello& hello = peers_[r].hello;
    host_ids_.push_back(hello.host_id);
    const std::string host_name = hello.host_id.substr(0, hello.host_id.find('/'));
    remote[r].location = "host " + (host_name.empty() ? std::string("?") : host_name) + " (" +
                         split_address(addresses[r]).host + ")";
    if (static_cast<int>(r) == rank_) continue;
    remote[r].address = hello.transport_address;
    remote[r].network_address = hello.network_address;
    remote[r].same_host = hello.host_id == my_host;
  }
  send_locks_ = std::vector<std::mutex>(peers_.size());
  for (auto& peer : peers_) {
    if (peer.socket.valid()) enable_keepalive(peer.socket.fd());
  }
  transport_errors_.assign(peers_.size(), "");
  troubled_.assign(peers_.size(), false);
  transport_error_at_.assign(peers_.size(), SteadyTime{});
  worker_->connect(remote, [this](int rank, const std::string& reason) { on_transport_error(rank, reason); });
  start_monitor();
}

std::shared_ptr<Timeline> Context::timeline() {
  std::call_once(timeline_once_, [this] {
    if (timeline_prefix_.empty()) return;
    TimelineOwner owner;
    owner.rank = rank_;
    owner.size = size();
    owner.task = name(rank_);
    owner.host_id = host_id(rank_);
    timeline_ = std::make_shared<Timeline>(Timeline::path_for(timeline_prefix_, rank_), owner);
  });
  return timeline_;
}

bool Context::has_bulk_endpoints() const { return worker_ != nullptr && worker_->has_bulk_endpoints(); }

Context::~Context() {
  unwatch_dump_signal(this);
  if (!monitor_.joinable()) return;
  // Say goodbye only after UCX has delivered what this process sent, to the
  // peers still there and not in a failed communicator: a lost one (or one
  // behind a cut link not noticed yet) would hold the flush until its limit,
  // and after a failure an orderly finish has nothing left to keep.
  std::vector<bool> lost = lost_or_troubled();
  worker_->flush(lost, std::chrono::seconds(5));
  for (size_t r = 0; r < peers_.size(); ++r) {
    if (static_cast<int>(r) == rank_ || is_lost(r)) continue;
    try {
      send_frame(static_cast<int>(r), kGoodbye, 0, Status::kOk, "");
    } catch (const Error&) {
      // The peer is gone already; nothing to tell.
    }
  }
  stopping_ = true;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  monitor_.join();
  close(wake_fd_);
  worker_->disconnect(false, lost_or_troubled());
}

void Context::mark_troubled(const std::vector<int>& members) {
  std::lock_guard<std::mutex> guard(troubled_mutex_);
  for (int m : members) {
    if (static_cast<size_t>(m) < troubled_.size()) troubled_[static_cast<size_t>(m)] = true;
  }
}

std::vector<bool> Context::lost_or_troubled() {
  std::vector<bool> result(peers_.size(), false);
  for (size_t r = 0; r < peers_.size(); ++r) result[r] = is_lost(r);
  std::lock_guard<std::mutex> guard(troubled_mutex_);
  for (size_t r = 0; r < peers_.size() && r < troubled_.size(); ++r) result[r] = result[r] || troubled_[r];
  return result;
}

std::string Context::describe(int rank) const {
  return worker_ != nullptr ? worker_->describe(name(rank), rank) : name(rank);
}

std::shared_ptr<FailureFlag> Context::register_comm(uint32_t comm_id, const std::vector<int>& members) {
  auto flag = std::make_shared<FailureFlag>();
  flag->set_observer([this, members] { mark_troubled(members); });
  flag->set_propagate([this, comm_id, members](Status status, const std::string& message) {
    for (int m : members) {
      if (m == rank_) continue;
      try {
        send_frame(m, kFailComm, comm_id, status, message);
      } catch (const Error&) {
        // An unreachable member learns of it from its own failure detection.
      }
    }
  });
  std::lock_guard<std::mutex> guard(registry_mutex_);
  for (int m : members) {
    if (!lost_[static_cast<size_t>(m)].empty()) flag->set(Status::kPeerFailed, lost_[static_cast<size_t>(m)], false);
  }
  if (auto early = early_failures_.find(comm_id); early != early_failures_.end()) {
    flag->set(early->second.first, early->second.second, false);
    early_failures_.erase(early);
  }
  registry_[comm_id] = Registration{members, flag, nullptr, nullptr};
  use_comm_id(comm_id);
  return flag;
}

void Context::publish_state(uint32_t comm_id, std::shared_ptr<const CallProgress> progress, std::function<Json()> dump) {
  std::lock_guard<std::mutex> guard(registry_mutex_);
  auto it = registry_.find(comm_id);
  if (it == registry_.end()) return;
  it->second.progress = std::move(progress);
  it->second.dump = std::move(dump);
}

Json Context::dump() {
  const ClockReading clocks = read_clocks();
  Json out = {{"rank", rank_},
              {"size", size()},
              {"task", name(rank_)},
              {"host_id", host_id(rank_)},
              {"pid", static_cast<int64_t>(getpid())},
              {"steady_ns", clocks.steady_ns},
              {"system_ns", clocks.system_ns}};
  Json communicators = Json::array();
  std::vector<std::string> lost;
  {
    std::lock_guard<std::mutex> guard(registry_mutex_);
    for (const auto& [id, registration] : registry_) {
      Json comm = registration.dump ? registration.dump() : Json{{"id", id}};
      comm["failed"] = registration.flag->failed();
      communicators.push_back(std::move(comm));
    }
    for (const std::string& why : lost_) {
      if (!why.empty()) lost.push_back(why);
    }
  }
  out["communicators"] = std::move(communicators);
  out["lost_peers"] = lost;
  return out;
}

std::vector<MemberProgress> Context::query_progress(uint32_t comm_id, const std::vector<int>& members,
                                                    std::chrono::milliseconds wait) {
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> guard(queries_mutex_);
    id = next_query_++;
    queries_[id].comm_id = comm_id;
  }
  std::vector<MemberProgress> answers(members.size());
  std::vector<bool> asked(members.size(), false);
  for (size_t i = 0; i < members.size(); ++i) {
    const int m = members[i];
    if (m == rank_) {
      std::lock_guard<std::mutex> guard(registry_mutex_);
      auto it = registry_.find(comm_id);
      if (it != registry_.end() && it->second.progress != nullptr) {
        const CallProgress& p = *it->second.progress;
        answers[i] = {true, p.started.load(std::memory_order_acquire), p.finished.load(std::memory_order_acquire),
                      p.kind.load(std::memory_order_relaxed)};
      }
      continue;
    }
    if (peers_.empty() || is_lost(static_cast<size_t>(m))) continue;
    try {
      send_frame(m, kProgressQuestion, comm_id, Status::kOk, std::to_string(id));
      asked[i] = true;
    } catch (const Error&) {
      // Unreachable: it stays unanswered.
    }
  }
  std::unique_lock<std::mutex> lock(queries_mutex_);
  auto all_answered = [&] {
    const ProgressQuery& query = queries_[id];
    for (size_t i = 0; i < members.size(); ++i) {
      if (asked[i] && query.answers.count(members[i]) == 0) return false;
    }
    return true;
  };
  queries_signal_.wait_for(lock, wait, all_answered);
  const ProgressQuery& query = queries_[id];
  for (size_t i = 0; i < members.size(); ++i) {
    auto found = query.answers.find(members[i]);
    if (asked[i] && found != query.answers.end()) answers[i] = found->second;
  }
  queries_.erase(id);
  return answers;
}

void Context::answer_progress(int rank, const std::string& question) {
  // question: "<comm id> <query id>".
  unsigned long long comm_id = 0, query = 0;
  if (std::sscanf(question.c_str(), "%llu %llu", &comm_id, &query) != 2) {
    fail(Status::kPeerFailed, name(rank) + " sent a malformed progress question");
  }
  std::string answer = std::to_string(query) + " unknown";
  {
    std::lock_guard<std::mutex> guard(registry_mutex_);
    auto it = registry_.find(static_cast<uint32_t>(comm_id));
    if (it != registry_.end() && it->second.progress != nullptr) {
      const CallProgress& p = *it->second.progress;
      answer = std::to_string(query) + " " + std::to_string(p.started.load(std::memory_order_acquire)) + " " +
               std::to_string(p.finished.load(std::memory_order_acquire)) + " " +
               std::to_string(p.kind.load(std::memory_order_relaxed));
    }
  }
  send_frame(rank, kProgressAnswer, static_cast<uint32_t>(comm_id), Status::kOk, answer);
}

void Context::take_progress_answer(int rank, const std::string& answer) {
  unsigned long long query = 0, started = 0, finished = 0;
  int kind = -1;
  MemberProgress progress;
  if (std::sscanf(answer.c_str(), "%llu %llu %llu %d", &query, &started, &finished, &kind) == 4) {
    progress = {true, started, finished, kind};
  } else if (std::sscanf(answer.c_str(), "%llu", &query) != 1) {
    fail(Status::kPeerFailed, name(rank) + " sent a malformed progress answer");
  }
  std::lock_guard<std::mutex> guard(queries_mutex_);
  auto it = queries_.find(query);
  if (it == queries_.end()) return;  // too late: the query gave up
  it->second.answers[rank] = progress;
  queries_signal_.notify_all();
}

void Context::unregister_comm(uint32_t comm_id) {
  std::lock_guard<std::mutex> guard(registry_mutex_);
  registry_.erase(comm_id);
}

void Context::abort(const std::string& reason) {
  const std::string message = name(rank_) + " aborted: " + reason;
  {
    std::lock_guard<std::mutex> guard(registry_mutex_);
    for (auto& entry : registry_) entry.second.flag->set(Status::kAborted, message, false);
  }
  for (size_t r = 0; r < peers_.size(); ++r) {
    if (static_cast<int>(r) == rank_ || is_lost(r)) continue;
    try {
      send_frame(static_cast<int>(r), kAbort, 0, Status::kAborted, message);
    } catch (const Error&) {
      // Already unreachable.
    }
  }
}

void Context::send_frame(int rank, uint32_t type, uint32_t comm_id, Status status, const std::string& message) {
  std::string text = message.substr(0, kMaxFrameMessage);
  Frame frame{type, comm_id, static_cast<int32_t>(status), static_cast<uint32_t>(text.size())};
  std::lock_guard<std::mutex> guard(send_locks_[static_cast<size_t>(rank)]);
  int fd = peers_[static_cast<size_t>(rank)].socket.fd();
  auto deadline = std::chrono::steady_clock::now() + kFrameDeadline;
  write_all(fd, &frame, sizeof frame, deadline, name(rank));
  write_all(fd, text.data(), text.size(), deadline, name(rank));
}

void Context::fail_comm_locally(uint32_t comm_id, Status status, const std::string& message) {
  std::lock_guard<std::mutex> guard(registry_mutex_);
  auto it = registry_.find(comm_id);
  if (it != registry_.end()) {
    it->second.flag->set(status, message, false);
  } else {
    early_failures_.emplace(comm_id, std::make_pair(status, message));
  }
}

void Context::on_peer_lost(int rank, const std::string& reason, bool left_cleanly) {
  std::lock_guard<std::mutex> guard(registry_mutex_);
  std::string& lost = lost_[static_cast<size_t>(rank)];
  if (!lost.empty()) return;
  lost = left_cleanly ? describe(rank) + " left the cluster (destroyed its context) while " + name(rank_) + " still needed it"
                      : describe(rank) + " failed: " + reason;
  for (auto& entry : registry_) {
    if (is_member(entry.second.members, rank)) entry.second.flag->set(Status::kPeerFailed, lost, false);
  }
  log_message(left_cleanly ? LogLevel::kDebug : LogLevel::kInfo, name(rank_) + ": " + lost);
}

void Context::on_transport_error(int rank, const std::string& reason) {
  std::lock_guard<std::mutex> guard(registry_mutex_);
  if (!transport_errors_[static_cast<size_t>(rank)].empty()) return;
  transport_errors_[static_cast<size_t>(rank)] = reason;
  transport_error_at_[static_cast<size_t>(rank)] = std::chrono::steady_clock::now();
}

bool Context::is_lost(size_t rank) {
  std::lock_guard<std::mutex> guard(registry_mutex_);
  return !lost_[rank].empty();
}

void Context::start_monitor() {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) fail(Status::kSystem, std::string("context: eventfd: ") + std::strerror(errno));
  monitor_ = std::thread([this] { monitor_loop(); });
}

void Context::on_frame(int rank) {
  int fd = peers_[static_cast<size_t>(rank)].socket.fd();
  auto deadline = std::chrono::steady_clock::now() + kFrameDeadline;
  Frame frame{};
  read_all(fd, &frame, sizeof frame, deadline, name(rank));
  if (frame.message_bytes > kMaxFrameMessage) {
    fail(Status::kPeerFailed, name(rank) + " sent a malformed control frame (" + std::to_string(frame.message_bytes) +
                                  " bytes)");
  }
  std::string message(frame.message_bytes, '\0');
  read_all(fd, message.data(), message.size(), deadline, name(rank));
  if (frame.type == kProgressQuestion) {
    answer_progress(rank, std::to_string(frame.comm_id) + " " + message);
    return;
  }
  if (frame.type == kProgressAnswer) {
    take_progress_answer(rank, message);
    return;
  }
  Status status = static_cast<Status>(frame.status);
  if (frame.status >= 0) status = Status::kPeerFailed;  // a failure must be one
  switch (frame.type) {
    case kFailComm: fail_comm_locally(frame.comm_id, status, message); break;
    case kAbort: {
      std::lock_guard<std::mutex> guard(registry_mutex_);
      for (auto& entry : registry_) entry.second.flag->set(Status::kAborted, message, false);
      break;
    }
    case kGoodbye: throw Error(Status::kOk, "goodbye");
    default: fail(Status::kPeerFailed, name(rank) + " sent an unknown control frame type " + std::to_string(frame.type));
  }
}

void Context::monitor_loop() {
  std::vector<SteadyTime> goodbye_at(peers_.size());
  std::vector<bool> said_goodbye(peers_.size(), false);
  while (!stopping_) {
    std::vector<pollfd> fds;
    std::vector<int> ranks;
    fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    ranks.push_back(-1);
    for (size_t r = 0; r < peers_.size(); ++r) {
      if (static_cast<int>(r) == rank_ || said_goodbye[r] || is_lost(r)) continue;
      fds.push_back(pollfd{peers_[r].socket.fd(), POLLIN, 0});
      ranks.push_back(static_cast<int>(r));
    }
    poll(fds.data(), fds.size(), 200);
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int rank = ranks[i];
      try {
        on_frame(rank);
      } catch (const Error& e) {
        if (e.status() == Status::kOk) {
          said_goodbye[static_cast<size_t>(rank)] = true;
          goodbye_at[static_cast<size_t>(rank)] = std::chrono::steady_clock::now();
        } else {
          on_peer_lost(rank, e.what(), false);
        }
      }
    }
    const auto now = std::chrono::steady_clock::now();
    for (size_t r = 0; r < peers_.size(); ++r) {
      if (said_goodbye[r] && !is_lost(r) && now - goodbye_at[r] > kGoodbyeGrace) {
        on_peer_lost(static_cast<int>(r), "", true);
      }
      // A transport error with the control connection still open and no
      // goodbye: the data path to that peer is broken.
      std::string transport_error;
      {
        std::lock_guard<std::mutex> guard(registry_mutex_);
        if (!transport_errors_[r].empty() && now - transport_error_at_[r] > kGoodbyeGrace) {
          transport_error = transport_errors_[r];
        }
      }
      if (!transport_error.empty() && !said_goodbye[r] && !is_lost(r)) {
        on_peer_lost(static_cast<int>(r), transport_error, false);
      }
    }
  }
}

}  // namespace dist
