// The standard parameter server: listens at its cluster address, authenticates
// every connection with the cluster token (transport/handshake.h), and serves
// each worker's requests on its own thread against one ShardStore. Requests
// on one connection are answered in order; different workers' requests run
// concurrently (each shard has its own lock).
//
// Every frame is checked before use: an unknown operation or id, or a payload
// size the operation cannot have, gets an error reply without the payload
// being used (it is skipped when at most 64 MiB, so the connection stays in
// step); a wrong magic or a larger lying size also ends the connection. A
// payload is read in full before anything is applied, so a worker that dies
// mid-request changes nothing. Stopping shuts every connection down at once.
//
// A worker on the same host may set up a UCX lane over its authenticated
// connection (transport/rpc_ucx_lane.h); large payloads of that connection's
// requests and replies then travel on it, under the same checks: the header
// still comes over TCP and is checked first, the payload is received whole
// into the connection's staging buffer before it is applied, and every wait
// for it is bounded by io_timeout and ends when the connection does.
//
// Thread rules: stop() may be called from any thread (also from a signal-
// watching thread); join() from one thread; the destructor stops and joins.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ps/request_handler.h"
#include "ps/shard_store.h"
#include "transport/socket.h"

namespace dist::ps {

struct ServerOptions {
  std::string address;        // "host:port"; port 0 picks a free one (see bound_address)
  std::string token;          // the cluster token every connection must prove
  std::string name = "ps";    // for logs ("ps:1")
  std::chrono::milliseconds io_timeout{60000};  // to receive a request's rest, or send a reply
  // When set: restore from <checkpoint_root>/LATEST at start (a missing LATEST
  // is a fresh start; a corrupt checkpoint refuses to start).
  std::string checkpoint_root;
  RequestHandler::Log log;    // where to log what the server holds and does; may be empty
};

class Server {
 public:
  // Binds, restores, and starts serving. Throws kUnavailable when the address
  // cannot be bound, invalid-argument for a bad option or checkpoint.
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void stop();
  // Waits until the server has stopped (by stop() or a client's stop request)
  // and every connection thread has ended; a negative timeout waits forever.
  // True when stopped.
  bool join(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1));
  bool stopping() const { return stopping_.load(); }

  ShardStore& store() { return store_; }
  // "host:port" with the port actually bound.
  const std::string& bound_address() const { return bound_address_; }
  uint64_t requests_served() const { return requests_served_.load(); }
  // Payloads (requests' and replies') that travelled on UCX lanes.
  uint64_t lane_payloads() const { return lane_payloads_.load(); }

 private:
  // The socket lives as long as the entry (closed only after the thread is
  // joined), so stopping can shut it down to cut a blocked read short.
  struct Connection {
    Socket socket;
    std::thread thread;
    std::atomic<bool> finished{false};
  };
  using Clock = std::chrono::steady_clock;
  struct Session;
  void accept_loop();
  // Authenticates the connection, then answers its requests until it ends.
  void serve(int fd, const std::string& peer);
  // Reads one frame and answers it; false when the connection must end.
  bool serve_request(Session& session);
  // Receives the request's payload and works out the reply; `trusted` turns
  // false when the stream can no longer be read in step.
  Reply answer(Session& session, const RpcHeader& request, Clock::time_point deadline, bool& trusted);
  void send_reply(Session& session, const RpcHeader& request, const Reply& reply);
  void log(const std::string& message) const;

  ServerOptions options_;
  ShardStore store_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> requests_served_{0};
  std::atomic<uint64_t> lane_payloads_{0};
  RequestHandler handler_;
  Socket listener_;
  std::string bound_address_;
  std::thread acceptor_;
  std::mutex connections_mutex_;
  std::list<std::unique_ptr<Connection>> connections_;
  std::mutex join_mutex_;
  bool joined_ = false;
};

}  // namespace dist::ps
