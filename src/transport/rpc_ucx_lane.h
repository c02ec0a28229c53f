// The UCX data lane beside one request/response connection
// (transport/rpc_connection.h, ps/server.cc). Large payloads, in either
// direction, travel as UCX tagged messages between two UCX workers dedicated
// to that connection (through shared memory on one host: several times what
// TCP loopback moves); the TCP connection keeps carrying every header, the
// small payloads, the order of calls and the authentication.
//
// Setting the lane up, over a connection that has already passed the HMAC
// handshake (so a peer without the token never learns a UCX address):
//   connector -> acceptor : kRpcLaneMagic frame, code kLaneOffer, payload = its worker address
//   acceptor  -> connector: response frame, ok + its worker address (or an error: no lane)
//   connector -> acceptor : kRpcLaneMagic frame, code kLaneConfirm (its endpoint is up)
//   acceptor  -> connector: response frame, ok
// From then on a frame with the *Lane* magic says that its `payload_bytes`
// follow on the lane, under rpc_lane_tag(id, direction, part); parts are the
// non-empty pieces of the payload in order (at most two). Anything that goes
// wrong while setting up means no lane: payloads stay on TCP.
//
// The lane joins processes on one host only (both ends of the connection have
// the same IP address), through UCX's shared-memory segments (posix, sysv):
// never through cma/knem/xpmem, whose copies abort the surviving process when
// the peer dies mid-copy, since shared memory here has no UCX peer-failure
// handling; the TCP connection detects a dead peer instead. Between hosts,
// payloads stay on TCP. UCX_TLS narrows the lane's transports further.
//
// DIST_PS_UCX=0 turns the lane off (both ends honour it).
//
// Thread rules: one thread at a time per lane (the connection's owner).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/rpc_frame.h"
#include "transport/socket.h"

namespace dist {

class UcxWorker;

inline constexpr uint32_t kRpcLaneMagic = 0x314C5044;             // "DPL1": lane set-up request
inline constexpr uint32_t kRpcRequestLaneMagic = 0x55515044;      // "DPQU": request, payload on the lane
inline constexpr uint32_t kRpcResponseLaneMagic = 0x55525044;     // "DPRU": response, payload on the lane
inline constexpr int32_t kLaneOffer = 1;
inline constexpr int32_t kLaneConfirm = 2;

// Payloads from this size up go on the lane. Measured push+pull medians on
// loopback (load 1.5): 32 KiB 62 us over TCP, 90 us on the lane; 64 KiB 91
// us both; 128 KiB 142 us over TCP, 84 us on the lane; 1 MiB 432 / 208 us.
inline constexpr size_t kRpcLaneThreshold = 64 * 1024;
// How long setting a lane up may take once the connection is authenticated:
// starting UCX at both ends takes about 12 ms on an idle machine here, but
// far longer under load, and a connection's own connect time (which may be
// short, to find a dead server quickly) must not make a live server fail.
inline constexpr std::chrono::seconds kRpcLaneSetupTime{10};
// The most bytes a worker address may have on the wire.
inline constexpr size_t kMaxLaneAddressBytes = 64 * 1024;

enum class LaneDirection : uint64_t { kRequest = 0, kResponse = 1 };

// The tag of part `part` (0 or 1) of call `id`'s payload in one direction.
inline uint64_t rpc_lane_tag(uint64_t id, LaneDirection direction, unsigned part) {
  return (id << 2) | (static_cast<uint64_t>(direction) << 1) | (part & 1u);
}

// False when DIST_PS_UCX=0.
bool rpc_lane_enabled();

// One tagged message on a lane. Stays at one address while posted (UCX's
// completion writes into it).
struct RpcLaneTransfer {
  void* request = nullptr;  // UCX's, while it runs
  bool posted = false;
  bool done = false;
  int status = 0;           // ucs_status_t once done
  size_t length = 0;        // received bytes once done
  bool running() const { return posted && !done; }
  bool ok() const { return done && status == 0; }
};

// How a waiter drives a lane: it polls UCX for kRpcLaneSpin after the last
// event (a transfer about to finish is seen at once), then naps kRpcLaneNap at
// a time (so a wait that is not about to end leaves the core to the peer on a
// 2-core machine), waking early when its connection has something.
inline constexpr std::chrono::microseconds kRpcLaneSpin{50};
inline constexpr std::chrono::microseconds kRpcLaneNap{50};

class RpcUcxLane {
 public:
  // Starts a UCX context and worker for one connection; throws kUnavailable
  // when UCX cannot start. `peer` names the other end in messages.
  explicit RpcUcxLane(std::string peer);
  ~RpcUcxLane();
  RpcUcxLane(const RpcUcxLane&) = delete;
  RpcUcxLane& operator=(const RpcUcxLane&) = delete;

  // This end's worker address (to send over the authenticated connection).
  const std::string& address() const;
  // Creates the endpoint to the other end; throws kUnavailable when UCX cannot
  // reach it (e.g. the two ends' UCX_TLS share no transport).
  void connect(const std::string& remote_address);

  // Post one message; completion is seen through the transfer after progress().
  void post_send(RpcLaneTransfer& t, uint64_t tag, const void* data, size_t bytes);
  void post_receive(RpcLaneTransfer& t, uint64_t tag, void* data, size_t capacity);
  // Drives UCX once; how many events it handled.
  unsigned progress();
  // Gives a finished transfer's request back to UCX (after reading its result).
  void release(RpcLaneTransfer& t);
  // Cancels a running transfer and waits (bounded) until UCX lets go of its
  // buffer; on an abandoned lane it does not wait: destroying the lane, which
  // must come next, takes every buffer back.
  void cancel(RpcLaneTransfer& t);

  // Drives UCX until `t` is done: a short spin, then naps that wake at once
  // when `watch_fd` (the connection) hangs up. Throws kPeerFailed when the
  // connection hangs up or the transfer fails, kTimeout at the deadline,
  // kAborted when *stopping turns true; the transfer is then cancelled.
  void wait(RpcLaneTransfer& t, SteadyTime deadline, int watch_fd, const std::atomic<bool>* stopping);

  // Blocking: sends `bytes` as one message, or receives the parts of a payload
  // of exactly `bytes` into `into`, under call `id`'s tags. Throw as wait() does,
  // and kPeerFailed when the parts do not add up to `bytes`.
  void send(uint64_t tag, const void* data, size_t bytes, SteadyTime deadline, int watch_fd,
            const std::atomic<bool>* stopping);
  void receive_parts(uint64_t id, LaneDirection direction, void* into, size_t bytes, SteadyTime deadline,
                     int watch_fd, const std::atomic<bool>* stopping);

  // The connection failed: close without waiting for the other end.
  void abandon();
  const std::string& peer() const { return peer_; }

  // Why a finished transfer failed ("" when it succeeded).
  std::string describe_failure(const RpcLaneTransfer& t) const;

 private:
  // Declared before the worker: UCX may still write into them while the
  // worker is torn down.
  std::string peer_;
  bool abandoned_ = false;
  RpcLaneTransfer blocking_;  // the transfer of send() and receive_parts()
  std::unique_ptr<UcxWorker> worker_;
};

// The connector's side of the set-up, over a socket that has just passed the
// handshake: a lane both ends can use, or null when either cannot (DIST_PS_UCX=0,
// no UCX, no common transport). Throws only when the socket breaks or the
// acceptor answers with a malformed frame.
std::unique_ptr<RpcUcxLane> offer_lane(int fd, const std::string& peer, SteadyTime deadline);

// The acceptor's side: one connection's lane, set up by the frames the
// connector sends (answer() each kRpcLaneMagic frame once its header is read).
class RpcLaneAcceptor {
 public:
  // Reads the rest of the frame and answers it. False when the frame cannot
  // be trusted (an oversized address): the connection must end.
  bool answer(int fd, const RpcHeader& frame, const std::string& peer, SteadyTime deadline);
  // The lane once the connector confirmed its end works, else null.
  RpcUcxLane* ready() const { return confirmed_ ? lane_.get() : nullptr; }

 private:
  std::unique_ptr<RpcUcxLane> lane_;
  bool confirmed_ = false;
};

}  // namespace dist
