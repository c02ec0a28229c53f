#include "transport/advertised_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "base/status.h"

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

// The IPv4 address of the first interface that is up and `wanted`.
template <typename Wanted>
std::optional<std::string> interface_ipv4(Wanted wanted) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* entry = list; entry != nullptr && !found; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET || (entry->ifa_flags & IFF_UP) == 0 ||
        !wanted(*entry)) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof text) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
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
    if (auto address = interface_ipv4([&](const ifaddrs& entry) { return *name == entry.ifa_name; })) {
      return *address;
    }
  }
  if (auto address = interface_ipv4([](const ifaddrs& entry) { return (entry.ifa_flags & IFF_LOOPBACK) == 0; })) {
    return *address;
  }
  return "127.0.0.1";
}

}  // namespace dist
