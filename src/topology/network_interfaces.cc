#include "topology/network_interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "base/status.h"

namespace dist {

std::vector<NetworkInterface> list_interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    fail(Status::kSystem, std::string("topology: getifaddrs failed: ") + std::strerror(errno));
  }
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> guard(list, &freeifaddrs);
  std::vector<NetworkInterface> interfaces;
  std::map<std::string, size_t> index_of;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_name == nullptr) continue;
    auto [slot, inserted] = index_of.emplace(entry->ifa_name, interfaces.size());
    if (inserted) {
      NetworkInterface added;
      added.name = entry->ifa_name;
      added.up = (entry->ifa_flags & IFF_UP) != 0;
      added.loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
      interfaces.push_back(std::move(added));
    }
    const sockaddr* address = entry->ifa_addr;
    if (address == nullptr || (address->sa_family != AF_INET && address->sa_family != AF_INET6)) continue;
    const socklen_t length = address->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    char host[NI_MAXHOST];
    if (getnameinfo(address, length, host, sizeof host, nullptr, 0, NI_NUMERICHOST) == 0) {
      interfaces[slot->second].addresses.emplace_back(host);
    }
  }
  return interfaces;
}

}  // namespace dist
