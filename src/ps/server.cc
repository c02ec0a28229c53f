#include "ps/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "ps/checkpoint_reader.h"
#include "ps/protocol.h"
#include "transport/handshake.h"
#include "transport/rpc_frame.h"
#include "transport/rpc_ucx_lane.h"

namespace dist::ps {
namespace {

constexpr auto kPollSlice = std::chrono::milliseconds(100);
constexpr auto kHandshakeTime = std::chrono::seconds(10);
// The most payload of a refused but well-framed request that is read and
// dropped to keep the connection in step.
constexpr uint64_t kMaxDrainBytes = 64 << 20;

// Waits until fd is readable; false when the server stops first.
bool wait_readable(int fd, const std::atomic<bool>& stopping) {
  while (!stopping.load()) {
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(kPollSlice.count()));
    if (ready > 0) return true;
  }
  return false;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      handler_(store_, stopping_, [this] { stop(); }, options_.log) {
  if (options_.token.empty()) fail_invalid("server: no cluster token (every connection must prove one)");
  if (options_.io_timeout.count() <= 0) fail_invalid("server: io_timeout must be positive");
  if (!options_.checkpoint_root.empty()) {
    if (auto checkpoint = CheckpointReader::open_latest(options_.checkpoint_root)) {
      store_.restore_from(checkpoint);
      log("will restore shards from " + checkpoint->directory() + " (step " + std::to_string(checkpoint->step()) +
          ", " + std::to_string(checkpoint->num_entries()) + " saved shards) as workers create them");
    } else {
      log("no checkpoint under " + options_.checkpoint_root + " yet; starting empty");
    }
  }
  HostPort address = split_address(options_.address);
  listener_ = listen_on(address);
  bound_address_ = join_address(HostPort{address.host, local_address(listener_).port});
  log(options_.name + " serving at " + bound_address_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

Server::~Server() {
  stop();
  join();
}

void Server::log(const std::string& message) const {
  if (options_.log) options_.log(message);
}

void Server::stop() { stopping_.store(true); }

void Server::accept_loop() {
  while (!stopping_.load()) {
    Socket socket = accept_until(listener_, std::chrono::steady_clock::now() + kPollSlice);
    std::lock_guard<std::mutex> guard(connections_mutex_);
    // Threads of connections that ended are joined here, so they never pile up.
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->finished.load()) {
        (*it)->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    if (!socket.valid()) continue;
    auto connection = std::make_unique<Connection>();
    Connection* slot = connection.get();
    const std::string peer = "worker connection " + std::to_string(socket.fd());
    slot->socket = std::move(socket);
    slot->thread = std::thread([this, slot, peer] {
      serve(slot->socket.fd(), peer);
      slot->finished.store(true);
    });
    connections_.push_back(std::move(connection));
  }
  listener_.close();
}

// What serving one connection keeps between its requests.
struct Server::Session {
  int fd;
  std::string peer;
  RpcLaneAcceptor lanes;
  // Grown, never shrunk: a push after a pull does not clear 4 MiB again.
  // After an assign it holds the shard's previous values (exchanged, not copied).
  std::vector<uint8_t> payload;
  std::vector<uint8_t> scratch;
};

void Server::serve(int fd, const std::string& peer) {
  // However serving ends, the worker sees the connection end at once (the
  // descriptor itself is closed when the thread is reaped).
  struct ShutdownOnExit {
    int fd;
    ~ShutdownOnExit() { ::shutdown(fd, SHUT_RDWR); }
  } shutdown_on_exit{fd};
  try {
    authenticate_as_acceptor(fd, options_.token, std::chrono::steady_clock::now() + kHandshakeTime, peer);
    enable_keepalive(fd);
  } catch (const Error& e) {
    log(std::string("refused a connection: ") + e.what());
    return;
  }
  Session session{fd, peer, RpcLaneAcceptor(), {}, {}};
  try {
    while (wait_readable(fd, stopping_) && serve_request(session)) {
    }
  } catch (const Error& e) {
    // The worker went away (or sent half a request, which is discarded).
    if (!stopping_.load()) log(peer + " ended: " + e.what());
  }
}

bool Server::serve_request(Session& session) {
  RpcHeader request;
  const auto deadline = std::chrono::steady_clock::now() + options_.io_timeout;
  read_all(session.fd, &request, sizeof request, deadline, session.peer);
  if (request.magic == kRpcLaneMagic) {
    if (session.lanes.answer(session.fd, request, session.peer, deadline)) return true;
    log("dropped " + session.peer + ": an oversized UCX lane set-up frame");
    return false;
  }
  bool trusted = true;
  const Reply reply = answer(session, request, deadline, trusted);
  send_reply(session, request, reply);
  // After a frame that cannot be trusted the stream is out of step: drop it.
  if (!trusted) {
    log("dropped " + session.peer + ": " + std::string(reply.payload.begin(), reply.payload.end()));
    return false;
  }
  return true;
}

Reply Server::answer(Session& session, const RpcHeader& request, Clock::time_point deadline, bool& trusted) {
  // The payload comes on the connection's UCX lane, or on the socket.
  RpcUcxLane* const lane = request.magic == kRpcRequestLaneMagic ? session.lanes.ready() : nullptr;
  auto receive_payload = [&](void* into, size_t bytes) {
    if (lane != nullptr) {
      lane->receive_parts(request.id, LaneDirection::kRequest, into, bytes, deadline, session.fd, &stopping_);
      lane_payloads_.fetch_add(1);
    } else {
      read_all(session.fd, into, bytes, deadline, session.peer);
    }
  };
  if (request.magic != kRpcRequestMagic && lane == nullptr) {
    trusted = false;
    return error_reply(Status::kInvalidArgument,
                       request.magic == kRpcRequestLaneMagic
                           ? "a request whose payload is announced on a UCX lane this connection has not set up"
                           : "not a parameter-server request (wrong magic)");
  }
  uint64_t bytes = 0;
  try {
    bytes = handler_.expected_payload(request);
  } catch (const Error& e) {
    // A well-framed request for an unknown id is a caller's mistake: its
    // payload, if small enough, is read and dropped and the connection stays
    // in step. A larger claim cannot be trusted and ends it.
    if (request.payload_bytes <= kMaxDrainBytes) {
      std::vector<uint8_t> discard(static_cast<size_t>(request.payload_bytes));
      receive_payload(discard.data(), discard.size());
    } else {
      trusted = false;
    }
    return error_reply(e.status(), std::string(op_name(request.code)) + ": " + e.what());
  }
  if (session.payload.size() < bytes) session.payload.resize(static_cast<size_t>(bytes));
  receive_payload(session.payload.data(), static_cast<size_t>(bytes));
  Reply reply = handler_.handle(request, session.payload.data(), session.scratch, &session.payload);
  ++requests_served_;
  return reply;
}

void Server::send_reply(Session& session, const RpcHeader& request, const Reply& reply) {
  RpcHeader response;
  response.magic = kRpcResponseMagic;
  response.code = static_cast<int32_t>(reply.status);
  response.id = request.id;
  std::copy(reply.args, reply.args + 3, response.args);
  response.payload_bytes = reply.size();
  const auto deadline = std::chrono::steady_clock::now() + options_.io_timeout;
  RpcUcxLane* const lane =
      reply.status == Status::kOk && reply.size() >= kRpcLaneThreshold ? session.lanes.ready() : nullptr;
  if (lane == nullptr) {
    write_frame(session.fd, response, reply.data(), reply.size(), deadline, session.peer);
    return;
  }
  // The header says the values follow on the lane; they go straight from the
  // reply's buffer into the worker's.
  response.magic = kRpcResponseLaneMagic;
  lane_payloads_.fetch_add(1);
  write_frame(session.fd, response, nullptr, 0, deadline, session.peer);
  lane->send(rpc_lane_tag(request.id, LaneDirection::kResponse, 0), reply.data(), reply.size(), deadline, session.fd,
             &stopping_);
}

bool Server::join(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!stopping_.load()) {
    if (timeout.count() >= 0 && std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::lock_guard<std::mutex> guard(join_mutex_);
  if (!joined_) {
    if (acceptor_.joinable()) acceptor_.join();
    std::lock_guard<std::mutex> connections(connections_mutex_);
    // A connection blocked inside a half-sent request is cut off now rather
    // than at its I/O deadline.
    for (auto& connection : connections_) {
      if (!connection->finished.load()) ::shutdown(connection->socket.fd(), SHUT_RDWR);
    }
    for (auto& connection : connections_) connection->thread.join();
    connections_.clear();
    joined_ = true;
    log(options_.name + " stopped; it held " + std::to_string(store_.size()) + " shards, " +
        std::to_string(store_.total_bytes()) + " bytes");
  }
  return true;
}

}  // namespace dist::ps
