#include "transport/rpc_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "transport/handshake.h"
#include "transport/rpc_frame.h"

namespace dist {
namespace {

// The most error text a response may carry.
constexpr size_t kMaxErrorBytes = 64 * 1024;

bool is_known_status(int32_t code) {
  switch (static_cast<Status>(code)) {
    case Status::kOk:
    case Status::kInvalidArgument:
    case Status::kUnsupported:
    case Status::kNoMemory:
    case Status::kSystem:
    case Status::kPeerFailed:
    case Status::kTimeout:
    case Status::kMismatch:
    case Status::kAuth:
    case Status::kUnavailable:
    case Status::kAborted:
    case Status::kInternal: return true;
  }
  return false;
}

bool payload_on_lane(const RpcCall& call) { return call.request.magic == kRpcRequestLaneMagic; }

// What goes down the socket: the header, and the payload unless it is on the lane.
size_t request_bytes(const RpcCall& call) {
  return sizeof(RpcHeader) + (payload_on_lane(call) ? 0 : call.payload_bytes[0] + call.payload_bytes[1]);
}

// The call's lane transfers: the request's two parts, then the response.
std::array<RpcLaneTransfer*, 3> lane_transfers(RpcCall& call) {
  return {&call.lane_parts[0], &call.lane_parts[1], &call.lane_response};
}

bool lane_running(RpcCall& call) {
  const auto transfers = lane_transfers(call);
  return std::any_of(transfers.begin(), transfers.end(), [](const RpcLaneTransfer* t) { return t->running(); });
}

void forget_lane_transfers(RpcCall& call) {
  for (RpcLaneTransfer* t : lane_transfers(call)) *t = RpcLaneTransfer{};
}

timespec timespec_of(std::chrono::nanoseconds span) {
  return timespec{static_cast<time_t>(span.count() / 1000000000), static_cast<long>(span.count() % 1000000000)};
}

}  // namespace

RpcConnection::RpcConnection(std::string peer, std::string address, std::string token, RpcTimeouts timeouts)
    : peer_(std::move(peer)), address_(split_address(address)), token_(std::move(token)), timeouts_(timeouts) {}

RpcConnection::~RpcConnection() { close(Status::kAborted, peer_ + ": the connection was closed by its owner"); }

void RpcConnection::connect() {
  const auto deadline = std::chrono::steady_clock::now() + timeouts_.connect;
  Socket socket;
  while (true) {
    socket = try_connect(address_, deadline);
    if (socket.valid()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      fail(Status::kUnavailable, peer_ + " is unavailable: nothing accepted a connection within " +
                                     std::to_string(timeouts_.connect.count()) + " ms (down or restarting)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  try {
    authenticate_as_connector(socket.fd(), token_, deadline, peer_);
    lane_ = offer_lane(socket.fd(), peer_, std::chrono::steady_clock::now() + kRpcLaneSetupTime);
  } catch (const Error& e) {
    if (e.status() == Status::kAuth) throw;
    fail(Status::kUnavailable, peer_ + " is unavailable: " + e.what());
  }
  enable_keepalive(socket.fd());
  socket_ = std::move(socket);
  ++connections_made_;
  header_received_ = payload_received_ = sent_of_front_ = 0;
  if (on_connect_) on_connect_(*this);
}

void RpcConnection::post_request_parts(RpcCall& call) {
  unsigned part = 0;
  for (int piece = 0; piece < 2; ++piece) {
    if (call.payload_bytes[piece] == 0) continue;
    lane_->post_send(call.lane_parts[part], rpc_lane_tag(call.request.id, LaneDirection::kRequest, part),
                     call.payload[piece], call.payload_bytes[piece]);
    ++part;
  }
}

void RpcConnection::submit(const std::shared_ptr<RpcCall>& call) {
  ensure_connected();
  RpcCall& c = *call;
  c.request.id = next_id_++;
  c.request.payload_bytes = c.payload_bytes[0] + c.payload_bytes[1];
  const bool on_lane = lane_ != nullptr && c.request.payload_bytes >= kRpcLaneThreshold;
  c.request.magic = on_lane ? kRpcRequestLaneMagic : kRpcRequestMagic;
  c.done = false;
  c.frame_done = false;
  c.status = Status::kOk;
  c.error.clear();
  c.response_bytes = 0;
  unsent_.push_back(call);
  if (on_lane) {
    // Posted before the header leaves, so the payload is on its way when the
    // server learns of it.
    post_request_parts(c);
    c.on_lane = true;
    on_lane_.push_back(call);
    ++lane_payloads_;
  }
  pump_send();
}

unsigned RpcConnection::drive_lane() {
  if (lane_ == nullptr || on_lane_.empty()) return 0;
  const unsigned events = lane_->progress();
  for (auto it = on_lane_.begin(); it != on_lane_.end();) {
    RpcCall& call = **it;
    if (lane_running(call)) {
      ++it;
      continue;
    }
    std::string problem;
    for (RpcLaneTransfer* t : lane_transfers(call)) {
      if (!t->posted) continue;
      if (!t->ok() && problem.empty()) problem = lane_->describe_failure(*t);
      lane_->release(*t);
    }
    if (problem.empty() && call.lane_response.posted && call.lane_response.length != call.response_bytes) {
      problem = std::to_string(call.lane_response.length) + " response bytes arrived on the UCX lane, " +
                std::to_string(call.response_bytes) + " announced";
    }
    forget_lane_transfers(call);
    if (!problem.empty()) {
      close(Status::kPeerFailed, peer_ + ": " + problem + "; the connection was dropped");
      return events;
    }
    call.on_lane = false;
    if (call.frame_done) call.done = true;
    it = on_lane_.erase(it);
  }
  return events;
}

void RpcConnection::close(Status status, const std::string& reason) {
  socket_.close();
  if (lane_) {
    if (status != Status::kAborted) lane_->abandon();
    for (auto& call : on_lane_) {
      for (RpcLaneTransfer* t : lane_transfers(*call)) {
        if (t->posted) lane_->cancel(*t);
      }
    }
    // Destroying the worker takes back whatever a cancel could not, so UCX
    // holds no caller's buffer once close() returns.
    lane_.reset();
  }
  for (auto* queue : {&on_lane_, &awaiting_, &unsent_}) {
    for (auto& call : *queue) {
      forget_lane_transfers(*call);
      call->on_lane = false;
      if (call->done) continue;
      call->done = true;
      call->status = status;
      call->error = reason;
    }
    queue->clear();
  }
  header_received_ = payload_received_ = sent_of_front_ = 0;
}

void RpcConnection::protocol_error(const std::string& problem) {
  close(Status::kPeerFailed, peer_ + " broke the protocol: " + problem + "; the connection was dropped");
}

short RpcConnection::wanted_events() const { return static_cast<short>(POLLIN | (unsent_.empty() ? 0 : POLLOUT)); }

void RpcConnection::pump(short revents) {
  if (revents & (POLLIN | POLLERR | POLLHUP)) pump_receive();
  if (socket_.valid() && !unsent_.empty()) pump_send();
}

void RpcConnection::pump_send() {
  while (socket_.valid() && !unsent_.empty()) {
    RpcCall& call = *unsent_.front();
    const bool lane = payload_on_lane(call);
    iovec pieces[3] = {{&call.request, sizeof call.request},
                       {const_cast<void*>(call.payload[0]), lane ? 0 : call.payload_bytes[0]},
                       {const_cast<void*>(call.payload[1]), lane ? 0 : call.payload_bytes[1]}};
    size_t skip = sent_of_front_;
    int first = 0;
    while (first < 3 && skip >= pieces[first].iov_len) skip -= pieces[first++].iov_len;
    if (first < 3) {
      pieces[first].iov_base = static_cast<char*>(pieces[first].iov_base) + skip;
      pieces[first].iov_len -= skip;
      msghdr message{};
      message.msg_iov = pieces + first;
      message.msg_iovlen = static_cast<size_t>(3 - first);
      ssize_t n = ::sendmsg(socket_.fd(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        close(Status::kPeerFailed, peer_ + ": connection broken (" + std::strerror(errno) + ")");
        return;
      }
      sent_of_front_ += static_cast<size_t>(n);
    }
    if (sent_of_front_ == request_bytes(call)) {
      awaiting_.push_back(unsent_.front());
      unsent_.pop_front();
      sent_of_front_ = 0;
    }
  }
}

void RpcConnection::pump_receive() {
  while (socket_.valid()) {
    uint8_t* target;
    size_t wanted;
    if (header_received_ < sizeof incoming_) {
      target = reinterpret_cast<uint8_t*>(&incoming_) + header_received_;
      wanted = sizeof incoming_ - header_received_;
    } else {
      target = payload_target_ + payload_received_;
      wanted = payload_on_socket_ - payload_received_;
    }
    if (wanted > 0) {
      ssize_t n = ::recv(socket_.fd(), target, wanted, MSG_DONTWAIT);
      if (n == 0) {
        close(Status::kPeerFailed, peer_ + ": connection closed by the server (it stopped, died or restarted)");
        return;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        close(Status::kPeerFailed, peer_ + ": connection broken (" + std::strerror(errno) + ")");
        return;
      }
      if (header_received_ < sizeof incoming_) {
        header_received_ += static_cast<size_t>(n);
        if (header_received_ < sizeof incoming_) continue;
        // A whole header: check it before any payload byte lands anywhere.
        const bool on_lane = incoming_.magic == kRpcResponseLaneMagic;
        if (incoming_.magic != kRpcResponseMagic && !(on_lane && lane_ != nullptr)) {
          return protocol_error("a response without the response magic");
        }
        if (awaiting_.empty()) return protocol_error("a response to no request");
        RpcCall& call = *awaiting_.front();
        if (incoming_.id != call.request.id) {
          return protocol_error("response id " + std::to_string(incoming_.id) + ", expected " +
                                std::to_string(call.request.id));
        }
        if (!is_known_status(incoming_.code)) return protocol_error("unknown status " + std::to_string(incoming_.code));
        const bool ok = incoming_.code == 0;
        if (on_lane && !ok) return protocol_error("an error response whose message is on the UCX lane");
        if (on_lane && incoming_.payload_bytes == 0) return protocol_error("an empty payload announced on the UCX lane");
        const size_t limit = ok ? call.response_capacity : kMaxErrorBytes;
        if (incoming_.payload_bytes > limit) {
          return protocol_error(std::to_string(incoming_.payload_bytes) + " response bytes, at most " +
                                std::to_string(limit) + " expected");
        }
        if (ok && call.response_into != nullptr) {
          payload_target_ = static_cast<uint8_t*>(call.response_into);
        } else {
          call.response.resize(incoming_.payload_bytes);
          payload_target_ = call.response.data();
        }
        payload_received_ = 0;
        payload_on_socket_ = on_lane ? 0 : incoming_.payload_bytes;
        if (on_lane) {
          lane_->post_receive(call.lane_response, rpc_lane_tag(call.request.id, LaneDirection::kResponse, 0),
                              payload_target_, incoming_.payload_bytes);
          ++lane_payloads_;
          if (!call.on_lane) {
            call.on_lane = true;
            on_lane_.push_back(awaiting_.front());
          }
        }
      } else {
        payload_received_ += static_cast<size_t>(n);
      }
    }
    if (header_received_ == sizeof incoming_ && payload_received_ == payload_on_socket_) {
      std::shared_ptr<RpcCall> call = awaiting_.front();
      awaiting_.pop_front();
      std::copy(incoming_.args, incoming_.args + 3, call->args);
      call->response_bytes = incoming_.payload_bytes;
      call->status = static_cast<Status>(incoming_.code);
      if (call->status != Status::kOk) {
        call->error = peer_ + ": " + std::string(call->response.begin(), call->response.end());
        call->response.clear();
      }
      call->frame_done = true;
      // A call whose payload is still on the lane is done when drive_lane() sees it arrive.
      if (!call->on_lane) call->done = true;
      header_received_ = payload_received_ = 0;
    }
  }
}

void RpcConnection::wait_all(const std::vector<std::pair<RpcConnection*, RpcCall*>>& calls, SteadyTime deadline) {
  SteadyTime last_event = std::chrono::steady_clock::now();
  // Reused by every round: while lanes are polled a round takes microseconds.
  std::vector<RpcConnection*> busy;
  std::vector<pollfd> fds;
  while (true) {
    busy.clear();
    for (const auto& [connection, call] : calls) {
      if (!call->done && std::find(busy.begin(), busy.end(), connection) == busy.end()) busy.push_back(connection);
    }
    if (busy.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      for (RpcConnection* connection : busy) {
        connection->close(Status::kTimeout, connection->peer_ + ": no response in time; the connection was dropped");
      }
      return;
    }
    // Lanes are polled (UCX completes nothing by itself); a socket wakes us.
    bool lanes = false;
    for (RpcConnection* connection : busy) {
      if (connection->on_lane_.empty()) continue;
      lanes = true;
      if (connection->drive_lane() != 0) last_event = now;
    }
    std::chrono::nanoseconds slice;
    if (lanes) {
      slice = now - last_event < kRpcLaneSpin ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(kRpcLaneNap);
    } else {
      slice = std::clamp<std::chrono::nanoseconds>(deadline - now, std::chrono::milliseconds(1),
                                                   std::chrono::milliseconds(1000));
    }
    if (lanes && slice.count() == 0 && now != last_event) std::this_thread::yield();  // as RpcUcxLane::wait does
    fds.clear();
    for (RpcConnection* connection : busy) fds.push_back(pollfd{connection->socket_.fd(), connection->wanted_events(), 0});
    const timespec timeout = timespec_of(slice);
    int ready = ::ppoll(fds.data(), fds.size(), &timeout, nullptr);
    if (ready <= 0) continue;
    last_event = std::chrono::steady_clock::now();
    for (size_t i = 0; i < busy.size(); ++i) {
      if (fds[i].revents != 0) busy[i]->pump(fds[i].revents);
    }
  }
}

}  // namespace dist
