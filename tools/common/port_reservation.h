// Free ports for tasks launched on this machine (dist-run, dist-bench -n).
//
// Ports are taken below the kernel's ephemeral range (20000 up to the start of
// /proc/sys/net/ipv4/ip_local_port_range, at most 31999): the kernel never
// hands those out as the source port of an outgoing connection, so none of the
// many connections the tasks and UCX open can take a task's port between its
// release here and the task's own bind. Each port is held bound until
// release(), so the ports are distinct and no other program gets one meanwhile.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace dist::tools {

// Why no port could be reserved; what() names the host and the OS error.
class PortError : public std::runtime_error {
 public:
  PortError(const std::string& message, bool unknown_host)
      : std::runtime_error(message), unknown_host_(unknown_host) {}
  // The host name did not resolve (a usage error, not the machine's).
  bool unknown_host() const { return unknown_host_; }

 private:
  bool unknown_host_;
};

class PortReservation {
 public:
  // Reserves `count` ports on `host` (a name or an IPv4/IPv6 address).
  PortReservation(const std::string& host, size_t count);
  ~PortReservation();
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  const std::vector<int>& ports() const { return ports_; }

  // Closes the sockets so the tasks can bind the ports; call right before spawning.
  void release();

 private:
  std::vector<int> sockets_;
  std::vector<int> ports_;
};

// "host:port", with IPv6 addresses in brackets: "[::1]:port".
std::string format_address(const std::string& host, int port);

}  // namespace dist::tools
