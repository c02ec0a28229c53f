// dist_strategy_*: creating strategies, their queries, and reduce().
#include <cmath>

#include "c_api/cluster_token_option.h"
#include "c_api/guard.h"
#include "c_api/handles.h"
#include "c_api/strategy_handles.h"
#include "base/timeline.h"
#include "strategy/reduce.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

StrategyConfig read_strategy_options(const dist_strategy_options_t* in) {
  StrategyConfig out;
  if (in == nullptr) return out;
  auto has = [in](uint64_t bit) { return (in->field_mask & bit) != 0; };
  if (has(DIST_STRATEGY_OPT_KIND)) out.kind = strategy_kind_from_int(in->kind);
  if (has(DIST_STRATEGY_OPT_NUM_CPU_DEVICES)) out.num_cpu_devices = in->num_cpu_devices;
  if (has(DIST_STRATEGY_OPT_COMMUNICATION)) out.communication = communication_from_int(in->communication);
  if (has(DIST_STRATEGY_OPT_BYTES_PER_PACK)) out.bytes_per_pack = in->bytes_per_pack;
  if (has(DIST_STRATEGY_OPT_BIND_THREADS)) out.bind_threads = in->bind_threads != 0;
  if (has(DIST_STRATEGY_OPT_CROSS_DEVICE_OPS)) {
    out.cross_device_ops = cross_device_ops_from_int(in->cross_device_ops);
    out.cross_device_ops_set = true;
  }
  if (has(DIST_STRATEGY_OPT_REDUCE_TO_DEVICE)) out.reduce_to_device = require(in->reduce_to_device, "options: reduce_to_device");
  if (has(DIST_STRATEGY_OPT_NUM_PACKS)) out.num_packs = in->num_packs;
  if (has(DIST_STRATEGY_OPT_TIMEOUT_SECONDS)) {
    if (!(in->timeout_seconds > 0.0) || !std::isfinite(in->timeout_seconds) || in->timeout_seconds > 1e9) {
      fail_invalid("options: timeout_seconds " + std::to_string(in->timeout_seconds) +
                   " must be positive and finite");
    }
    out.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(in->timeout_seconds * 1000.0)));
  }
  return out;
}

bool has_option(const dist_strategy_options_t* in, uint64_t bit) { return in != nullptr && (in->field_mask & bit) != 0; }

// The options that only PARAMETER_SERVER takes are refused elsewhere, so that
// a misplaced cluster, token or placement is not silently ignored.
void check_server_options(const dist_strategy_options_t* in, StrategyKind kind) {
  if (kind == StrategyKind::kParameterServer) return;
  for (const auto& [bit, field] : {std::pair{DIST_STRATEGY_OPT_CLUSTER, "cluster"}, {DIST_STRATEGY_OPT_TOKEN, "token"},
                                   {DIST_STRATEGY_OPT_TOKEN_FILE, "token_file"},
                                   {DIST_STRATEGY_OPT_PLACEMENT, "placement"}}) {
    if (has_option(in, bit)) {
      fail_invalid(std::string("options: ") + field + " is for PARAMETER_SERVER, not " + name(kind));
    }
  }
}

PlacementPolicy placement_from_int(int32_t value) {
  switch (value) {
    case DIST_PLACEMENT_ROUND_ROBIN: return PlacementPolicy::kRoundRobin;
    case DIST_PLACEMENT_GREEDY_BYTES: return PlacementPolicy::kGreedyBytes;
  }
  fail_invalid("options: placement " + std::to_string(value) + " is not one of ROUND_ROBIN, GREEDY_BYTES");
}

// The cluster of a PARAMETER_SERVER strategy: options.cluster without a
// context, else the context's.
const dist_cluster_t* server_cluster(const dist_context_t* context, const dist_strategy_options_t* in) {
  if (has_option(in, DIST_STRATEGY_OPT_CLUSTER)) {
    if (context != nullptr) fail_invalid("options: cluster must be unset with a context (the context's cluster is used)");
    return require(in->cluster, "options: cluster");
  }
  if (context != nullptr) return &context->cluster;
  fail_invalid("ParameterServerStrategy needs a cluster with a 'ps' job: give a context or options.cluster");
}

// The connection to the "ps" job of the strategy's cluster.
std::shared_ptr<ServerConnection> connect_parameter_servers(const dist_context_t* context,
                                                            const dist_strategy_options_t* in,
                                                            const StrategyConfig& config) {
  const dist_cluster_t* cluster = server_cluster(context, in);
  ServerConnectionOptions options;
  const char* token = has_option(in, DIST_STRATEGY_OPT_TOKEN) ? require(in->token, "options: token") : nullptr;
  const char* token_file =
      has_option(in, DIST_STRATEGY_OPT_TOKEN_FILE) ? require(in->token_file, "options: token_file") : nullptr;
  options.token = required_cluster_token(token, token_file, "ParameterServerStrategy");
  options.call_timeout = config.timeout;
  if (context != nullptr) {
    options.world_position = WorkerPosition{context->world.communicator->rank(), context->world.communicator->size()};
  }
  options.timeline = context != nullptr ? context->world.communicator->timeline() : process_timeline();
  if (has_option(in, DIST_STRATEGY_OPT_PLACEMENT)) options.placement = placement_from_int(in->placement);
  return connect_to_servers(cluster->resolved, options);
}

WorkerIdentity identity_of(const dist_cluster_t* cluster) {
  WorkerIdentity identity;
  if (cluster == nullptr) return identity;
  const ResolvedCluster& resolved = cluster->resolved;
  if (resolved.task_type) identity.task_type = *resolved.task_type;
  if (resolved.task_id) identity.task_id = *resolved.task_id;
  return identity;
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_strategy_create(dist_context_t* context, const dist_strategy_options_t* options,
                                               dist_strategy_t** strategy) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    const dist::StrategyConfig config = dist::read_strategy_options(options);
    dist::check_server_options(options, config.kind);
    auto created = std::make_unique<dist_strategy>();
    if (config.kind == dist::StrategyKind::kParameterServer) {
      created->servers = dist::connect_parameter_servers(context, options, config);
    }
    dist::Communicator* world = context != nullptr ? context->world.communicator.get() : nullptr;
    created->cluster = context != nullptr ? &context->cluster : nullptr;
    if (created->servers) created->cluster = dist::server_cluster(context, options);
    dist::WorkerIdentity identity = dist::identity_of(created->cluster);
    if (created->servers) identity.position = created->servers->position();
    created->strategy = std::make_shared<dist::Strategy>(world, config, identity);
    *strategy = created.release();
  });
}

DIST_EXPORT void dist_strategy_destroy(dist_strategy_t* strategy) { delete strategy; }

DIST_EXPORT dist_status_t dist_strategy_kind(const dist_strategy_t* strategy, dist_strategy_kind_t* kind) {
  return call_guarded(__func__, [&] {
    *require(kind, "kind") = static_cast<dist_strategy_kind_t>(require(strategy, "strategy")->strategy->kind());
  });
}

DIST_EXPORT dist_status_t dist_strategy_num_replicas_in_sync(const dist_strategy_t* strategy, int32_t* count) {
  return call_guarded(__func__, [&] {
    *require(count, "count") = require(strategy, "strategy")->strategy->num_replicas_in_sync();
  });
}

DIST_EXPORT dist_status_t dist_strategy_num_local_replicas(const dist_strategy_t* strategy, int32_t* count) {
  return call_guarded(__func__, [&] {
    *require(count, "count") = require(strategy, "strategy")->strategy->num_local_replicas();
  });
}

DIST_EXPORT dist_status_t dist_strategy_device(const dist_strategy_t* strategy, int32_t i, const char** device) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    require(device, "device");
    strategy->strategy->check_local_index(i, "device index");
    *device = strategy->strategy->device(i).c_str();
  });
}

DIST_EXPORT dist_status_t dist_strategy_cluster(const dist_strategy_t* strategy, const dist_cluster_t** cluster) {
  return call_guarded(__func__, [&] { *require(cluster, "cluster") = require(strategy, "strategy")->cluster; });
}

DIST_EXPORT dist_status_t dist_strategy_cross_device_ops(const dist_strategy_t* strategy,
                                                         dist_cross_device_ops_t* ops) {
  return call_guarded(__func__, [&] {
    require(ops, "ops");
    *ops = static_cast<dist_cross_device_ops_t>(require(strategy, "strategy")->strategy->cross_device_ops());
  });
}

DIST_EXPORT dist_status_t dist_strategy_task_type(const dist_strategy_t* strategy, const char** task_type) {
  return call_guarded(__func__, [&] {
    require(task_type, "task_type");
    const std::string& type = require(strategy, "strategy")->strategy->identity().task_type;
    *task_type = type.empty() ? nullptr : type.c_str();
  });
}

DIST_EXPORT dist_status_t dist_strategy_task_id(const dist_strategy_t* strategy, int32_t* task_id) {
  return call_guarded(__func__, [&] {
    *require(task_id, "task_id") = require(strategy, "strategy")->strategy->identity().task_id;
  });
}

DIST_EXPORT dist_status_t dist_strategy_worker_index(const dist_strategy_t* strategy, int32_t* index,
                                                     int32_t* num_workers) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    require(index, "index");
    require(num_workers, "num_workers");
    *index = strategy->strategy->worker_index();
    *num_workers = strategy->strategy->num_workers();
  });
}

DIST_EXPORT dist_status_t dist_strategy_reduce(dist_strategy_t* strategy, dist_op_t op, const dist_buffer_t* values,
                                               int32_t num_values, int32_t axis, const dist_buffer_t* result) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    strategy->strategy->require_cross_replica("dist_strategy_reduce");
    require(values, "values");
    if (num_values < 0) dist::fail_invalid("num_values " + std::to_string(num_values) + " is negative");
    std::vector<dist::TensorRef> per_replica;
    for (int32_t i = 0; i < num_values; ++i) {
      const std::string field = "values[" + std::to_string(i) + "]";
      per_replica.push_back(dist::host_or_device_tensor_of(&values[i], field.c_str()));
    }
    dist::reduce_per_replica(*strategy->strategy, dist::reduce_op_from_int(op), per_replica, axis,
                             dist::host_or_device_tensor_of(result, "result"));
  });
}

}  // extern "C"
