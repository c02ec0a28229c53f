// The OS's network interfaces (getifaddrs), whether or not hwloc lists them
// as NICs: the topology report shows them all, and a task that must say where
// others reach it picks one (transport/advertised_address.h).
#pragma once

#include <string>
#include <vector>

namespace dist {

struct NetworkInterface {
  std::string name;
  bool up = false;
  bool loopback = false;
  std::vector<std::string> addresses;  // IPv4 and IPv6, numeric, in the order the OS lists them
};

// Every interface, in the order the OS lists them. Throws kSystem when the OS
// cannot list them.
std::vector<NetworkInterface> list_interfaces();

}  // namespace dist
