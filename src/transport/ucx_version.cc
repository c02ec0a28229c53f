#include "transport/ucx_version.h"

#include <ucp/api/ucp.h>

namespace dist {

std::string ucx_runtime_version() { return ucp_get_version_string(); }

std::string ucx_compiled_api_version() { return std::to_string(UCP_API_MAJOR) + "." + std::to_string(UCP_API_MINOR); }

}  // namespace dist
