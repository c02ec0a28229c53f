// dist_checkpoint_*: checkpoints of every parameter server of a cluster
// (src/ps/checkpoint_coordinator.h).
#include "c_api/cluster_handle.h"
#include "c_api/cluster_token_option.h"
#include "c_api/guard.h"
#include "c_api/strings.h"
#include "ps/checkpoint_coordinator.h"
#include "ps/cluster_servers.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

ps::ClientOptions checkpoint_client_options(const dist_cluster_t* cluster, const dist_checkpoint_options_t* in) {
  ps::ClientOptions out;
  out.servers = ps::cluster_servers(require(cluster, "cluster")->resolved.spec);
  auto has = [in](uint64_t bit) { return in != nullptr && (in->field_mask & bit) != 0; };
  const char* token = has(DIST_CHECKPOINT_OPT_TOKEN) ? require(in->token, "options: token") : nullptr;
  const char* token_file = has(DIST_CHECKPOINT_OPT_TOKEN_FILE) ? require(in->token_file, "options: token_file") : nullptr;
  out.token = required_cluster_token(token, token_file, "a checkpoint");
  out.timeouts.call = std::chrono::milliseconds(600000);
  if (has(DIST_CHECKPOINT_OPT_TIMEOUT_MS)) {
    if (in->timeout_ms <= 0) fail_invalid("options: timeout_ms " + std::to_string(in->timeout_ms) + " must be positive");
    out.timeouts.call = std::chrono::milliseconds(in->timeout_ms);
  }
  return out;
}

std::string required_path(const char* path, const char* name) {
  std::string text = require(path, name);
  if (text.empty()) fail_invalid(std::string(name) + " is empty");
  return text;
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_checkpoint_save(const dist_cluster_t* cluster, const char* root, int64_t step,
                                               const dist_checkpoint_options_t* options, char** path) {
  return call_guarded(__func__, [&] {
    require(path, "path");
    const std::string directory = dist::required_path(root, "root");
    dist::ps::PsClient client(dist::checkpoint_client_options(cluster, options));
    *path = dist::copy_for_caller(dist::ps::save_checkpoint(client, directory, step));
  });
}

DIST_EXPORT dist_status_t dist_checkpoint_restore(const dist_cluster_t* cluster, const char* directory,
                                                  const dist_checkpoint_options_t* options, char** path) {
  return call_guarded(__func__, [&] {
    require(path, "path");
    const std::string where = dist::required_path(directory, "directory");
    dist::ps::PsClient client(dist::checkpoint_client_options(cluster, options));
    *path = dist::copy_for_caller(dist::ps::restore_checkpoint(client, where));
  });
}

}  // extern "C"
