#include "collectives/communicator.h"

#include <algorithm>
#include <cstdlib>

#include "base/numbers.h"
#include "base/timeline.h"
#include "base/status.h"
#include "collectives/algorithm_table.h"
#include "collectives/call_check.h"
#include "collectives/channel_exchange.h"
#include "collectives/deterministic.h"
#include "collectives/hierarchical/run_hierarchical.h"
#include "collectives/run_collective.h"
#include "collectives/shm/attach.h"
#include "collectives/shm/run_shm.h"
#include "collectives/stall_report.h"
#include "transport/ucx_channel.h"
#include "transport/ucx_message_port.h"
#ifdef DIST_HAVE_CUDA
#include "collectives/device_calls.h"
#endif

namespace dist {

namespace {

// A communicator of one rank exchanges no messages; any attempt is a bug.
class SelfChannel : public Channel {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void begin(const CallWords&, uint64_t, Deadline) override {}
  void end() override {}
  TransferId send(int, const void*, size_t) override { fail(Status::kInternal, "a one-rank communicator sent a message"); }
  TransferId recv(int, void*, size_t) override { fail(Status::kInternal, "a one-rank communicator received a message"); }
  void wait(TransferId) override {}
  bool test(TransferId) override { return true; }
};

// DIST_ALLREDUCE_ALGO and DIST_CHUNK_BYTES, read and checked once per
// communicator, before it joins its peers.
AlgorithmOptions algorithms_from_environment() {
  AlgorithmOptions options;
  if (const char* forced = std::getenv("DIST_ALLREDUCE_ALGO"); forced != nullptr && *forced != '\0') {
    ForcedAllReduce known;
    if (!find_forced_all_reduce(forced, &known)) {
      fail_invalid(std::string("DIST_ALLREDUCE_ALGO: '") + forced +
                   "' is not one of " + forced_all_reduce_names(nullptr, "", ", "));
    }
    options.all_reduce = forced;
  }
  // The pipeline chunk of the point-to-point algorithms, for tuning a transport.
  options.chunk_bytes = static_cast<size_t>(integer_from_environment("DIST_CHUNK_BYTES", 4096, int64_t{1} << 30, 0));
  return options;
}

bool context_spans_hosts(const Context& context) {
  for (int r = 0; r < context.size(); ++r) {
    if (context.host_id(r) != context.host_id(context.rank())) return true;
  }
  return false;
}

}  // namespace

Communicator::Communicator(Context& context, uint32_t id, std::vector<int> members)
    : context_(context), id_(id), members_(std::move(members)), timeout_(context.timeout()) {
  for (size_t r = 0; r < members_.size(); ++r) {
    if (members_[r] == context.rank()) rank_ = static_cast<int>(r);
  }
  if (rank_ < 0) fail(Status::kInternal, "communicator " + std::to_string(id) + " does not contain this process");
  std::vector<std::string> host_ids;
  for (int m : members_) host_ids.push_back(context.host_id(m));
  hosts_ = HostLayout::from_host_ids(host_ids, rank_);
  const AlgorithmOptions from_environment = algorithms_from_environment();
  environment_all_reduce_ = from_environment.all_reduce;
  timeline_ = context.timeline();
  trace_target_.stats = &stats_;
  trace_target_.recorder = &recorder_;
  trace_target_.comm_id = id_;
  // A timeline times every call; so does DIST_COMM_TIMING=1.
  // DIST_COMM_TIMING=1 times every communicator's calls (dist_comm_stats).
  trace_target_.timing = timeline_ != nullptr || integer_from_environment("DIST_COMM_TIMING", 0, 1, 0) == 1;
  // DIST_DETERMINISTIC=1: floats reduced in rank order (deterministic.h).
  deterministic_ = integer_from_environment("DIST_DETERMINISTIC", 0, 1, 0) == 1;
  if (timeline_ != nullptr) {
    trace_target_.timeline = timeline_.get();
    trace_target_.lane = timeline_->lane("comm " + std::to_string(id_));
  }
  algorithms_.chunk_bytes = from_environment.chunk_bytes;
  if (algorithms_.chunk_bytes == 0 && context.has_bulk_endpoints()) {
    algorithms_.chunk_bytes = kZeroCopyChunkBytes;
  }
  failure_ = context.register_comm(id_, members_);
  // How long a call waits before it says who is behind (0: never); 30 s by
  // default, as Horovod's stall warning.
  stall_.set_warn_after(std::chrono::seconds(integer_from_environment("DIST_STALL_WARNING_SECONDS", 0, 86400 * 7, 30)));
  stall_.set_behind(context.name(context.rank()), [this](uint64_t seq) { return describe_behind(seq); });
  if (context.worker() == nullptr || members_.size() == 1) {
    channel_ = std::make_unique<SelfChannel>();
  } else {
    std::vector<std::string> names;
    for (int m : members_) names.push_back(context.name(m));
    channel_ = make_ucx_channel(*context.worker(), id_, members_, names, rank_, failure_, &describe_call);
    messages_ = make_ucx_message_port(*context.worker(), id_, members_, names, rank_, failure_);
    try {
      // Ranks on several hosts cannot share one segment; all ranks know the
      // hosts alike, so all skip that exchange alike.
      const auto deadline = std::chrono::steady_clock::now() + timeout_;
      if (hosts_.num_hosts() == 1) {
        shm_ = attach_shared_memory(*channel_, next_seq_, deadline, names, failure_);
      } else if (hosts_.spans_hosts_with_neighbours()) {
        hierarchy_ = attach_hierarchy(*channel_, hosts_, next_seq_, deadline, names, failure_);
      }
      // In a job across hosts, a rank waiting in shared memory keeps UCX
      // moving: a send UCX reported done may still be in this process, and
      // the peer on another host waiting for it may be what the rank waited
      // for here waits on (this communicator's hierarchy, or another one).
      ShmGroup* waits_in_host = shm_ != nullptr ? shm_.get() : hierarchy_ != nullptr ? hierarchy_->host_group() : nullptr;
      if (waits_in_host != nullptr && context_spans_hosts(context)) {
        waits_in_host->set_idle_work([this] { channel_->progress(); });
      }
      if (waits_in_host != nullptr) waits_in_host->set_stall_watch(&stall_);
      channel_->set_stall_watch(&stall_);
    } catch (const Error&) {
      // The communicator failed while being set up (a peer died, or a faster
      // peer already failed a later call on it): it exists, failed, and every
      // call reports why, as it would had the failure come a moment later.
      if (!failure_->failed()) {
        messages_.reset();
        channel_.reset();
        context_.unregister_comm(id_);
        throw;
      }
    }
  }
  path_ = members_.size() == 1      ? Path::kSelf
          : shm_ != nullptr         ? Path::kSharedMemory
          : hierarchy_ != nullptr   ? Path::kHierarchical
                                    : Path::kPointToPoint;
  resolve_forced_all_reduce();
  // Last: from here on the context may call dump() at any time.
  context_.publish_state(id_, progress_, [this] { return dump(); });
}

Communicator::~Communicator() {
#ifdef DIST_HAVE_CUDA
  device_calls_.reset();  // its NCCL calls end first (each by its deadline)
#endif
  {
    std::lock_guard<std::mutex> guard(queue_mutex_);
    stopping_ = true;
  }
  queue_signal_.notify_all();
  if (worker_.joinable()) worker_.join();
  messages_.reset();
  hierarchy_.reset();
  shm_.reset();
  channel_.reset();
  context_.unregister_comm(id_);
}

#ifdef DIST_HAVE_CUDA
DeviceCalls& Communicator::device_calls() {
  if (device_calls_ == nullptr) device_calls_ = std::make_unique<DeviceCalls>(*this);
  return *device_calls_;
}

bool Communicator::device_path(Path* path) const {
  return device_calls_ != nullptr && device_calls_->path(path);
}
#endif

std::string Communicator::describe_behind(uint64_t seq) {
  // Long enough for a peer's monitor thread to answer, short beside a deadline.
  constexpr std::chrono::milliseconds kAnswerWait(1000);
  std::vector<std::string> names;
  for (int m : members_) names.push_back(context_.name(m));
  return dist::describe_behind(names, context_.query_progress(id_, members_, kAnswerWait), seq, id_);
}

Json Communicator::dump() const {
  std::vector<std::string> names;
  for (int m : members_) names.push_back(context_.name(m));
  return {{"id", id_},
          {"rank", rank_},
          {"size", size()},
          {"members", names},
          {"path", name(path_)},
          {"timeout_ms", timeout_.count()},
          {"calls_started", progress_->started.load(std::memory_order_acquire)},
          {"calls_finished", progress_->finished.load(std::memory_order_acquire)},
          {"calls", recorder_.entries()}};
}

std::vector<CallStatsRow> Communicator::stats() const {
  std::vector<CallStatsRow> rows = stats_.rows();
  for (const CallStatsRow& row : device_stats_.rows()) rows.push_back(row);
  return rows;
}

void Communicator::reset_stats() {
  stats_.reset();
  device_stats_.reset();
}

const std::string& Communicator::forced_all_reduce() const {
  return algorithms_.all_reduce.empty() ? environment_all_reduce_ : algorithms_.all_reduce;
}

void Communicator::set_algorithms(const AlgorithmOptions& algorithms) {
  algorithms_ = algorithms;
  resolve_forced_all_reduce();
}

void Communicator::resolve_forced_all_reduce() {
  const std::string& forced = forced_all_reduce();
  // Every name was checked where it came in: DIST_ALLREDUCE_ALGO above, the
  // C ABI's numbers by forced_all_reduce_name.
  if (!find_forced_all_reduce(forced, &forced_)) {
    fail(Status::kInternal, "all-reduce algorithm " + quoted(forced) + " is not in the table of algorithms");
  }
  // A shared-memory or hierarchical communicator also has its channel; a
  // forced path it does not offer leaves the choice to size on its own path.
  const bool offered = forced_.path == path_ || (forced_.path == Path::kPointToPoint &&
                                                 (path_ == Path::kSharedMemory || path_ == Path::kHierarchical));
  all_reduce_path_ = forced_.any && offered ? forced_.path : path_;
}

bool Communicator::takes_pieces() const { return all_reduce_path_ == Path::kSharedMemory && !deterministic_; }

const char* Communicator::algorithm_for(CollectiveKind kind, size_t bytes) const {
  if (path_ == Path::kSelf) return name(Path::kSelf);
  const Path path = path_for(kind);
  // Named for a call into a separate result (dist-bench's).
  if (path == Path::kSharedMemory) return select_algorithm(kind, path, shm_selection(*shm_, bytes, false), forced_).name;
  if (path == Path::kHierarchical) {
    return select_algorithm(kind, path, hierarchical_selection(*hierarchy_, bytes), forced_).name;
  }
  Selection selection;
  selection.bytes = bytes;
  selection.ranks = size();
  return select_algorithm(kind, path, selection, forced_).name;
}

void Communicator::execute_call(const CollectiveCall& call) {
  if (deterministic_ && call.pieces == nullptr && needs_fixed_order(call.signature)) {
    // As data movement (deterministic.h): the calls it makes are this
    // communicator's next ones on every rank alike.
    check_call(size(), rank_, call);
    if (call.gate != nullptr) call.gate->wait(std::chrono::steady_clock::now() + timeout_);
    run_in_fixed_order(call, rank_, size(), [this](const CollectiveCall& part) { execute_call(part); });
    return;
  }
  const uint64_t seq = next_seq_++;
  progress_->begin(seq, static_cast<int32_t>(call.signature.kind));
  CallTrace trace(trace_target_, call, seq);
  const AlgorithmRow* ran = nullptr;
  // Every call past its argument checks counts, under the algorithm that ran
  // it or, when it failed before one took it (a peer's call disagreed, the
  // communicator had failed), the one that would have.
  auto finish = [&](Status status) {
    progress_->end(seq);
    if (ran == nullptr && status == Status::kInvalidArgument) return trace.refuse(status);
    const Path path = path_ == Path::kSelf ? Path::kSelf : path_for(call.signature.kind);
    const char* algorithm = path == Path::kSelf ? name(Path::kSelf) : ran != nullptr ? ran->name : nullptr;
    if (algorithm == nullptr) {
      try {
        algorithm = algorithm_for(call.signature.kind, static_cast<size_t>(counted_bytes(call)));
      } catch (const Error&) {
        return trace.refuse(status);
      }
    }
    trace.finish(status, path, algorithm);
  };
  try {
    // The gate first, even on a failed communicator: it ends what the caller
    // started on a stream (staged_call.h) before the call may fail.
    if (call.gate != nullptr) call.gate->wait(std::chrono::steady_clock::now() + timeout_);
    failure_->check();
    // A forced point-to-point all-reduce bypasses the shared segment (to
    // compare the two); a forced shared-memory one falls back where there is none.
    if (path_for(call.signature.kind) == Path::kSharedMemory) {
      run_shm_collective(*shm_, call, seq, timeout_, forced_, &ran);
      finish(Status::kOk);
      return;
    }
    if (call.pieces != nullptr) fail(Status::kInternal, "a piecewise all-reduce needs the shared-memory path");
    if (path_for(call.signature.kind) == Path::kHierarchical) {
      run_hierarchical_collective(*hierarchy_, call, seq, timeout_, algorithms_, forced_, &ran);
      finish(Status::kOk);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    channel_->begin(call_words(call.signature), seq, deadline);
    run_collective(*channel_, call, algorithms_, forced_, &ran);
    channel_->end();
    finish(Status::kOk);
  } catch (const Error& e) {
    // The first failure sticks to the communicator and reaches its members.
    failure_->set(e.status(), e.what());
    channel_->end();
    withdraw_from_host();
    finish(e.status());
    throw;
  } catch (const std::bad_alloc&) {
    failure_->set(Status::kNoMemory, "out of memory");
    channel_->end();
    withdraw_from_host();
    finish(Status::kNoMemory);
    throw Error(Status::kNoMemory, "out of memory");
  }
}

void Communicator::withdraw_from_host() {
  if (shm_ != nullptr) shm_->withdraw();
  if (hierarchy_ != nullptr && hierarchy_->host_group() != nullptr) hierarchy_->host_group()->withdraw();
}

void Communicator::execute(Operation& op) {
  try {
    execute_call(op.call());
    op.complete(Status::kOk, "");
  } catch (const Error& e) {
    op.complete(e.status(), e.what());
  }
}

void Communicator::run(const CollectiveCall& call) {
  uint32_t idle = 0;
  if (!state_.compare_exchange_strong(idle, kBusy, std::memory_order_acquire)) {
    // Earlier non-blocking calls go first; this one waits its turn.
    auto op = std::make_shared<Operation>(call);
    enqueue(op);
    op->wait_for(std::chrono::milliseconds(-1));
    if (op->status() != Status::kOk) throw Error(op->status(), op->message());
    return;
  }
  // The fast path: runs in the calling thread, allocates nothing and takes no
  // lock (one atomic claim and one release).
  std::exception_ptr failure;
  try {
    execute_call(call);
  } catch (...) {
    failure = std::current_exception();
  }
  release();
  if (failure) std::rethrow_exception(failure);
}

std::shared_ptr<Operation> Communicator::submit(const CollectiveCall& call) {
  auto op = std::make_shared<Operation>(call);
  enqueue(op);
  return op;
}

void Communicator::enqueue(const std::shared_ptr<Operation>& op) {
  std::lock_guard<std::mutex> guard(queue_mutex_);
  if (!worker_.joinable()) worker_ = std::thread([this] { worker_loop(); });
  queue_.push_back(op);
  state_.fetch_add(kQueued, std::memory_order_relaxed);
  queue_signal_.notify_all();
}

bool Communicator::claim_for_queued() {
  uint32_t state = state_.load(std::memory_order_relaxed);
  while ((state & kBusy) == 0) {
    if (state_.compare_exchange_weak(state, state - kQueued + kBusy, std::memory_order_acquire)) return true;
  }
  return false;
}

bool Communicator::claim_when_idle() {
  uint32_t idle = 0;
  return state_.compare_exchange_strong(idle, kBusy, std::memory_order_acquire);
}

void Communicator::release() {
  const uint32_t before = state_.fetch_and(~kBusy, std::memory_order_release);
  if (before == kBusy) return;  // nothing queued: nobody to wake
  // Taking the mutex orders this notification after the worker's last check
  // of the state, so it cannot miss it.
  { std::lock_guard<std::mutex> guard(queue_mutex_); }
  queue_signal_.notify_all();
}

void Communicator::worker_loop() {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  while (true) {
    queue_signal_.wait(lock, [this] { return (!queue_.empty() && claim_for_queued()) || (stopping_ && queue_.empty()); });
    if (queue_.empty()) return;  // stopping, with nothing left to run
    auto op = queue_.front();
    queue_.pop_front();
    lock.unlock();
    execute(*op);
    lock.lock();
    state_.fetch_and(~kBusy, std::memory_order_release);
    queue_signal_.notify_all();
  }
}

std::vector<int64_t> Communicator::exchange_split_keys(int32_t color, int32_t key) {
  // Each rank's (color, key, next free communicator id), gathered everywhere.
  std::vector<int64_t> all(static_cast<size_t>(3 * size()));
  const int64_t mine[3] = {color, key, static_cast<int64_t>(context_.next_comm_id())};
  failure_->check();
  try {
    exchange_with_all(*channel_, CollectiveKind::kSplit, next_seq_++, std::chrono::steady_clock::now() + timeout_,
                      mine, sizeof mine, all.data());
  } catch (const Error& e) {
    failure_->set(e.status(), e.what());
    throw;
  }
  return all;
}

std::unique_ptr<Communicator> Communicator::split(int32_t color, int32_t key) {
  {
    // After every call made before it, queued ones included.
    std::unique_lock<std::mutex> lock(queue_mutex_);
    queue_signal_.wait(lock, [this] { return queue_.empty() && claim_when_idle(); });
  }
  std::vector<int64_t> all;
  try {
    all = exchange_split_keys(color, key);
  } catch (...) {
    release();
    throw;
  }
  release();

  // Every rank computes the same id: one past the largest any member has used,
  // so it is free on every member (disjoint colors may share it safely).
  int64_t new_id = 0;
  for (int r = 0; r < size(); ++r) new_id = std::max(new_id, all[static_cast<size_t>(3 * r + 2)]);
  context_.use_comm_id(static_cast<uint32_t>(new_id));
  if (color < 0) return nullptr;
  std::vector<std::pair<std::pair<int64_t, int>, int>> chosen;  // ((key, parent rank), context rank)
  for (int r = 0; r < size(); ++r) {
    if (all[static_cast<size_t>(3 * r)] == color) chosen.push_back({{all[static_cast<size_t>(3 * r + 1)], r}, members_[static_cast<size_t>(r)]});
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<int> members;
  for (const auto& entry : chosen) members.push_back(entry.second);
  auto comm = std::make_unique<Communicator>(context_, static_cast<uint32_t>(new_id), members);
  comm->set_timeout(timeout_);
  comm->set_algorithms(algorithms_);
  // A part of a communicator observes and orders as the whole does.
  comm->set_timing(timing());
  comm->set_stall_warning(stall_warning());
  comm->set_deterministic(deterministic_);
  return comm;
}

std::unique_ptr<Communicator> Communicator::split_host() {
  return split(hosts_.host_of[static_cast<size_t>(rank_)], rank_);
}

}  // namespace dist
