#include "transport/ucx_message_port.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "transport/ucx_worker.h"

namespace dist {

namespace {

constexpr uint32_t kMessageMagic = 0x44495350;  // "DISP"
constexpr uint64_t kPointToPointBit = 2;       // never set in a collective's tag
constexpr uint64_t kPayloadBit = 1;
constexpr int kTagShift = 2;
constexpr int kSenderShift = 33;
constexpr int kCommShift = 49;
constexpr uint64_t kSenderMask = uint64_t{0xFFFF} << kSenderShift;
constexpr uint32_t kMaxCommId = (1u << 15) - 1;
constexpr int kMaxContextRank = (1 << 16) - 1;
// Up to this payload the data travels inside the header's message.
constexpr size_t kInlineBytes = 16 * 1024;
constexpr auto kCancelGrace = std::chrono::seconds(1);
// A waiting thread polls this many idle turns, then yields; the port's own
// thread naps after kIdleBeforeNap without progress (it may wait long for a
// receive while collectives run beside it).
constexpr unsigned kSpinTurns = 2000;
constexpr auto kIdleBeforeNap = std::chrono::milliseconds(1);
constexpr auto kNap = std::chrono::microseconds(20);

// The header of every message; its layout is the wire format.
struct MessageHeader {
  uint32_t magic;
  uint32_t comm_id;
  int32_t source;   // sender's communicator rank
  int32_t tag;
  int32_t dtype;
  uint32_t payload_follows;
  uint64_t count;
};
static_assert(sizeof(MessageHeader) == 32, "MessageHeader changed its wire layout");

// What a message reports once its communicator has failed: ABORTED after
// dist_context_abort (as every call then), PEER_FAILED otherwise (a member
// died, or a collective failed the communicator).
Status failed_status(const Error& failure) {
  return failure.status() == Status::kAborted ? Status::kAborted : Status::kPeerFailed;
}

struct Message;
struct PartRef {
  Message* message;
  int part;  // 0: header (and inline data), 1: payload
};

// Everything UCX's callbacks write to, on the heap; one given up before UCX
// let go of it goes to the worker (UcxWorker::keep_until_destroyed).
struct Message : UcxWorker::Abandoned {
  bool is_receive = false;
  bool background = false;
  MessageSpec spec;
  size_t bytes = 0;
  Deadline deadline{};
  MessageDone done;
  MessageHeader header{};
  std::vector<char> bounce;
  void* requests[2] = {nullptr, nullptr};
  PartRef refs[2] = {{this, 0}, {this, 1}};
  ucs_status_t status[2] = {UCS_OK, UCS_OK};
  size_t received[2] = {0, 0};
  int posted = 0;          // parts handed to UCX
  int parts_done = 0;      // parts UCX has finished with
  bool header_handled = false;
  bool finished = false;   // its outcome is decided (done queued)
  int source = -1;
  bool ucx_idle() const { return parts_done == posted; }
  // Ready for another message; the bounce buffer keeps its capacity.
  void reset() {
    is_receive = background = false;
    spec = MessageSpec{};
    bytes = 0;
    deadline = Deadline{};
    done = nullptr;
    header = MessageHeader{};
    bounce.clear();
    requests[0] = requests[1] = nullptr;
    status[0] = status[1] = UCS_OK;
    received[0] = received[1] = 0;
    posted = parts_done = 0;
    header_handled = finished = false;
    source = -1;
  }
};

// An outcome to report once no lock is held.
struct Completion {
  MessageDone done;
  Status status;
  std::string message;
  int source;
};

void record(PartRef* ref, ucs_status_t status, size_t length) {
  Message* m = ref->message;
  m->status[ref->part] = status;
  m->received[ref->part] = length;
  ++m->parts_done;
}

void on_send_done(void*, ucs_status_t status, void* user_data) {
  record(static_cast<PartRef*>(user_data), status, 0);
}

void on_recv_done(void*, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
  record(static_cast<PartRef*>(user_data), status, info != nullptr ? info->length : 0);
}

class UcxMessagePort : public MessagePort {
 public:
  UcxMessagePort(UcxWorker& worker, uint32_t comm_id, std::vector<int> members, std::vector<std::string> names,
                 int rank, std::shared_ptr<FailureFlag> failure)
      : worker_(worker),
        comm_id_(comm_id),
        members_(std::move(members)),
        names_(std::move(names)),
        rank_(rank),
        failure_(std::move(failure)) {
    if (comm_id_ > kMaxCommId) {
      unsupported_ = "point-to-point messages need a communicator id below " + std::to_string(kMaxCommId + 1) +
                     " (this one is " + std::to_string(comm_id_) + ")";
    }
    for (int m : members_) {
      if (m > kMaxContextRank) {
        unsupported_ = "point-to-point messages reach context ranks up to " + std::to_string(kMaxContextRank) +
                       " (this communicator holds " + std::to_string(m) + ")";
      }
    }
  }

  ~UcxMessagePort() override;

  void post(bool is_receive, const MessageSpec& spec, Deadline deadline, bool background,
            MessageDone done) override;
  void drive_until(const std::function<bool()>& finished) override;

 private:
  uint64_t ucx_tag(int comm_rank, int32_t tag, bool payload) const {
    return (uint64_t{comm_id_} << kCommShift) |
           (static_cast<uint64_t>(members_[static_cast<size_t>(comm_rank)]) << kSenderShift) |
           (static_cast<uint64_t>(static_cast<uint32_t>(tag)) << kTagShift) | kPointToPointBit |
           (payload ? kPayloadBit : 0);
  }
  std::string peer_name(int peer) const {
    return worker_.describe(names_[static_cast<size_t>(peer)], members_[static_cast<size_t>(peer)]);
  }
  const std::string& me() const { return names_[static_cast<size_t>(rank_)]; }
  std::string what(const Message& m) const;

  Message& new_message();
  void post_send_part(Message& m, int part, const void* data, size_t bytes, bool bulk);
  void post_recv_part(Message& m, int part, void* data, size_t bytes, uint64_t tag, uint64_t mask);
  // One turn under the worker's lock: progress, then every message's next step.
  unsigned turn(std::vector<Completion>* out);
  void advance(Message& m, std::vector<Completion>* out);
  void handle_header(Message& m, std::vector<Completion>* out);
  void finish(Message& m, Status status, const std::string& message, std::vector<Completion>* out);
  void fail_all(Status status, const std::string& message, std::vector<Completion>* out);
  void release_idle();
  static void report(std::vector<Completion>& completions);
  void background_loop();

  UcxWorker& worker_;
  uint32_t comm_id_;
  std::vector<int> members_;
  std::vector<std::string> names_;
  int rank_;
  std::shared_ptr<FailureFlag> failure_;
  std::string unsupported_;

  // Under the worker's lock: messages in posting order (the order their
  // payloads are asked for, which keeps each (sender, tag) in order).
  std::vector<std::unique_ptr<Message>> live_;
  std::vector<std::unique_ptr<Message>> spare_;

  std::mutex thread_mutex_;
  std::condition_variable thread_signal_;
  std::atomic<int> background_pending_{0};
  std::atomic<bool> stopping_{false};
  uint64_t turns_ = 0;  // under the worker's lock
  std::thread thread_;
};

std::string UcxMessagePort::what(const Message& m) const {
  const std::string shape = std::string(name(m.spec.dtype)) + " x " + std::to_string(m.spec.count) + " with tag " +
                            std::to_string(m.spec.tag);
  if (!m.is_receive) return "a send of " + shape + " to " + peer_name(m.spec.peer);
  return "a receive of " + shape + " from " +
         (m.spec.peer == MessageSpec::kAnySource ? std::string("any rank") : peer_name(m.spec.peer));
}

Message& UcxMessagePort::new_message() {
  if (spare_.empty()) return *live_.emplace_back(std::make_unique<Message>());
  live_.push_back(std::move(spare_.back()));
  spare_.pop_back();
  return *live_.back();
}

void UcxMessagePort::post_send_part(Message& m, int part, const void* data, size_t bytes, bool bulk) {
  PartRef& ref = m.refs[part];
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &on_send_done;
  param.user_data = &ref;
  const int peer = members_[static_cast<size_t>(m.spec.peer)];
  ++m.posted;
  void* request = ucp_tag_send_nbx(bulk ? worker_.bulk_endpoint(peer) : worker_.endpoint(peer), data, bytes,
                                   ucx_tag(rank_, m.spec.tag, part == 1), &param);
  if (UCS_PTR_IS_ERR(request)) {
    record(&ref, UCS_PTR_STATUS(request), 0);
  } else if (request == nullptr) {
    record(&ref, UCS_OK, 0);
  } else {
    m.requests[part] = request;
  }
}

void UcxMessagePort::post_recv_part(Message& m, int part, void* data, size_t bytes, uint64_t tag, uint64_t mask) {
  PartRef& ref = m.refs[part];
  ucp_request_param_t param{};
  // The callback is the one place that learns the length received.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &on_recv_done;
  param.user_data = &ref;
  ++m.posted;
  void* request = ucp_tag_recv_nbx(worker_.worker(), data, bytes, tag, mask, &param);
  if (UCS_PTR_IS_ERR(request)) {
    record(&ref, UCS_PTR_STATUS(request), 0);
  } else {
    m.requests[part] = request;
  }
}

void UcxMessagePort::post(bool is_receive, const MessageSpec& spec, Deadline deadline, bool background,
                          MessageDone done) {
  std::vector<Completion> completions;
  {
    std::lock_guard<std::mutex> guard(worker_.lock());
    Message& m = new_message();
    m.is_receive = is_receive;
    m.background = background;
    m.spec = spec;
    m.bytes = static_cast<size_t>(spec.count) * size_of(spec.dtype);
    m.deadline = deadline;
    m.done = std::move(done);
    if (background) background_pending_.fetch_add(1);
    if (!unsupported_.empty()) {
      finish(m, Status::kUnsupported, unsupported_, &completions);
    } else if (failure_->failed()) {
      try {
        failure_->check();
      } catch (const Error& e) {
        finish(m, failed_status(e), e.what(), &completions);
      }
    } else if (is_receive) {
      const bool any = spec.peer == MessageSpec::kAnySource;
      m.bounce.resize(sizeof(MessageHeader) + kInlineBytes);
      post_recv_part(m, 0, m.bounce.data(), m.bounce.size(), ucx_tag(any ? rank_ : spec.peer, spec.tag, false),
                     any ? ~kSenderMask : ~uint64_t{0});
    } else {
      m.header = MessageHeader{kMessageMagic, comm_id_, rank_, spec.tag, static_cast<int32_t>(spec.dtype),
                               m.bytes > kInlineBytes ? 1u : 0u, spec.count};
      if (m.bytes <= kInlineBytes) {
        m.bounce.resize(sizeof m.header + m.bytes);
        std::memcpy(m.bounce.data(), &m.header, sizeof m.header);
        if (m.bytes > 0) std::memcpy(m.bounce.data() + sizeof m.header, spec.data, m.bytes);
        post_send_part(m, 0, m.bounce.data(), m.bounce.size(), false);
      } else {
        post_send_part(m, 0, &m.header, sizeof m.header, false);
        post_send_part(m, 1, spec.data, m.bytes, true);
      }
    }
    release_idle();
  }
  report(completions);
  if (background) {
    std::lock_guard<std::mutex> guard(thread_mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { background_loop(); });
    thread_signal_.notify_all();
  }
}

void UcxMessagePort::finish(Message& m, Status status, const std::string& message, std::vector<Completion>* out) {
  if (m.finished) return;
  m.finished = true;
  out->push_back(Completion{std::move(m.done), status, message, status == Status::kOk ? m.source : -1});
  m.done = nullptr;
  if (m.background) background_pending_.fetch_sub(1);
  // A receive given up on lets go of the caller's buffer (a send cannot be
  // cancelled; UCX finishes or fails it).
  if (m.is_receive && !m.ucx_idle()) {
    for (void* request : m.requests) {
      if (request != nullptr) ucp_request_cancel(worker_.worker(), request);
    }
  }
}

void UcxMessagePort::handle_header(Message& m, std::vector<Completion>* out) {
  m.header_handled = true;
  if (m.status[0] == UCS_ERR_CANCELED) return;
  if (m.status[0] != UCS_OK) {
    finish(m, Status::kPeerFailed, what(m) + " failed: " + ucs_status_string(m.status[0]), out);
    return;
  }
  MessageHeader h{};
  if (m.received[0] >= sizeof h) std::memcpy(&h, m.bounce.data(), sizeof h);
  const size_t inline_bytes = m.received[0] >= sizeof h ? m.received[0] - sizeof h : 0;
  // Everything read from the wire is checked before it is believed.
  const bool from_peer = h.source >= 0 && h.source < static_cast<int32_t>(members_.size()) && h.source != rank_ &&
                         (m.spec.peer == MessageSpec::kAnySource || h.source == m.spec.peer);
  if (m.received[0] < sizeof h || h.magic != kMessageMagic || h.comm_id != comm_id_ || !from_peer ||
      h.tag != m.spec.tag || h.dtype < 0 || h.dtype >= kDTypeCount ||
      (h.payload_follows == 0 && inline_bytes != h.count * size_of(static_cast<DType>(h.dtype)))) {
    finish(m, Status::kMismatch, me() + " received a malformed message (" + std::to_string(m.received[0]) +
                                     " bytes) for " + what(m),
           out);
    return;
  }
  m.source = h.source;
  const DType dtype = static_cast<DType>(h.dtype);
  if (dtype != m.spec.dtype || h.count != m.spec.count) {
    finish(m, Status::kMismatch, peer_name(h.source) + " sent " + name(dtype) + " x " + std::to_string(h.count) +
                                     " with tag " + std::to_string(h.tag) + " but " + me() + " receives " +
                                     name(m.spec.dtype) + " x " + std::to_string(m.spec.count),
           out);
    // The data that follows must not stay to be matched by a later receive:
    // it is received into nothing (UCX truncates it).
    if (h.payload_follows != 0) post_recv_part(m, 1, nullptr, 0, ucx_tag(h.source, h.tag, true), ~uint64_t{0});
    return;
  }
  if (h.payload_follows == 0) {
    if (m.bytes > 0) std::memcpy(m.spec.data, m.bounce.data() + sizeof h, m.bytes);
    finish(m, Status::kOk, "", out);
    return;
  }
  post_recv_part(m, 1, m.spec.data, m.bytes, ucx_tag(h.source, h.tag, true), ~uint64_t{0});
}

void UcxMessagePort::advance(Message& m, std::vector<Completion>* out) {
  if (m.finished) return;
  if (!m.is_receive) {
    if (!m.ucx_idle()) return;
    const ucs_status_t status = m.status[0] != UCS_OK ? m.status[0] : m.status[1];
    if (status == UCS_OK) {
      finish(m, Status::kOk, "", out);
    } else {
      finish(m, Status::kPeerFailed, what(m) + " failed: " + ucs_status_string(status), out);
    }
    return;
  }
  if (!m.header_handled) {
    if (m.parts_done > 0) handle_header(m, out);
    return;
  }
  if (!m.ucx_idle()) return;
  if (m.status[1] == UCS_ERR_MESSAGE_TRUNCATED || (m.status[1] == UCS_OK && m.received[1] != m.bytes)) {
    finish(m, Status::kMismatch, peer_name(m.source) + " sent a payload of another size than " + me() +
                                     " expects (" + std::to_string(m.bytes) + " bytes) in " + what(m),
           out);
  } else if (m.status[1] != UCS_OK) {
    finish(m, Status::kPeerFailed, what(m) + " failed: " + ucs_status_string(m.status[1]), out);
  } else {
    finish(m, Status::kOk, "", out);
  }
}

void UcxMessagePort::fail_all(Status status, const std::string& message, std::vector<Completion>* out) {
  for (auto& m : live_) finish(*m, status, message, out);
}

unsigned UcxMessagePort::turn(std::vector<Completion>* out) {
  std::lock_guard<std::mutex> guard(worker_.lock());
  // The clock is read only now and then: it costs more than a poll.
  const bool check_clock = (++turns_ & 0x3F) == 0;
  const unsigned progressed = ucp_worker_progress(worker_.worker());
  for (auto& m : live_) advance(*m, out);
  if (failure_->failed()) {
    try {
      failure_->check();
    } catch (const Error& e) {
      fail_all(failed_status(e), e.what(), out);
    }
  } else if (check_clock) {
    const auto now = std::chrono::steady_clock::now();
    for (auto& m : live_) {
      if (m->finished || now < m->deadline) continue;
      finish(*m, Status::kTimeout,
             me() + " timed out: no peer matched " + what(*m) + " by the communicator's deadline", out);
    }
  }
  release_idle();
  return progressed;
}

void UcxMessagePort::release_idle() {
  for (size_t i = 0; i < live_.size();) {
    Message& m = *live_[i];
    if (!m.finished || !m.ucx_idle()) {
      ++i;
      continue;
    }
    for (void*& request : m.requests) {
      if (request != nullptr) ucp_request_free(request);
      request = nullptr;
    }
    m.reset();
    spare_.push_back(std::move(live_[i]));
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void UcxMessagePort::report(std::vector<Completion>& completions) {
  for (Completion& c : completions) {
    if (c.done) c.done(c.status, c.message, c.source);
  }
  completions.clear();
}

void UcxMessagePort::drive_until(const std::function<bool()>& finished) {
  std::vector<Completion> completions;
  unsigned idle = 0;
  while (!finished()) {
    const unsigned progressed = turn(&completions);
    report(completions);
    if (progressed != 0) {
      idle = 0;
      continue;
    }
    // Spin briefly for latency; then give the core away on every idle turn.
    if (++idle > kSpinTurns) std::this_thread::yield();
  }
}

void UcxMessagePort::background_loop() {
  std::vector<Completion> completions;
  std::unique_lock<std::mutex> lock(thread_mutex_);
  while (true) {
    thread_signal_.wait(lock, [this] { return stopping_ || background_pending_.load() > 0; });
    if (stopping_) return;
    lock.unlock();
    unsigned idle = 0;
    auto idle_since = std::chrono::steady_clock::now();
    while (background_pending_.load() > 0) {
      if (stopping_) break;
      const unsigned progressed = turn(&completions);
      report(completions);
      if (progressed != 0) {
        idle = 0;
        continue;
      }
      if (++idle == 1) idle_since = std::chrono::steady_clock::now();
      if (idle <= kSpinTurns) continue;
      if (std::chrono::steady_clock::now() - idle_since > kIdleBeforeNap) {
        std::this_thread::sleep_for(kNap);
      } else {
        std::this_thread::yield();
      }
    }
    lock.lock();
  }
}

UcxMessagePort::~UcxMessagePort() {
  {
    std::lock_guard<std::mutex> guard(thread_mutex_);
    stopping_ = true;
  }
  thread_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<Completion> completions;
  {
    std::lock_guard<std::mutex> guard(worker_.lock());
    fail_all(Status::kAborted, "the communicator was destroyed before " + me() + "'s message completed",
             &completions);
    // The buffers belong to the caller: give UCX a moment to let go of them.
    const auto grace = std::chrono::steady_clock::now() + kCancelGrace;
    auto busy = [&] {
      for (const auto& m : live_) {
        if (!m->ucx_idle()) return true;
      }
      return false;
    };
    while (busy() && std::chrono::steady_clock::now() < grace) ucp_worker_progress(worker_.worker());
    release_idle();
    // What UCX still holds (a send to a peer that never received it) stays
    // with the worker; UCX releases each request when it completes.
    for (auto& m : live_) {
      for (void* request : m->requests) {
        if (request != nullptr) ucp_request_free(request);
      }
      const int peer = m->spec.peer >= 0 ? members_[static_cast<size_t>(m->spec.peer)]
                       : m->source >= 0  ? members_[static_cast<size_t>(m->source)]
                                         : -1;
      worker_.keep_until_destroyed(peer, std::move(m));
    }
    live_.clear();
  }
  report(completions);
}

}  // namespace

std::unique_ptr<MessagePort> make_ucx_message_port(UcxWorker& worker, uint32_t comm_id, std::vector<int> members,
                                                   std::vector<std::string> names, int rank,
                                                   std::shared_ptr<FailureFlag> failure) {
  return std::make_unique<UcxMessagePort>(worker, comm_id, std::move(members), std::move(names), rank,
                                          std::move(failure));
}

}  // namespace dist
