#include "transport/rpc_ucx_lane.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "transport/ucx_worker.h"

namespace dist {
namespace {

// How long a cancelled transfer may take to let go of its buffer.
constexpr auto kCancelGrace = std::chrono::milliseconds(1000);

void on_send_done(void*, ucs_status_t status, void* user_data) {
  auto* t = static_cast<RpcLaneTransfer*>(user_data);
  t->status = status;
  t->done = true;
}

void on_receive_done(void*, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
  auto* t = static_cast<RpcLaneTransfer*>(user_data);
  t->status = status;
  t->length = info != nullptr && status == UCS_OK ? info->length : 0;
  t->done = true;
}

// Records what posting a transfer returned: a request that still runs, or
// (an error, or a send finished in place) its outcome at once.
void settle(RpcLaneTransfer& t, void* request) {
  if (UCS_PTR_IS_ERR(request)) {
    t.status = UCS_PTR_STATUS(request);
    t.done = true;
  } else if (request == nullptr) {
    t.status = UCS_OK;
    t.done = true;
  } else {
    t.request = request;
  }
}

// Sleeps up to kRpcLaneNap or until fd hangs up; true when it did.
bool nap_on(int fd) {
  const timespec pause{0, std::chrono::duration_cast<std::chrono::nanoseconds>(kRpcLaneNap).count()};
  if (fd < 0) {
    ::nanosleep(&pause, nullptr);
    return false;
  }
  // POLLRDHUP, not POLLIN: the next request arriving must not end the nap.
  pollfd p{fd, POLLRDHUP, 0};
  return ::ppoll(&p, 1, &pause, nullptr) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

// The transports a lane may use: UCX's shared-memory segments (posix, sysv),
// or what the user's UCX_TLS names minus those that copy into or out of the
// other process through the kernel (cma, knem, xpmem): with no peer-failure
// handling, which this UCX's shared memory does not offer, a peer dying in the
// middle of such a copy aborts the survivor. Through a segment its data just
// stops arriving, which the connection beside the lane notices.
std::string lane_transports(const char* user) {
  if (user == nullptr || *user == '\0') return "posix,sysv";
  const std::string list(user);
  if (list[0] == '^') return list + ",cma";  // knem and xpmem are not in Debian's UCX
  std::string kept;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    start = end + 1;
    if (name == "all") return "posix,sysv";
    if (name == "sm" || name == "shm" || name == "mm") name = "posix,sysv";
    if (name.empty() || name == "cma" || name == "knem" || name == "xpmem") continue;
    kept += (kept.empty() ? "" : ",") + name;
  }
  if (kept.empty()) fail(Status::kUnavailable, "UCX_TLS=" + list + " leaves the lane no transport");
  return kept;
}

// Both ends of the connection have the same IP address (loopback included).
bool same_host(int fd) {
  sockaddr_storage mine{}, theirs{};
  socklen_t mine_length = sizeof mine, their_length = sizeof theirs;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_length) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &their_length) != 0 || mine.ss_family != theirs.ss_family) {
    return false;
  }
  if (mine.ss_family == AF_INET) {
    return reinterpret_cast<sockaddr_in*>(&mine)->sin_addr.s_addr ==
           reinterpret_cast<sockaddr_in*>(&theirs)->sin_addr.s_addr;
  }
  if (mine.ss_family == AF_INET6) {
    return std::memcmp(&reinterpret_cast<sockaddr_in6*>(&mine)->sin6_addr,
                       &reinterpret_cast<sockaddr_in6*>(&theirs)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

}  // namespace

bool rpc_lane_enabled() {
  const char* setting = std::getenv("DIST_PS_UCX");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
}

RpcUcxLane::RpcUcxLane(std::string peer) : peer_(std::move(peer)) {
  const std::string transports = lane_transports(std::getenv("UCX_TLS"));
  worker_ = std::make_unique<UcxWorker>([&](ucp_config_t* config) {
    const ucs_status_t status = ucp_config_modify(config, "TLS", transports.c_str());
    if (status != UCS_OK) fail(Status::kUnavailable, "UCX refused UCX_TLS=" + transports + " for the lane");
    // The UCX_TCP_* defaults of ucx_tuning.h are for other contexts: a lane
    // without TCP is not a reason to warn that they went unused.
    if (std::getenv("UCX_WARN_UNUSED_ENV_VARS") == nullptr) ucp_config_modify(config, "WARN_UNUSED_ENV_VARS", "n");
  });
}

RpcUcxLane::~RpcUcxLane() {
  // Every transfer was finished or cancelled by the owner: an orderly close
  // has nothing to wait for. After a failure, nobody may answer: do not wait.
  worker_->disconnect(/*force=*/abandoned_);
}

void RpcUcxLane::abandon() { abandoned_ = true; }

const std::string& RpcUcxLane::address() const { return worker_->address(); }

void RpcUcxLane::connect(const std::string& remote_address) {
  if (remote_address.empty() || remote_address.size() > kMaxLaneAddressBytes) {
    fail(Status::kUnavailable, peer_ + ": a UCX worker address of " + std::to_string(remote_address.size()) +
                                   " bytes is not usable");
  }
  // No UCX peer-failure handling: this UCX's shared-memory transports refuse
  // it (ucx_perftest -e with UCX_TLS=posix: "Destination is unreachable"),
  // which would leave the lane on TCP through UCX, at half the bandwidth.
  // The connection beside the lane notices a peer that dies, and every wait
  // here watches it.
  worker_->connect({remote_address}, nullptr, UCP_ERR_HANDLING_MODE_NONE);
}

void RpcUcxLane::post_send(RpcLaneTransfer& t, uint64_t tag, const void* data, size_t bytes) {
  t = RpcLaneTransfer{};
  t.posted = true;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &on_send_done;
  param.user_data = &t;
  std::lock_guard<std::mutex> guard(worker_->lock());
  settle(t, ucp_tag_send_nbx(worker_->endpoint(0), data, bytes, tag, &param));
}

void RpcUcxLane::post_receive(RpcLaneTransfer& t, uint64_t tag, void* data, size_t capacity) {
  t = RpcLaneTransfer{};
  t.posted = true;
  ucp_request_param_t param{};
  // Never completed in place: the callback is the one place that learns the length.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &on_receive_done;
  param.user_data = &t;
  std::lock_guard<std::mutex> guard(worker_->lock());
  settle(t, ucp_tag_recv_nbx(worker_->worker(), data, capacity, tag, ~uint64_t{0}, &param));
}

unsigned RpcUcxLane::progress() {
  std::lock_guard<std::mutex> guard(worker_->lock());
  return ucp_worker_progress(worker_->worker());
}

void RpcUcxLane::release(RpcLaneTransfer& t) {
  if (t.request == nullptr) return;
  std::lock_guard<std::mutex> guard(worker_->lock());
  ucp_request_free(t.request);
  t.request = nullptr;
}

void RpcUcxLane::cancel(RpcLaneTransfer& t) {
  if (t.running()) {
    {
      std::lock_guard<std::mutex> guard(worker_->lock());
      ucp_request_cancel(worker_->worker(), t.request);
    }
    // An abandoned lane's peer is gone: what UCX could not cancel at once
    // will not finish, and the lane's end takes it back anyway.
    const auto deadline = std::chrono::steady_clock::now() + (abandoned_ ? std::chrono::milliseconds(0) : kCancelGrace);
    while (!t.done && std::chrono::steady_clock::now() < deadline) {
      if (progress() == 0) nap_on(-1);
    }
  }
  // One that still runs is reclaimed with the worker; its buffer is then free.
  if (t.done) release(t);
}

std::string RpcUcxLane::describe_failure(const RpcLaneTransfer& t) const {
  if (t.status == UCS_OK) return "";
  return std::string("UCX transfer failed: ") + ucs_status_string(static_cast<ucs_status_t>(t.status));
}

void RpcUcxLane::wait(RpcLaneTransfer& t, SteadyTime deadline, int watch_fd, const std::atomic<bool>* stopping) {
  auto spin_until = std::chrono::steady_clock::now() + kRpcLaneSpin;
  while (!t.done) {
    const unsigned events = progress();
    const auto now = std::chrono::steady_clock::now();
    if (events != 0) spin_until = now + kRpcLaneSpin;
    if (t.done) break;
    if (now < spin_until) {
      // Idle but about to finish: keep polling, yet let a process that
      // shares this core (perhaps the peer) run first.
      if (events == 0) std::this_thread::yield();
      continue;
    }
    Status status = Status::kOk;
    std::string why;
    if (nap_on(watch_fd)) {
      status = Status::kPeerFailed;
      why = peer_ + ": connection closed during a UCX transfer";
    } else if (stopping != nullptr && stopping->load()) {
      status = Status::kAborted;
      why = peer_ + ": stopped during a UCX transfer";
    } else if (now >= deadline) {
      status = Status::kTimeout;
      why = peer_ + ": a UCX transfer did not finish in time";
    }
    if (status != Status::kOk) {
      abandon();
      cancel(t);
      fail(status, why);
    }
  }
  release(t);
  if (t.status != UCS_OK) {
    abandon();
    fail(Status::kPeerFailed, peer_ + ": " + describe_failure(t));
  }
}

void RpcUcxLane::send(uint64_t tag, const void* data, size_t bytes, SteadyTime deadline, int watch_fd,
                      const std::atomic<bool>* stopping) {
  post_send(blocking_, tag, data, bytes);
  wait(blocking_, deadline, watch_fd, stopping);
}

void RpcUcxLane::receive_parts(uint64_t id, LaneDirection direction, void* into, size_t bytes, SteadyTime deadline,
                               int watch_fd, const std::atomic<bool>* stopping) {
  size_t received = 0;
  for (unsigned part = 0; part < 2 && received < bytes; ++part) {
    post_receive(blocking_, rpc_lane_tag(id, direction, part), static_cast<uint8_t*>(into) + received,
                 bytes - received);
    wait(blocking_, deadline, watch_fd, stopping);
    if (blocking_.length == 0) fail(Status::kPeerFailed, peer_ + ": an empty UCX payload part");
    received += blocking_.length;
  }
  if (received != bytes) {
    fail(Status::kPeerFailed, peer_ + ": " + std::to_string(received) + " payload bytes arrived on the UCX lane, " +
                                  std::to_string(bytes) + " announced");
  }
}

std::unique_ptr<RpcUcxLane> offer_lane(int fd, const std::string& peer, SteadyTime deadline) {
  if (!rpc_lane_enabled() || !same_host(fd)) return nullptr;
  std::unique_ptr<RpcUcxLane> lane;
  try {
    lane = std::make_unique<RpcUcxLane>(peer);
  } catch (const Error&) {
    return nullptr;  // no UCX here: payloads stay on TCP
  }
  // One set-up round trip; false when the acceptor answers that it has no lane.
  auto exchange = [&](int32_t code, const std::string& payload, std::string& answer) {
    RpcHeader frame;
    frame.magic = kRpcLaneMagic;
    frame.code = code;
    frame.payload_bytes = payload.size();
    write_frame(fd, frame, payload.data(), payload.size(), deadline, peer);
    RpcHeader response;
    read_all(fd, &response, sizeof response, deadline, peer);
    if (response.magic != kRpcResponseMagic || response.payload_bytes > kMaxLaneAddressBytes) {
      fail(Status::kPeerFailed, peer + " answered the UCX lane set-up with a malformed frame");
    }
    answer.assign(static_cast<size_t>(response.payload_bytes), '\0');
    read_all(fd, answer.data(), answer.size(), deadline, peer);
    return response.code == 0;
  };
  std::string remote, ignored;
  if (!exchange(kLaneOffer, lane->address(), remote)) return nullptr;
  try {
    lane->connect(remote);
  } catch (const Error&) {
    return nullptr;  // UCX cannot reach the acceptor; its lane stays unconfirmed and unused
  }
  if (!exchange(kLaneConfirm, "", ignored)) return nullptr;
  return lane;
}

bool RpcLaneAcceptor::answer(int fd, const RpcHeader& frame, const std::string& peer, SteadyTime deadline) {
  if (frame.payload_bytes > kMaxLaneAddressBytes) return false;
  std::string payload(static_cast<size_t>(frame.payload_bytes), '\0');
  read_all(fd, payload.data(), payload.size(), deadline, peer);
  RpcHeader response;
  response.magic = kRpcResponseMagic;
  response.id = frame.id;
  std::string answer;
  try {
    if (!rpc_lane_enabled()) fail(Status::kUnavailable, "the UCX lane is turned off here (DIST_PS_UCX=0)");
    if (!same_host(fd)) fail(Status::kUnavailable, "the UCX lane only joins processes on one host");
    if (frame.code == kLaneOffer) {
      // A new offer replaces any earlier lane.
      confirmed_ = false;
      lane_.reset();
      auto lane = std::make_unique<RpcUcxLane>(peer);
      lane->connect(payload);
      answer = lane->address();
      lane_ = std::move(lane);
    } else if (frame.code == kLaneConfirm && lane_ != nullptr) {
      confirmed_ = true;
    } else {
      fail(Status::kInvalidArgument, "lane set-up frame " + std::to_string(frame.code) + " out of turn");
    }
  } catch (const Error& e) {
    response.code = static_cast<int32_t>(e.status());
    answer = e.what();
  }
  response.payload_bytes = answer.size();
  write_frame(fd, response, answer.data(), answer.size(), deadline, peer);
  return true;
}

}  // namespace dist
