#include "transport/advertised_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/route.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

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

std::optional<std::string> interface_ipv4(const std::string& name) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* entry = list; entry != nullptr && !found; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET || name != entry->ifa_name) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof text) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
}

bool is_loopback(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr) >> 24) == 127;
  }
  return address->sa_family == AF_INET6 &&
         IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
}

std::optional<std::string> host_name_address() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return std::nullopt;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (addrinfo* ai = list; ai != nullptr && !found; ai = ai->ai_next) {
    if (is_loopback(ai->ai_addr)) continue;
    char text[NI_MAXHOST] = {};
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0) found = text;
  }
  freeaddrinfo(list);
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
    if (auto address = interface_ipv4(*name)) return *address;
  }
  if (auto address = host_name_address()) return *address;
  return "127.0.0.1";
}

}  // namespace dist
