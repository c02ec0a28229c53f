#include "transport/advertised_address.h"

#include <net/route.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "base/status.h"
#include "topology/network_interfaces.h"

namespace dist {

namespace {

// /proc/net/route: "Iface Destination Gateway Flags ..." in hex; the default
// route has destination 0 and mask 0.
std::optional<std::string> default_route_interface() {
  std::ifstream routes("/proc/net/route");
  std::string line;
  std::getline(routes, line);  // the header
  while (std::getline(routes, line)) {
    std::istringstream fields(line);
    std::string name, destination, gateway, mask;
    unsigned flags = 0, refcnt = 0, use = 0, metric = 0;
    if (!(fields >> name >> destination >> gateway >> std::hex >> flags >> std::dec >> refcnt >> use >> metric >>
          mask)) {
      continue;
    }
    if (destination == "00000000" && mask == "00000000" && (flags & RTF_UP) != 0) return name;
  }
  return std::nullopt;
}

// The first IPv4 address of the first interface that is up and `wanted`.
template <typename Wanted>
std::optional<std::string> interface_ipv4(Wanted wanted) {
  for (const NetworkInterface& interface : list_interfaces()) {
    if (!interface.up || !wanted(interface)) continue;
    for (const std::string& address : interface.addresses) {
      if (address.find(':') == std::string::npos) return address;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string advertised_host(const Environment& env) {
  if (auto given = env.get("DIST_ADDRESS")) {
    if (given->empty() || given->find_first_of(" \t/") != std::string::npos) {
      fail_invalid("DIST_ADDRESS '" + *given + "' is not a host name or address");
    }
    return *given;
  }
  if (auto name = default_route_interface()) {
    if (auto address = interface_ipv4([&](const NetworkInterface& interface) { return interface.name == *name; })) {
      return *address;
    }
  }
  if (auto address = interface_ipv4([](const NetworkInterface& interface) { return !interface.loopback; })) {
    return *address;
  }
  return "127.0.0.1";
}

}  // namespace dist
