#include "transport/ucx_tuning.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace dist {
namespace {

bool user_set(const char* name) {
  const std::string variable = std::string("UCX_") + name;
  return std::getenv(variable.c_str()) != nullptr;
}

// UCX_TLS names only TCP transports ("tcp", or with "self" for loopback).
bool restricted_to_tcp() {
  const char* tls = std::getenv("UCX_TLS");
  if (tls == nullptr || *tls == '\0' || *tls == '^') return false;
  const std::string list(tls);
  size_t start = 0;
  bool tcp = false;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(start, end - start);
    if (name == "tcp") {
      tcp = true;
    } else if (name != "self") {
      return false;
    }
    start = end + 1;
  }
  return tcp;
}

void set_default(ucp_config_t* config, const char* name, const char* value) {
  // A UCX build that does not know the setting simply keeps its own.
  if (!user_set(name)) ucp_config_modify(config, name, value);
}

// UCX 1.13 takes a transport's own settings (UCX_TCP_*) only from the
// environment: ucp_config_modify accepts them but the TCP transport never sees
// them (measured: no change in bandwidth). So these few are put in the
// environment, where UCX_TCP_* was not set, once, before the first ucp_init.
void set_transport_default(const char* name, const char* value) {
  const std::string variable = std::string("UCX_") + name;
  setenv(variable.c_str(), value, /*overwrite=*/0);
}

}  // namespace

void apply_ucx_defaults(ucp_config_t* config) {
  // DIST_UCX_DEFAULTS=0 leaves UCX entirely to its own defaults (to compare).
  if (const char* use = std::getenv("DIST_UCX_DEFAULTS"); use != nullptr && std::string(use) == "0") return;
  static std::once_flag transport_defaults;
  std::call_once(transport_defaults, [] {
    set_transport_default("TCP_TX_SEG_SIZE", "64K");
    set_transport_default("TCP_RX_SEG_SIZE", "256K");
  });
  if (restricted_to_tcp()) set_default(config, "RNDV_THRESH", "inf");
}

}  // namespace dist
