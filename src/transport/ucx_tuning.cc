#include "transport/ucx_tuning.h"

#include <cstdlib>
#include <string>

namespace dist {
namespace {

bool user_set(const char* name) {
  const std::string variable = std::string("UCX_") + name;
  return std::getenv(variable.c_str()) != nullptr;
}

}  // namespace

bool ucx_restricted_to_tcp() {
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

bool ucx_bulk_endpoints_enabled() {
  const char* wanted = std::getenv("DIST_UCX_BULK_ENDPOINTS");
  return ucx_restricted_to_tcp() && (wanted == nullptr || std::string(wanted) != "0");
}

namespace {

void set_default(ucp_config_t* config, const char* name, const char* value) {
  // A UCX build that does not know the setting simply keeps its own.
  if (!user_set(name)) ucp_config_modify(config, name, value);
}

}  // namespace

void apply_ucx_defaults(ucp_config_t* config) {
  // DIST_UCX_DEFAULTS=0 leaves UCX entirely to its own defaults (to compare).
  if (const char* use = std::getenv("DIST_UCX_DEFAULTS"); use != nullptr && std::string(use) == "0") return;
  if (ucx_restricted_to_tcp()) set_default(config, "RNDV_THRESH", ucx_bulk_endpoints_enabled() ? "512K" : "inf");
}

}  // namespace dist
