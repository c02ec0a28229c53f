// The cluster token a C API call uses: its options' token or token file, else
// DIST_CLUSTER_TOKEN, else DIST_CLUSTER_TOKEN_FILE; an error when none is set.
#pragma once

#include <string>

#include "base/status.h"
#include "transport/cluster_token.h"

namespace dist {

inline std::string required_cluster_token(const char* token, const char* token_file, const std::string& who) {
  TokenSources sources;
  if (token != nullptr) sources.token = std::string(token);
  if (token_file != nullptr) sources.token_file = std::string(token_file);
  auto loaded = load_cluster_token(sources, Environment::from_process());
  if (!loaded) {
    fail_invalid(who + " needs the cluster token: set it in the options, DIST_CLUSTER_TOKEN or DIST_CLUSTER_TOKEN_FILE");
  }
  return *loaded;
}

}  // namespace dist
