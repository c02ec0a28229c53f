// The requester's end of a request/response connection: one authenticated TCP
// connection to one server, carrying many requests in flight, answered in
// order. Progress is driven by the caller (submit sends what the socket takes
// at once; wait() polls and moves both directions), so a small round trip
// costs two system calls each way and no thread hand-off; and because sending
// and receiving advance together, a large request never deadlocks against a
// large response.
//
// Payloads of kRpcLaneThreshold bytes and more, both ways, travel on a UCX
// lane beside the TCP connection when both ends can set one up after the
// handshake (transport/rpc_ucx_lane.h); a response's lands straight in
// response_into. Without a lane (DIST_PS_UCX=0, UCX unavailable or unable to
// reach the server) every payload goes over TCP, as before.
//
// When the connection breaks, every request on it fails with kPeerFailed
// naming the server; the next submit connects again (the server may have been
// restarted at the same address), and fails with kUnavailable when nobody
// accepts there within the reconnect time. Responses are checked: a frame with
// a wrong magic, an unexpected id or more payload than its request expects
// closes the connection with kPeerFailed; it is never written past a buffer.
//
// Thread rules: not thread-safe; one thread at a time per connection (the
// owner serialises).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "transport/rpc_frame.h"
#include "transport/rpc_ucx_lane.h"
#include "transport/socket.h"

namespace dist {

// One request and, once done, its response.
struct RpcCall {
  RpcHeader request;
  // The payload, gathered from up to two pieces; they must stay valid until done.
  const void* payload[2] = {nullptr, nullptr};
  size_t payload_bytes[2] = {0, 0};
  // Where a successful response's payload goes, and the most it may hold.
  // Null: the payload is kept in `response` (up to response_capacity bytes).
  void* response_into = nullptr;
  size_t response_capacity = 0;

  bool done = false;
  Status status = Status::kOk;
  std::string error;  // the server's message, or the connection's failure
  uint64_t args[3] = {0, 0, 0};
  size_t response_bytes = 0;
  std::vector<uint8_t> response;

  // Kept by the connection while the call's payloads travel on the UCX lane.
  RpcLaneTransfer lane_parts[2];
  RpcLaneTransfer lane_response;
  bool frame_done = false;  // its response frame has arrived
  bool on_lane = false;     // lane transfers not yet checked

  // Throws the call's error (after it is done) unless it succeeded.
  void check() const {
    if (status != Status::kOk) throw Error(status, error);
  }
};

struct RpcTimeouts {
  std::chrono::milliseconds connect{2000};  // per (re)connection attempt window
  std::chrono::milliseconds call{60000};    // default bound of wait()
};

class RpcConnection {
 public:
  // `peer` names the server in messages ("ps:1 at 127.0.0.1:2223").
  RpcConnection(std::string peer, std::string address, std::string token, RpcTimeouts timeouts);
  ~RpcConnection();
  RpcConnection(const RpcConnection&) = delete;
  RpcConnection& operator=(const RpcConnection&) = delete;

  // Called right after every successful (re)connection, before the call that
  // caused it is queued: the place to replay state onto a restarted server.
  void set_on_connect(std::function<void(RpcConnection&)> hook) { on_connect_ = std::move(hook); }

  // Queues the call (connecting first if needed) and sends what it can now.
  // Throws kUnavailable/kAuth when no connection can be made; the call is
  // then not queued.
  void submit(const std::shared_ptr<RpcCall>& call);

  // Drives every connection until each call is done or the deadline passes;
  // calls still running then fail with kTimeout and their connections are
  // closed (their order is lost). Does not throw for failed calls.
  static void wait_all(const std::vector<std::pair<RpcConnection*, RpcCall*>>& calls, SteadyTime deadline);
  void wait(RpcCall& call, SteadyTime deadline) { wait_all({{this, &call}}, deadline); }

  bool connected() const { return socket_.valid(); }
  // Connects now unless connected; throws as submit does.
  void ensure_connected() {
    if (!socket_.valid()) connect();
  }
  // How many times a connection was made (1 after the first).
  uint64_t connections_made() const { return connections_made_; }
  const std::string& peer() const { return peer_; }
  // Whether this connection has a UCX lane, and how many payloads (either
  // way) have travelled on it.
  bool has_lane() const { return lane_ != nullptr; }
  uint64_t lane_payloads() const { return lane_payloads_; }
  const RpcTimeouts& timeouts() const { return timeouts_; }

  // Fails every queued call with `status` and drops the connection.
  void close(Status status, const std::string& reason);

 private:
  void connect();
  void post_request_parts(RpcCall& call);
  // Progresses the lane and completes the calls whose transfers finished.
  unsigned drive_lane();
  short wanted_events() const;
  void pump(short revents);
  void pump_send();
  void pump_receive();
  void protocol_error(const std::string& problem);

  std::string peer_;
  HostPort address_;
  std::string token_;
  RpcTimeouts timeouts_;
  std::function<void(RpcConnection&)> on_connect_;
  Socket socket_;
  uint64_t connections_made_ = 0;
  uint64_t next_id_ = 1;

  std::deque<std::shared_ptr<RpcCall>> unsent_;    // front is being sent
  std::deque<std::shared_ptr<RpcCall>> awaiting_;  // sent, response not complete
  size_t sent_of_front_ = 0;                      // bytes of unsent_.front() sent
  RpcHeader incoming_;
  size_t header_received_ = 0;
  size_t payload_received_ = 0;
  uint8_t* payload_target_ = nullptr;
  size_t payload_on_socket_ = 0;  // of incoming_: 0 when its payload is on the lane

  std::unique_ptr<RpcUcxLane> lane_;
  std::deque<std::shared_ptr<RpcCall>> on_lane_;  // calls with lane transfers not yet checked
  uint64_t lane_payloads_ = 0;
};

}  // namespace dist
