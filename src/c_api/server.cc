// dist_server_*: the in-process standard parameter server (src/ps/server.h).
#include <memory>

#include "base/json.h"
#include "c_api/cluster_handle.h"
#include "c_api/cluster_token_option.h"
#include "c_api/guard.h"
#include "c_api/strings.h"
#include "ps/server.h"

using dist::call_guarded;
using dist::require;

struct dist_server {
  std::unique_ptr<dist::ps::Server> server;
};

namespace dist {
namespace {

// The task's own address and name from the cluster ("ps:1").
void address_from_cluster(const dist_cluster_t* cluster, ps::ServerOptions& out) {
  if (cluster == nullptr) fail_invalid("cluster is NULL and the options give no address");
  const ResolvedCluster& resolved = cluster->resolved;
  if (!resolved.task_type || !resolved.task_id) {
    fail_invalid("the cluster names no task for this process (task type and id), and the options give no address");
  }
  out.address = resolved.spec.task_address(*resolved.task_type, *resolved.task_id);
}

ps::ServerOptions read_server_options(const dist_cluster_t* cluster, const dist_server_options_t* in) {
  ps::ServerOptions out;
  auto has = [in](uint64_t bit) { return in != nullptr && (in->field_mask & bit) != 0; };
  if (has(DIST_SERVER_OPT_ADDRESS)) {
    out.address = require(in->address, "options: address");
  } else {
    address_from_cluster(cluster, out);
  }
  if (cluster != nullptr && cluster->resolved.task_type && cluster->resolved.task_id) {
    out.name = *cluster->resolved.task_type + ":" + std::to_string(*cluster->resolved.task_id);
  }
  const char* token = has(DIST_SERVER_OPT_TOKEN) ? require(in->token, "options: token") : nullptr;
  const char* token_file = has(DIST_SERVER_OPT_TOKEN_FILE) ? require(in->token_file, "options: token_file") : nullptr;
  out.token = required_cluster_token(token, token_file, "a parameter server");
  if (has(DIST_SERVER_OPT_CHECKPOINT_DIR)) {
    out.checkpoint_root = require(in->checkpoint_dir, "options: checkpoint_dir");
    if (out.checkpoint_root.empty()) fail_invalid("options: checkpoint_dir is empty");
  }
  if (has(DIST_SERVER_OPT_IO_TIMEOUT_MS)) {
    if (in->io_timeout_ms <= 0) fail_invalid("options: io_timeout_ms " + std::to_string(in->io_timeout_ms) + " must be positive");
    out.io_timeout = std::chrono::milliseconds(in->io_timeout_ms);
  }
  if (has(DIST_SERVER_OPT_LOG)) {
    dist_log_fn_t log = require(in->log, "options: log");
    void* user_data = in->log_user_data;
    out.log = [log, user_data](const std::string& message) { log(message.c_str(), user_data); };
  }
  return out;
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_server_start(const dist_cluster_t* cluster, const dist_server_options_t* options,
                                            dist_server_t** server) {
  return call_guarded(__func__, [&] {
    require(server, "server");
    auto created = std::make_unique<dist_server>();
    created->server = std::make_unique<dist::ps::Server>(dist::read_server_options(cluster, options));
    *server = created.release();
  });
}

DIST_EXPORT dist_status_t dist_server_address(const dist_server_t* server, const char** address) {
  return call_guarded(__func__, [&] {
    *require(address, "address") = require(server, "server")->server->bound_address().c_str();
  });
}

DIST_EXPORT dist_status_t dist_server_describe(const dist_server_t* server, char** json) {
  return call_guarded(__func__, [&] {
    require(json, "json");
    dist::ps::Server& s = *require(server, "server")->server;
    dist::Json variables = dist::Json::array();
    for (const auto& entry : s.store().entries()) {
      const dist::ps::VariableSpec& spec = entry.variable->spec();
      variables.push_back({{"id", entry.id}, {"name", spec.name}, {"dtype", dist::name(spec.dtype)},
                           {"shape", spec.shape}, {"row_offset", spec.row_offset}, {"rows", spec.rows},
                           {"bytes", spec.bytes()}, {"optimizer", dist::ps::optimizer_label(spec)},
                           {"version", entry.variable->version()}});
    }
    dist::Json document = {{"address", s.bound_address()}, {"stopping", s.stopping()},
                           {"requests", s.requests_served()}, {"variables", variables}};
    *json = dist::copy_for_caller(document.dump());
  });
}

DIST_EXPORT dist_status_t dist_server_join(dist_server_t* server, int64_t timeout_ms) {
  return call_guarded(__func__, [&] {
    require(server, "server");
    if (!server->server->join(std::chrono::milliseconds(timeout_ms < 0 ? -1 : timeout_ms))) {
      dist::fail(dist::Status::kTimeout, "the server at " + server->server->bound_address() + " is still serving after " +
                                             std::to_string(timeout_ms) + " ms");
    }
  });
}

DIST_EXPORT dist_status_t dist_server_stop(dist_server_t* server) {
  return call_guarded(__func__, [&] { require(server, "server")->server->stop(); });
}

DIST_EXPORT void dist_server_destroy(dist_server_t* server) { delete server; }

}  // extern "C"
