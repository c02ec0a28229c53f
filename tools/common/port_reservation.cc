#include "port_reservation.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

namespace dist::tools {

namespace {

using AddressList = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

constexpr int kLowestPort = 20000;
constexpr int kHighestPort = 31999;

AddressList resolve_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int result = ::getaddrinfo(host.c_str(), "0", &hints, &found);
  if (result != 0) throw PortError("host '" + host + "': " + ::gai_strerror(result), true);
  return AddressList(found, &freeaddrinfo);
}

// One past the highest port to use: below the ephemeral range.
int end_of_range() {
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  return std::min(kHighestPort + 1, ephemeral_low);
}

void set_port(sockaddr_storage& address, int port) {
  if (address.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&address)->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in*>(&address)->sin_port = htons(static_cast<uint16_t>(port));
  }
}

// A socket bound to `port` (0: the kernel picks) at `a`, or -1 with errno set.
int bind_port(const addrinfo* a, int port) {
  sockaddr_storage address{};
  std::memcpy(&address, a->ai_addr, a->ai_addrlen);
  set_port(address, port);
  const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), a->ai_addrlen) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

int port_of(int socket_fd) {
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  if (::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&bound), &size) != 0) return -1;
  if (bound.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

}  // namespace

PortReservation::PortReservation(const std::string& host, size_t count) {
  if (count == 0) return;
  AddressList addresses = resolve_host(host);
  const int end = end_of_range();
  const int span = end - kLowestPort;
  // Start at a random place, so that launches at the same moment rarely collide.
  std::random_device random;
  const int start = span > 0 ? static_cast<int>(random() % static_cast<unsigned>(span)) : 0;
  int last_error = 0;
  // The first address of the host that accepts a bind is the one every task gets.
  for (const addrinfo* a = addresses.get(); a != nullptr && sockets_.size() < count; a = a->ai_next) {
    for (int i = 0; i < span && sockets_.size() < count; ++i) {
      const int fd = bind_port(a, kLowestPort + (start + i) % span);
      if (fd >= 0) {
        sockets_.push_back(fd);
      } else {
        last_error = errno;
        if (errno != EADDRINUSE && errno != EACCES) break;  // this address cannot be used at all
      }
    }
    // An unusual port configuration leaves no range below the ephemeral one.
    while (span <= 0 && sockets_.size() < count) {
      const int fd = bind_port(a, 0);
      if (fd < 0) {
        last_error = errno;
        break;
      }
      sockets_.push_back(fd);
    }
    if (sockets_.size() < count) release();
  }
  if (sockets_.size() < count) {
    throw PortError("cannot reserve " + std::to_string(count) + " ports on '" + host + "' in " +
                    std::to_string(kLowestPort) + "-" + std::to_string(end - 1) + ": " + std::strerror(last_error), false);
  }
  for (int fd : sockets_) ports_.push_back(port_of(fd));
}

PortReservation::~PortReservation() { release(); }

void PortReservation::release() {
  for (int fd : sockets_) ::close(fd);
  sockets_.clear();
}

std::string format_address(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

}  // namespace dist::tools
