// The cluster token every connection proves it knows (DESIGN.md §4). Taken from
// the context options, else DIST_CLUSTER_TOKEN, else the file named by
// DIST_CLUSTER_TOKEN_FILE.
#pragma once

#include <optional>
#include <string>

#include "base/environment.h"

namespace dist {

struct TokenSources {
  std::optional<std::string> token;       // from the options
  std::optional<std::string> token_file;  // from the options
};

// The token bytes, or nothing when no source gives one. A token file must be a
// regular file readable by its owner only (like an ssh key) and not empty.
std::optional<std::string> load_cluster_token(const TokenSources& sources, const Environment& env);

// The same, or kAuth saying where to set one (`who` prefixes it: "context").
std::string require_cluster_token(const TokenSources& sources, const Environment& env, const std::string& who);

// Reads and checks a token file; throws naming the file and the problem.
std::string read_token_file(const std::string& path);

}  // namespace dist
