#include "transport/ucx_tuning.h"

#include <dirent.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace dist {
namespace {

bool user_set(const char* name) {
  const std::string variable = std::string("UCX_") + name;
  return std::getenv(variable.c_str()) != nullptr;
}

// UCX_TLS's names, or nothing when it does not restrict the transports.
std::vector<std::string> named_transports() {
  const char* tls = std::getenv("UCX_TLS");
  if (tls == nullptr || *tls == '\0' || *tls == '^') return {};
  std::vector<std::string> names;
  const std::string list(tls);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    names.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& name : names) {
    if (name == "all") return {};
  }
  return names;
}

bool is_local_transport(const std::string& name) {
  for (const char* local : {"self", "sm", "shm", "mm", "posix", "sysv", "cma", "knem", "xpmem"}) {
    if (name == local) return true;
  }
  return false;
}

bool has_rdma_devices() {
  DIR* devices = opendir("/sys/class/infiniband");
  if (devices == nullptr) return false;
  bool found = false;
  while (const dirent* entry = readdir(devices)) {
    if (entry->d_name[0] != '.') found = true;
  }
  closedir(devices);
  return found;
}

void set_default(ucp_config_t* config, const char* name, const char* value) {
  // A UCX build that does not know the setting simply keeps its own.
  if (!user_set(name)) ucp_config_modify(config, name, value);
}

}  // namespace

bool ucx_restricted_to_tcp() {
  const std::vector<std::string> names = named_transports();
  bool tcp = false;
  for (const std::string& name : names) {
    if (name == "tcp") {
      tcp = true;
    } else if (name != "self") {
      return false;
    }
  }
  return tcp;
}

bool ucx_network_is_tcp_only() {
  const std::vector<std::string> names = named_transports();
  if (names.empty()) return !has_rdma_devices();
  for (const std::string& name : names) {
    if (name != "tcp" && !is_local_transport(name)) return false;
  }
  return true;
}

bool ucx_bulk_endpoints_wanted(bool same_host) {
  const char* wanted = std::getenv("DIST_UCX_BULK_ENDPOINTS");
  if (wanted == nullptr || std::string(wanted) != "1") return false;
  return same_host ? ucx_restricted_to_tcp() : ucx_network_is_tcp_only();
}

void apply_ucx_defaults(ucp_config_t* config) {
  // DIST_UCX_DEFAULTS=0 leaves UCX entirely to its own defaults (to compare).
  if (const char* use = std::getenv("DIST_UCX_DEFAULTS"); use != nullptr && std::string(use) == "0") return;
  if (ucx_restricted_to_tcp()) set_default(config, "RNDV_THRESH", ucx_bulk_endpoints_wanted(true) ? "512K" : "inf");
  set_default(config, "RNDV_SEND_NBR_THRESH", "512K");
}

}  // namespace dist
