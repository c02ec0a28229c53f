#include "transport/bootstrap.h"

#include <unistd.h>

#include <algorithm>

#include "base/log.h"
#include "base/numbers.h"
#include "base/status.h"
#include "topology/host_identity.h"
#include "transport/handshake.h"

namespace dist {

namespace {

constexpr uint32_t kMaxTransportAddress = 1 << 16;
constexpr uint32_t kMaxHostId = 256;

struct HelloWire {
  int32_t rank;
  int32_t size;
  uint64_t cluster_fingerprint;
  int32_t pid;
  uint32_t host_id_bytes;
  uint32_t transport_address_bytes;
  uint32_t network_address_bytes;
  uint32_t reserved[2];  // no padding: every byte sent is written
};
static_assert(sizeof(HelloWire) == 40, "HelloWire has padding");

void send_hello(int fd, const PeerHello& hello, SteadyTime deadline, const std::string& peer) {
  HelloWire wire{hello.rank, hello.size, hello.cluster_fingerprint, hello.pid,
                 static_cast<uint32_t>(hello.host_id.size()), static_cast<uint32_t>(hello.transport_address.size()),
                 static_cast<uint32_t>(hello.network_address.size()), {0, 0}};
  write_all(fd, &wire, sizeof wire, deadline, peer);
  write_all(fd, hello.host_id.data(), hello.host_id.size(), deadline, peer);
  write_all(fd, hello.transport_address.data(), hello.transport_address.size(), deadline, peer);
  write_all(fd, hello.network_address.data(), hello.network_address.size(), deadline, peer);
}

// Every length from the wire is checked before it sizes anything.
PeerHello receive_hello(int fd, SteadyTime deadline, const std::string& peer) {
  HelloWire wire{};
  read_all(fd, &wire, sizeof wire, deadline, peer);
  if (wire.host_id_bytes > kMaxHostId || wire.transport_address_bytes > kMaxTransportAddress ||
      wire.network_address_bytes > kMaxTransportAddress) {
    fail(Status::kPeerFailed, peer + ": malformed hello (host id " + std::to_string(wire.host_id_bytes) +
                                  " bytes, transport addresses " + std::to_string(wire.transport_address_bytes) +
                                  " and " + std::to_string(wire.network_address_bytes) + " bytes)");
  }
  PeerHello hello;
  hello.rank = wire.rank;
  hello.size = wire.size;
  hello.cluster_fingerprint = wire.cluster_fingerprint;
  hello.pid = wire.pid;
  hello.host_id.resize(wire.host_id_bytes);
  hello.transport_address.resize(wire.transport_address_bytes);
  hello.network_address.resize(wire.network_address_bytes);
  read_all(fd, hello.host_id.data(), hello.host_id.size(), deadline, peer);
  read_all(fd, hello.transport_address.data(), hello.transport_address.size(), deadline, peer);
  read_all(fd, hello.network_address.data(), hello.network_address.size(), deadline, peer);
  return hello;
}

void check_hello(const PeerHello& hello, const BootstrapRequest& request, int32_t expected_rank,
                 const std::string& peer) {
  if (hello.size != static_cast<int32_t>(request.addresses.size())) {
    fail(Status::kMismatch, peer + " has a cluster of " + std::to_string(hello.size) + " tasks, this task has " +
                                std::to_string(request.addresses.size()));
  }
  if (hello.cluster_fingerprint != request.cluster_fingerprint) {
    fail(Status::kMismatch, peer + " was started with a different cluster spec");
  }
  if (expected_rank >= 0 && hello.rank != expected_rank) {
    fail(Status::kMismatch, peer + " says it is rank " + std::to_string(hello.rank) + ", expected rank " +
                                std::to_string(expected_rank));
  }
}

SteadyTime earlier(SteadyTime a, SteadyTime b) { return std::min(a, b); }

// The connections a listener refused for failing authentication. They change
// nothing here, but if the job then fails, its error names them: the missing
// peer may be one of them, started with another token.
class Refusals {
 public:
  void add(const std::string& from, const std::string& reason) {
    if (named_.size() < kNamed) {
      named_.push_back(from + " tried and failed authentication (" + reason + ")");
    } else {
      ++more_;
    }
  }
  // "" when none, else "; A tried and failed authentication (why); ...".
  std::string summary() const {
    std::string text;
    for (const std::string& refusal : named_) text += "; " + refusal;
    if (more_ > 0) text += "; and " + std::to_string(more_) + " more connections failed authentication";
    return text;
  }

 private:
  static constexpr size_t kNamed = 4;  // a flood of strangers does not grow the message
  std::vector<std::string> named_;
  size_t more_ = 0;
};

}  // namespace

uint64_t cluster_fingerprint(const std::vector<std::string>& addresses) {
  uint64_t hash = 1469598103934665603ull;
  for (const std::string& address : addresses) {
    for (unsigned char c : address + '\n') {
      hash ^= c;
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

std::vector<BootstrapPeer> run_bootstrap(const BootstrapRequest& request, Socket listener) {
  const int32_t size = static_cast<int32_t>(request.addresses.size());
  const int32_t me = request.rank;
  std::vector<BootstrapPeer> peers(static_cast<size_t>(size));
  PeerHello& mine = peers[static_cast<size_t>(me)].hello;
  mine.rank = me;
  mine.size = size;
  mine.cluster_fingerprint = request.cluster_fingerprint;
  mine.pid = static_cast<int32_t>(getpid());
  mine.host_id = host_identity();
  mine.transport_address = request.transport_address;
  mine.network_address = request.network_address;

  if (!listener.valid()) listener = listen_on(split_address(request.addresses[static_cast<size_t>(me)]));
  const std::string seconds = describe_seconds(request.connect_timeout);

  // Lower ranks: connect, retrying with backoff until they listen.
  for (int32_t j = 0; j < me; ++j) {
    const std::string peer = request.names[static_cast<size_t>(j)] + " (" + request.addresses[static_cast<size_t>(j)] + ")";
    Socket socket = connect_until(split_address(request.addresses[static_cast<size_t>(j)]), request.deadline);
    if (!socket.valid()) fail(Status::kTimeout, "bootstrap: could not reach " + peer + " within " + seconds);
    authenticate_as_connector(socket.fd(), request.token, request.deadline, peer);
    send_hello(socket.fd(), mine, request.deadline, peer);
    PeerHello hello = receive_hello(socket.fd(), request.deadline, peer);
    check_hello(hello, request, j, peer);
    peers[static_cast<size_t>(j)].socket = std::move(socket);
    peers[static_cast<size_t>(j)].hello = std::move(hello);
  }

  // Higher ranks: accept until each has come. A connection that fails the
  // handshake is dropped, and the listener keeps serving the real peers.
  int32_t missing = size - 1 - me;
  Refusals refusals;
  while (missing > 0) {
    Socket socket = accept_until(listener, request.deadline);
    if (!socket.valid()) {
      std::string names;
      for (int32_t j = me + 1; j < size; ++j) {
        if (!peers[static_cast<size_t>(j)].socket.valid()) {
          names += (names.empty() ? "" : ", ") + request.names[static_cast<size_t>(j)] + " (" +
                   request.addresses[static_cast<size_t>(j)] + ")";
        }
      }
      fail(Status::kTimeout, "bootstrap: " + names + " did not connect within " + seconds + refusals.summary());
    }
    const std::string from = remote_address(socket);
    const std::string peer = "a connection from " + from + " to " + request.addresses[static_cast<size_t>(me)];
    SteadyTime limit = earlier(request.deadline, std::chrono::steady_clock::now() + kHandshakeLimit);
    try {
      authenticate_as_acceptor(socket.fd(), request.token, limit, peer);
      PeerHello hello = receive_hello(socket.fd(), limit, peer);
      check_hello(hello, request, -1, peer);
      if (hello.rank <= me || hello.rank >= size || peers[static_cast<size_t>(hello.rank)].socket.valid()) {
        fail(Status::kMismatch, peer + ": unexpected rank " + std::to_string(hello.rank));
      }
      send_hello(socket.fd(), mine, limit, peer);
      peers[static_cast<size_t>(hello.rank)].socket = std::move(socket);
      peers[static_cast<size_t>(hello.rank)].hello = std::move(hello);
      --missing;
    } catch (const AuthFailure& e) {
      refusals.add(from, e.reason());
      log_message(LogLevel::kWarn, "bootstrap: refused " + peer + ": " + e.reason());
    } catch (const Error& e) {
      // Broken, silent or closed early: a stranger, or a peer that failed on
      // its own side. Either way the listener goes on waiting.
      if (e.status() == Status::kMismatch) throw;
    }
  }
  return peers;
}

}  // namespace dist
