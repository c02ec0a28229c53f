// UCX's version, for dist_build_info: the layers above ask here rather than
// include UCX's headers themselves.
#pragma once

#include <string>

namespace dist {

// The UCX library loaded at run time ("1.13.1").
std::string ucx_runtime_version();

// The UCX API this library was compiled against ("1.13").
std::string ucx_compiled_api_version();

}  // namespace dist
