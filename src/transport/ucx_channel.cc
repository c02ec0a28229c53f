#include "transport/ucx_channel.h"

#include <cstddef>
#include <cstring>
#include <memory>
#include <thread>

#include "base/call_phases.h"
#include "base/status.h"
#include "transport/stall_watch.h"
#include "transport/ucx_worker.h"

namespace dist {

namespace {

// Made only through make_ucx_channel (ucx_channel.h).
class UcxChannel : public Channel {
 public:
  UcxChannel(UcxWorker& worker, uint32_t comm_id, std::vector<int> members, std::vector<std::string> names,
             int rank, std::shared_ptr<FailureFlag> failure, DescribeCall describe_call);
  ~UcxChannel() override;

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  void begin(const CallWords& call, uint64_t seq, Deadline deadline) override;
  void set_stall_watch(StallWatch* watch) override { stall_ = watch; }
  void end() override;
  TransferId send(int peer, const void* data, size_t bytes) override;
  TransferId recv(int peer, void* data, size_t bytes) override;
  void wait(TransferId id) override;
  bool test(TransferId id) override;
  void progress() override;

  struct WireHeader {
    uint32_t magic;
    uint32_t comm_id;
    uint64_t seq;
    CallWords call;
    uint64_t payload_bytes;
  };

  struct Transfer;
  // What one message's completion callback writes to.
  struct PartRef {
    Transfer* transfer;
    int part;
  };
  // A small message travels as one contiguous copy of header + payload; a
  // large one as the header followed by the payload straight from/to the
  // caller's buffer. Everything UCX's callbacks touch lives here, on the
  // heap: a transfer given up on before UCX let go of it (a peer that is
  // gone) goes to the worker (UcxWorker::keep_until_destroyed).
  struct Transfer : UcxWorker::Abandoned {
    bool is_recv = false;
    int peer = -1;
    size_t bytes = 0;
    void* user_data = nullptr;       // receive destination
    WireHeader header{};
    std::vector<char> bounce;        // small messages
    void* requests[2] = {nullptr, nullptr};
    PartRef refs[2] = {{this, 0}, {this, 1}};
    int parts = 0;                   // messages in this transfer (1 or 2)
    int parts_done = 0;
    ucs_status_t status = UCS_OK;
    size_t received[2] = {0, 0};
    bool checked = false;
    bool cancelled = false;          // cancel_outstanding waited for it already
    bool done() const { return parts_done == parts; }
    // Ready for another message; the bounce buffer keeps its capacity.
    void reset() {
      is_recv = false;
      peer = -1;
      bytes = 0;
      user_data = nullptr;
      header = WireHeader{};
      bounce.clear();
      requests[0] = requests[1] = nullptr;
      parts = parts_done = 0;
      status = UCS_OK;
      received[0] = received[1] = 0;
      checked = cancelled = false;
    }
  };

 private:
  uint64_t tag_for(int sender_rank) const;
  void post_send_part(Transfer& t, int part, const void* data, size_t bytes);
  void post_recv_part(Transfer& t, int part, void* data, size_t bytes);
  Transfer& transfer(TransferId id);
  Transfer& new_transfer();
  // Validates a completed transfer; throws on error (and records the failure).
  void finish(Transfer& t);
  [[noreturn]] void fail_call(Status status, const std::string& message);
  // Cancels what can be cancelled (receives) and waits briefly for it.
  void cancel_outstanding();
  // Frees every transfer; one UCX still holds goes to the worker.
  void release_transfers();
  // "worker:1 on host NAME (ADDRESS)": a peer as messages name it.
  std::string describe_peer(int peer) const;

  UcxWorker& worker_;
  uint32_t comm_id_;
  std::vector<int> members_;
  std::vector<std::string> names_;
  int rank_;
  std::shared_ptr<FailureFlag> failure_;
  DescribeCall describe_call_;

  CallWords call_{};
  uint64_t seq_ = 0;
  Deadline deadline_{};
  StallWatch* stall_ = nullptr;
  Deadline first_clock_read_{};  // the call's first wait long enough to read the clock (epoch: none yet)
  std::vector<std::unique_ptr<Transfer>> transfers_;
  std::vector<std::unique_ptr<Transfer>> spare_;  // finished ones, reused: no allocation per message
};

// The header's layout is the wire format: these offsets must never move.
static_assert(sizeof(UcxChannel::WireHeader) == 48 && offsetof(UcxChannel::WireHeader, call) == 16 &&
                  offsetof(UcxChannel::WireHeader, payload_bytes) == 40,
              "UcxChannel::WireHeader changed its wire layout");

constexpr uint32_t kWireMagic = 0x44495354;  // "DIST"
// How long a failed call lets UCX end the receives it cancelled. One still in
// the expected queue ends at the next progress; one UCX has matched already
// (a message from the lost peer partly received: eager fragments, or a
// rendezvous under way) cannot be cancelled, and waiting does not end it:
// with a second of grace the survivors of a cut link erred a second late
// (bench/faults/trials: 5.0 s after the fault for a 3 s deadline).
constexpr auto kCancelGrace = std::chrono::milliseconds(100);
// Up to this payload, copying into one contiguous message beats a second message.
constexpr size_t kSmallMessage = 16 * 1024;
// Idle polls before a waiting rank starts yielding its core (a few microseconds).
constexpr unsigned kSpinTurns = 2000;
// Waiting for a peer on another host with nothing of ours left to send:
// idle polling this long, then a nap on every idle turn. Each poll of a TCP
// transport is a system call, and a waiting rank that keeps polling (or only
// yields) holds its core against the peer's other threads and the kernel's
// network processing (softirq threads), which a busy machine then runs
// milliseconds late. While a send of ours is under way UCX must keep feeding
// its socket: a nap there cost a quiet machine a quarter of the 16 MiB
// bandwidth, so those waits spin (and yield) as on one host; a spin shorter
// than a 64 KiB message's time cost it as well. Two emulated hosts on this
// 2-core machine, 1 rank each, with two busy processes beside them (three
// interleaved runs): 8-byte all-reduce 36-441 us against 18-3860 us with
// yields only, 16 MiB 0.23-0.36 GB/s against 0.04-0.06; without them level
// (8 B 14-19 us against 15-20, 16 MiB 0.69-0.84 GB/s against 0.72-0.88).
constexpr auto kRemoteSpin = std::chrono::microseconds(200);
constexpr auto kRemoteNap = std::chrono::microseconds(20);
// A large transfer's payload (part 1) travels on the peer's bulk endpoint
// (UcxWorker::bulk_endpoint), which UCX does not order with the header's
// endpoint: the payload carries a tag of its own.
constexpr uint64_t kPayloadTag = 1;

void record(UcxChannel::PartRef* ref, ucs_status_t status, size_t length) {
  UcxChannel::Transfer* t = ref->transfer;
  if (status != UCS_OK && t->status == UCS_OK) t->status = status;
  t->received[ref->part] = length;
  ++t->parts_done;
}

void on_send_done(void*, ucs_status_t status, void* user_data) {
  record(static_cast<UcxChannel::PartRef*>(user_data), status, 0);
}

void on_recv_done(void*, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
  record(static_cast<UcxChannel::PartRef*>(user_data), status, info != nullptr ? info->length : 0);
}

UcxChannel::UcxChannel(UcxWorker& worker, uint32_t comm_id, std::vector<int> members,
                       std::vector<std::string> names, int rank, std::shared_ptr<FailureFlag> failure,
                       DescribeCall describe_call)
    : worker_(worker),
      comm_id_(comm_id),
      members_(std::move(members)),
      names_(std::move(names)),
      rank_(rank),
      failure_(std::move(failure)),
      describe_call_(describe_call) {}

UcxChannel::~UcxChannel() {
  cancel_outstanding();
  release_transfers();
}

uint64_t UcxChannel::tag_for(int sender_rank) const {
  return (static_cast<uint64_t>(comm_id_ & 0xFFFFFFu) << 40) |
         (static_cast<uint64_t>(members_[static_cast<size_t>(sender_rank)] & 0xFFFFFF) << 16);
}

void UcxChannel::begin(const CallWords& call, uint64_t seq, Deadline deadline) {
  failure_->check();
  call_ = call;
  seq_ = seq;
  deadline_ = deadline;
  first_clock_read_ = Deadline{};
}

void UcxChannel::end() {
  // A transfer nobody waited for still owns its bounce buffer and callback
  // argument: let it finish (or cancel it) before they are freed.
  auto pending = [&] {
    for (const auto& t : transfers_) {
      if (!t->done()) return true;
    }
    return false;
  };
  if (pending()) {
    while (std::chrono::steady_clock::now() < deadline_ && !failure_->failed() && pending()) {
      std::lock_guard<std::mutex> guard(worker_.lock());
      ucp_worker_progress(worker_.worker());
    }
    cancel_outstanding();
  }
  release_transfers();
}

void UcxChannel::release_transfers() {
  std::lock_guard<std::mutex> guard(worker_.lock());
  for (auto& t : transfers_) {
    // UCX releases a request still running when it completes, and calls its
    // callback first: the transfer it writes to must outlive it.
    for (void* request : t->requests) {
      if (request != nullptr) ucp_request_free(request);
    }
    if (t->done()) {
      t->reset();
      spare_.push_back(std::move(t));
      continue;
    }
    const int peer = members_[static_cast<size_t>(t->peer)];
    worker_.keep_until_destroyed(peer, std::move(t));
  }
  transfers_.clear();
}

std::string UcxChannel::describe_peer(int peer) const {
  return worker_.describe(names_[static_cast<size_t>(peer)], members_[static_cast<size_t>(peer)]);
}

UcxChannel::Transfer& UcxChannel::new_transfer() {
  if (spare_.empty()) return *transfers_.emplace_back(std::make_unique<Transfer>());
  transfers_.push_back(std::move(spare_.back()));
  spare_.pop_back();
  return *transfers_.back();
}

UcxChannel::Transfer& UcxChannel::transfer(TransferId id) {
  if (id >= transfers_.size()) fail(Status::kInternal, "channel: unknown transfer " + std::to_string(id));
  return *transfers_[id];
}

void UcxChannel::post_send_part(Transfer& t, int part, const void* data, size_t bytes) {
  PartRef& ref = t.refs[part];
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &on_send_done;
  param.user_data = &ref;
  const int peer = members_[static_cast<size_t>(t.peer)];
  const bool payload = part == 1;
  // To another host over a bulk endpoint: eager up to UCX's "local"
  // threshold, rendezvous (zero-copy) above (ucx_tuning.h).
  if (payload && worker_.remote_host(peer) && worker_.bulk_endpoint(peer) != worker_.endpoint(peer)) {
    param.op_attr_mask |= UCP_OP_ATTR_FLAG_FAST_CMPL;
  }
  void* request = ucp_tag_send_nbx(payload ? worker_.bulk_endpoint(peer) : worker_.endpoint(peer), data, bytes,
                                   tag_for(rank_) | (payload ? kPayloadTag : 0), &param);
  if (UCS_PTR_IS_ERR(request)) {
    record(&ref, UCS_PTR_STATUS(request), 0);
  } else if (request == nullptr) {
    record(&ref, UCS_OK, 0);
  } else {
    t.requests[part] = request;
  }
}

void UcxChannel::post_recv_part(Transfer& t, int part, void* data, size_t bytes) {
  PartRef& ref = t.refs[part];
  ucp_request_param_t param{};
  // No immediate completion: the callback is then the one place that learns
  // the received length, however early the message arrived.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &on_recv_done;
  param.user_data = &ref;
  const uint64_t tag = tag_for(t.peer) | (part == 1 ? kPayloadTag : 0);
  void* request = ucp_tag_recv_nbx(worker_.worker(), data, bytes, tag, ~uint64_t{0}, &param);
  if (UCS_PTR_IS_ERR(request)) {
    record(&ref, UCS_PTR_STATUS(request), 0);
  } else {
    t.requests[part] = request;
  }
}

TransferId UcxChannel::send(int peer, const void* data, size_t bytes) {
  failure_->check();
  TransferId id = static_cast<TransferId>(transfers_.size());
  Transfer& t = new_transfer();
  t.peer = peer;
  t.bytes = bytes;
  t.header = WireHeader{kWireMagic, comm_id_, seq_, call_, bytes};
  std::lock_guard<std::mutex> guard(worker_.lock());
  if (bytes <= kSmallMessage) {
    t.parts = 1;
    t.bounce.resize(sizeof t.header + bytes);
    std::memcpy(t.bounce.data(), &t.header, sizeof t.header);
    if (bytes > 0) std::memcpy(t.bounce.data() + sizeof t.header, data, bytes);
    post_send_part(t, 0, t.bounce.data(), t.bounce.size());
  } else {
    t.parts = 2;
    post_send_part(t, 0, &t.header, sizeof t.header);
    post_send_part(t, 1, data, bytes);
  }
  return id;
}

TransferId UcxChannel::recv(int peer, void* data, size_t bytes) {
  failure_->check();
  TransferId id = static_cast<TransferId>(transfers_.size());
  Transfer& t = new_transfer();
  t.is_recv = true;
  t.peer = peer;
  t.bytes = bytes;
  t.user_data = data;
  std::lock_guard<std::mutex> guard(worker_.lock());
  if (bytes <= kSmallMessage) {
    t.parts = 1;
    t.bounce.resize(sizeof t.header + bytes);
    post_recv_part(t, 0, t.bounce.data(), t.bounce.size());
  } else {
    t.parts = 2;
    post_recv_part(t, 0, &t.header, sizeof t.header);
    post_recv_part(t, 1, data, bytes);
  }
  return id;
}

void UcxChannel::fail_call(Status status, const std::string& message) {
  failure_->set(status, message);
  cancel_outstanding();
  failure_->check();
  throw Error(status, message);
}

void UcxChannel::finish(Transfer& t) {
  if (t.checked) return;
  t.checked = true;
  const std::string& peer = names_[static_cast<size_t>(t.peer)];
  const std::string& me = names_[static_cast<size_t>(rank_)];
  if (t.status == UCS_ERR_MESSAGE_TRUNCATED) {
    fail_call(Status::kMismatch, peer + " sent more data than " + me + " expects in " + describe_call_(call_) +
                                     " (call " + std::to_string(seq_) + ")");
  }
  if (t.status == UCS_ERR_CANCELED) failure_->check();
  if (t.status != UCS_OK) {
    fail_call(Status::kPeerFailed, "transfer with " + describe_peer(t.peer) + " failed: " + ucs_status_string(t.status));
  }
  if (!t.is_recv) return;
  size_t payload_received = t.received[1];
  if (t.parts == 1) {
    if (t.received[0] >= sizeof t.header) std::memcpy(&t.header, t.bounce.data(), sizeof t.header);
    payload_received = t.received[0] >= sizeof t.header ? t.received[0] - sizeof t.header : 0;
  }
  const WireHeader& h = t.header;
  // Everything read from the wire is checked before it is believed.
  if (t.received[0] < sizeof h || h.magic != kWireMagic || h.comm_id != comm_id_) {
    fail_call(Status::kMismatch, peer + " sent a malformed message to " + me + " (call " + std::to_string(seq_) + 
                                     ", " + std::to_string(t.received[0]) + " bytes)");
  }
  // The peer's words name no call, or another one: either way they differ.
  if (h.seq != seq_ || h.call != call_) {
    fail_call(Status::kMismatch, peer + " called " + describe_call_(h.call) + " (call " + std::to_string(h.seq) + ") but " +
                                     me + " called " + describe_call_(call_) + " (call " + std::to_string(seq_) + ")");
  }
  if (h.payload_bytes != t.bytes || payload_received != t.bytes) {
    fail_call(Status::kMismatch, peer + " sent " + std::to_string(h.payload_bytes) + " bytes where " + me +
                                     " expects " + std::to_string(t.bytes) + " in " + describe_call_(call_));
  }
  if (t.parts == 1 && t.bytes > 0) std::memcpy(t.user_data, t.bounce.data() + sizeof h, t.bytes);
}

bool UcxChannel::test(TransferId id) {
  Transfer& t = transfer(id);
  if (!t.done()) {
    failure_->check();
    std::lock_guard<std::mutex> guard(worker_.lock());
    ucp_worker_progress(worker_.worker());
  }
  if (!t.done()) return false;
  finish(t);
  return true;
}

void UcxChannel::progress() {
  // Another thread polling the worker does it for us.
  std::unique_lock<std::mutex> guard(worker_.lock(), std::try_to_lock);
  if (guard.owns_lock()) ucp_worker_progress(worker_.worker());
}

void UcxChannel::wait(TransferId id) {
  Transfer& t = transfer(id);
  unsigned idle = 0;
  const bool remote = worker_.remote_host(members_[static_cast<size_t>(t.peer)]);
  std::chrono::steady_clock::time_point idle_since{};
  auto sending = [&] {
    for (const auto& other : transfers_) {
      if (!other->is_recv && !other->done()) return true;
    }
    return false;
  };
  WaitingPhase waiting;
  while (!t.done()) {
    waiting.begin();
    if (failure_->failed()) {
      cancel_outstanding();
      failure_->check();
    }
    unsigned progressed;
    {
      std::lock_guard<std::mutex> guard(worker_.lock());
      progressed = ucp_worker_progress(worker_.worker());
    }
    if (t.done()) break;
    if (progressed != 0) {
      idle = 0;
      continue;
    }
    ++idle;
    if (remote && idle == 1) idle_since = std::chrono::steady_clock::now();
    if (remote && !sending()) {
      // Spin briefly for latency, then nap (kRemoteSpin).
      if (std::chrono::steady_clock::now() - idle_since > kRemoteSpin) std::this_thread::sleep_for(kRemoteNap);
    } else if (idle > kSpinTurns) {
      // Spin briefly for latency; then give the core away on every idle turn,
      // since with more ranks than cores the peer we wait for needs it.
      std::this_thread::yield();
    }
    // The clock is read only now and then: it costs more than a poll.
    if ((idle & 0x3F) == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (first_clock_read_ == Deadline{}) first_clock_read_ = now;
      if (stall_ != nullptr && stall_->due(seq_, first_clock_read_, now)) {
        stall_->warn(seq_, describe_call_(call_) + " (call " + std::to_string(seq_) + ")", first_clock_read_, now);
      }
      if (now >= deadline_) {
        fail_call(Status::kTimeout, names_[static_cast<size_t>(rank_)] + " timed out waiting for " +
                                        describe_peer(t.peer) + " in " + describe_call_(call_) + " (call " +
                                        std::to_string(seq_) + ")" + (stall_ != nullptr ? stall_->behind_note(seq_) : ""));
      }
    }
  }
  finish(t);
}

void UcxChannel::cancel_outstanding() {
  std::lock_guard<std::mutex> guard(worker_.lock());
  // Only receives can be cancelled; a send to a peer that is gone never
  // finishes, and waiting for it would only delay the error.
  auto receiving = [&] {
    for (const auto& t : transfers_) {
      if (t->is_recv && !t->done() && !t->cancelled) return true;
    }
    return false;
  };
  if (!receiving()) return;
  for (auto& t : transfers_) {
    for (int part = 0; part < t->parts; ++part) {
      if (t->is_recv && !t->done() && !t->cancelled && t->requests[part] != nullptr) {
        ucp_request_cancel(worker_.worker(), t->requests[part]);
      }
    }
  }
  // The buffers belong to the caller: give UCX a moment to let go of them. A
  // receive UCX cannot cancel (a rendezvous under way from a peer that is
  // gone) is kept with the worker (release_transfers).
  auto deadline = std::chrono::steady_clock::now() + kCancelGrace;
  while (receiving() && std::chrono::steady_clock::now() < deadline) ucp_worker_progress(worker_.worker());
  for (auto& t : transfers_) t->cancelled = true;  // waited for once: not again
}

}  // namespace

std::unique_ptr<Channel> make_ucx_channel(UcxWorker& worker, uint32_t comm_id, std::vector<int> members,
                                          std::vector<std::string> names, int rank,
                                          std::shared_ptr<FailureFlag> failure, DescribeCall describe_call) {
  return std::make_unique<UcxChannel>(worker, comm_id, std::move(members), std::move(names), rank,
                                      std::move(failure), describe_call);
}

}  // namespace dist
