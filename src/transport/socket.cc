#include "transport/socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "base/status.h"

namespace dist {

namespace {

int remaining_ms(SteadyTime deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1000));
}

[[noreturn]] void fail_errno(const std::string& what) {
  fail(Status::kSystem, what + ": " + std::strerror(errno));
}

// The numeric host and port of a socket address into *out; getnameinfo's
// error code, 0 when it worked.
int numeric_address(const sockaddr_storage& address, socklen_t length, HostPort* out) {
  char host[NI_MAXHOST] = {};
  char port[NI_MAXSERV] = {};
  const int rc = getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, port,
                             sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
  if (rc == 0) *out = HostPort{host, static_cast<uint16_t>(std::stoi(port))};
  return rc;
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) fail_errno("fcntl(O_NONBLOCK)");
}

// Resolves host:port to socket addresses (numeric or by name).
struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head) freeaddrinfo(head);
  }
};

void resolve(const HostPort& address, bool passive, AddressList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  std::string port = std::to_string(address.port);
  int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &out.head);
  if (rc != 0) {
    fail(Status::kInvalidArgument, "cannot resolve host '" + address.host + "': " + gai_strerror(rc));
  }
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

HostPort split_address(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) fail_invalid("address '" + address + "' is not host:port");
  HostPort out;
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  out.port = static_cast<uint16_t>(std::stoi(address.substr(colon + 1)));
  return out;
}

Socket listen_on(const HostPort& address) {
  AddressList list;
  resolve(address, true, list);
  int last_errno = 0;
  for (addrinfo* ai = list.head; ai != nullptr; ai = ai->ai_next) {
    Socket s(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!s.valid()) continue;
    int one = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s.fd(), ai->ai_addr, ai->ai_addrlen) == 0 && listen(s.fd(), 128) == 0) {
      set_nonblocking(s.fd());
      return s;
    }
    last_errno = errno;
  }
  errno = last_errno;
  fail(Status::kUnavailable, "cannot listen at " + address.host + ":" + std::to_string(address.port) + ": " +
                                 std::strerror(last_errno));
}

std::string join_address(const HostPort& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

HostPort local_address(const Socket& socket) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) fail_errno("getsockname");
  HostPort address;
  const int rc = numeric_address(bound, length, &address);
  if (rc != 0) fail(Status::kSystem, std::string("getnameinfo: ") + gai_strerror(rc));
  return address;
}

Socket accept_until(const Socket& listener, SteadyTime deadline) {
  while (true) {
    int fd = accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      Socket s(fd);
      set_nonblocking(fd);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return s;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) fail_errno("accept");
    if (std::chrono::steady_clock::now() >= deadline) return Socket();
    pollfd p{listener.fd(), POLLIN, 0};
    poll(&p, 1, std::max(1, remaining_ms(deadline)));
  }
}

Socket connect_until(const HostPort& address, SteadyTime deadline) {
  auto backoff = std::chrono::milliseconds(10);
  while (true) {
    Socket socket = try_connect(address, deadline);
    const auto now = std::chrono::steady_clock::now();
    if (socket.valid() || now >= deadline) return socket;
    std::this_thread::sleep_until(std::min(deadline, now + backoff));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

Socket try_connect(const HostPort& address, SteadyTime deadline) {
  AddressList list;
  resolve(address, false, list);
  for (addrinfo* ai = list.head; ai != nullptr; ai = ai->ai_next) {
    Socket s(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!s.valid()) continue;
    set_nonblocking(s.fd());
    if (connect(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) continue;
      pollfd p{s.fd(), POLLOUT, 0};
      if (poll(&p, 1, std::max(1, remaining_ms(deadline))) <= 0) continue;
      int error = 0;
      socklen_t length = sizeof error;
      getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) continue;
    }
    int one = 1;
    setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
  }
  return Socket();
}

void write_all(int fd, const void* data, size_t bytes, SteadyTime deadline, const std::string& what) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      fail(Status::kPeerFailed, what + ": connection broken (" + std::strerror(errno) + ")");
    }
    if (std::chrono::steady_clock::now() >= deadline) fail(Status::kTimeout, what + ": timed out sending");
    pollfd pfd{fd, POLLOUT, 0};
    poll(&pfd, 1, std::max(1, remaining_ms(deadline)));
  }
}

void read_all(int fd, void* data, size_t bytes, SteadyTime deadline, const std::string& what) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = recv(fd, p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) fail(Status::kPeerFailed, what + ": connection closed");
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      fail(Status::kPeerFailed, what + ": connection broken (" + std::strerror(errno) + ")");
    }
    if (std::chrono::steady_clock::now() >= deadline) fail(Status::kTimeout, what + ": timed out receiving");
    pollfd pfd{fd, POLLIN, 0};
    poll(&pfd, 1, std::max(1, remaining_ms(deadline)));
  }
}

std::string remote_address(const Socket& socket) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  HostPort address;
  if (getpeername(socket.fd(), reinterpret_cast<sockaddr*>(&peer), &length) != 0 ||
      numeric_address(peer, length, &address) != 0) {
    return "an unknown address";
  }
  return join_address(address);
}

void enable_keepalive(int fd) {
  // A cut link sends no reset: an idle connection learns of it from
  // keepalive probes (2 s idle, then 3 probes 1 s apart), one with data in
  // flight (a failure notice written after the cut) from the user timeout,
  // which keepalive alone would leave to the retransmission limit (minutes).
  int one = 1, idle = 2, interval = 1, count = 3;
  unsigned user_timeout_ms = 5000;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

}  // namespace dist
