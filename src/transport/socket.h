// TCP sockets with deadlines, for the bootstrap and the control channel. Every
// blocking step takes a deadline; nothing here waits forever.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dist {

using SteadyTime = std::chrono::steady_clock::time_point;

// An owned file descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close();

 private:
  int fd_ = -1;
};

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

// "host:port" or "[v6]:port" (already validated by the cluster spec).
HostPort split_address(const std::string& address);

// "host:port", bracketing an IPv6 host ("[::1]:5000").
std::string join_address(const HostPort& address);

// A listening socket bound to the address's host and port (SO_REUSEADDR).
// Port 0 lets the system pick one; local_address tells which.
Socket listen_on(const HostPort& address);

// The numeric address a socket is bound to: a listener's, or this end of a
// connection (the address its peer reached this host at).
HostPort local_address(const Socket& socket);

// Accepts one connection, or returns an invalid Socket at the deadline.
Socket accept_until(const Socket& listener, SteadyTime deadline);

// One connection attempt; an invalid Socket when nobody listens (yet).
// Throws for errors that retrying cannot fix (unknown host).
Socket try_connect(const HostPort& address, SteadyTime deadline);
// try_connect again and again, waiting 10 ms, then twice as long each time up
// to 0.5 s, while nobody listens; an invalid Socket at the deadline.
Socket connect_until(const HostPort& address, SteadyTime deadline);

// Reads/writes exactly `bytes`; throws kTimeout at the deadline and
// kPeerFailed when the connection closes or breaks. `what` names the peer.
void write_all(int fd, const void* data, size_t bytes, SteadyTime deadline, const std::string& what);
void read_all(int fd, void* data, size_t bytes, SteadyTime deadline, const std::string& what);

// Where the other end of a connection is, "host:port" ("[v6]:port"), for
// messages; "an unknown address" when the system cannot say.
std::string remote_address(const Socket& socket);

// Lowers the time it takes to notice a vanished host or a cut link (about
// 5 s: keepalive probes and a user timeout).
void enable_keepalive(int fd);

}  // namespace dist
