// dist_variable_*: distributed variables.

#include "c_api/guard.h"
#include "c_api/optimizer_options.h"
#include "c_api/strategy_handles.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

// One of the partitioners of the header: num_shards, max_shard_bytes or
// min_shard_bytes (with max_shards for the last two).
void read_partitioner_options(const dist_variable_options_t* in, PartitionerOptions& out) {
  auto has = [in](uint64_t bit) { return (in->field_mask & bit) != 0; };
  const int given = has(DIST_VARIABLE_OPT_NUM_SHARDS) + has(DIST_VARIABLE_OPT_MAX_SHARD_BYTES) +
                    has(DIST_VARIABLE_OPT_MIN_SHARD_BYTES);
  if (given > 1) fail_invalid("options: give one partitioner: num_shards, max_shard_bytes or min_shard_bytes");
  if (has(DIST_VARIABLE_OPT_NUM_SHARDS)) {
    if (in->num_shards < 1) fail_invalid("options: num_shards " + std::to_string(in->num_shards) + " must be at least 1");
    out.kind = PartitionerKind::kFixedShards;
    out.num_shards = in->num_shards;
  }
  if (has(DIST_VARIABLE_OPT_MAX_SHARD_BYTES)) {
    if (in->max_shard_bytes == 0) fail_invalid("options: max_shard_bytes must be positive");
    out.kind = PartitionerKind::kMaxShardBytes;
    out.max_shard_bytes = in->max_shard_bytes;
  }
  if (has(DIST_VARIABLE_OPT_MIN_SHARD_BYTES)) {
    if (in->min_shard_bytes == 0) fail_invalid("options: min_shard_bytes must be positive");
    out.kind = PartitionerKind::kMinShardBytes;
    out.min_shard_bytes = in->min_shard_bytes;
  }
  if (has(DIST_VARIABLE_OPT_MAX_SHARDS)) {
    if (!has(DIST_VARIABLE_OPT_MAX_SHARD_BYTES) && !has(DIST_VARIABLE_OPT_MIN_SHARD_BYTES)) {
      fail_invalid("options: max_shards bounds max_shard_bytes or min_shard_bytes; neither is set");
    }
    if (in->max_shards < 1) fail_invalid("options: max_shards " + std::to_string(in->max_shards) + " must be at least 1");
    out.max_shards = in->max_shards;
  }
}

void read_sync_options(const dist_variable_options_t* in, VariableSpec& spec) {
  auto has = [in](uint64_t bit) { return (in->field_mask & bit) != 0; };
  spec.sync_gradients = has(DIST_VARIABLE_OPT_SYNC_GRADIENTS) && in->sync_gradients != 0;
  if (!spec.sync_gradients &&
      (has(DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE) || has(DIST_VARIABLE_OPT_MAX_STALENESS))) {
    fail_invalid("options: replicas_to_aggregate and max_staleness need sync_gradients set nonzero");
  }
  if (has(DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE)) spec.replicas_to_aggregate = in->replicas_to_aggregate;
  if (has(DIST_VARIABLE_OPT_MAX_STALENESS)) {
    if (in->max_staleness < 0) fail_invalid("options: max_staleness " + std::to_string(in->max_staleness) + " is negative");
    spec.max_staleness = in->max_staleness;
  }
}

VariableSpec read_variable_options(const dist_variable_options_t* in) {
  VariableSpec spec;
  if (in == nullptr) return spec;
  auto has = [in](uint64_t bit) { return (in->field_mask & bit) != 0; };
  if (has(DIST_VARIABLE_OPT_NAME)) spec.name = require(in->name, "options: name");
  if (has(DIST_VARIABLE_OPT_DTYPE)) spec.dtype = dtype_from_int(in->dtype);
  if (has(DIST_VARIABLE_OPT_SHAPE)) {
    if (in->rank < 0 || in->rank > DIST_MAX_RANK) {
      fail_invalid("options: rank " + std::to_string(in->rank) + " is out of range 0.." + std::to_string(DIST_MAX_RANK));
    }
    if (in->rank > 0) require(in->shape, "options: shape");
    spec.shape.assign(in->shape, in->shape + in->rank);
  }
  if (has(DIST_VARIABLE_OPT_INITIAL_VALUE)) spec.initial_value = require(in->initial_value, "options: initial_value");
  if (has(DIST_VARIABLE_OPT_SYNCHRONIZATION)) spec.synchronization = synchronization_from_int(in->synchronization);
  if (has(DIST_VARIABLE_OPT_AGGREGATION)) spec.aggregation = aggregation_from_int(in->aggregation);
  if (has(DIST_VARIABLE_OPT_OPTIMIZER)) {
    spec.server_optimizer = read_optimizer_options(require(in->optimizer, "options: optimizer"));
  }
  read_partitioner_options(in, spec.partitioner);
  if (has(DIST_VARIABLE_OPT_COLOCATE_WITH)) {
    spec.colocate_with = require(in->colocate_with, "options: colocate_with")->variable.get();
  }
  read_sync_options(in, spec);
  return spec;
}

ReplicaContext* replica_of(dist_replica_context_t* replica) { return replica != nullptr ? replica->replica : nullptr; }

void update(dist_variable_t* variable, dist_replica_context_t* replica, const dist_buffer_t* value, UpdateKind kind) {
  require(variable, "variable");
  variable->variable->update(replica_of(replica), kind, host_or_device_tensor_of(value, "value"));
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_variable_create(dist_strategy_t* strategy, const dist_variable_options_t* options,
                                               dist_variable_t** variable) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    require(variable, "variable");
    strategy->strategy->require_cross_replica("dist_variable_create");
    const dist::VariableSpec spec = dist::read_variable_options(options);
    auto created = std::make_unique<dist_variable>();
    created->variable = std::make_unique<dist::Variable>(strategy->strategy, strategy->servers, spec);
    *variable = created.release();
  });
}

DIST_EXPORT void dist_variable_destroy(dist_variable_t* variable) { delete variable; }

DIST_EXPORT dist_status_t dist_variable_name(const dist_variable_t* variable, const char** name) {
  return call_guarded(__func__, [&] { *require(name, "name") = require(variable, "variable")->variable->name().c_str(); });
}

DIST_EXPORT dist_status_t dist_variable_dtype(const dist_variable_t* variable, dist_dtype_t* dtype) {
  return call_guarded(__func__, [&] {
    *require(dtype, "dtype") = static_cast<dist_dtype_t>(require(variable, "variable")->variable->dtype());
  });
}

DIST_EXPORT dist_status_t dist_variable_shape(const dist_variable_t* variable, const int64_t** shape, int32_t* rank) {
  return call_guarded(__func__, [&] {
    require(variable, "variable");
    require(shape, "shape");
    require(rank, "rank");
    const std::vector<int64_t>& dims = variable->variable->shape();
    *shape = dims.data();
    *rank = static_cast<int32_t>(dims.size());
  });
}

DIST_EXPORT dist_status_t dist_variable_count(const dist_variable_t* variable, uint64_t* count) {
  return call_guarded(__func__, [&] { *require(count, "count") = require(variable, "variable")->variable->count(); });
}

DIST_EXPORT dist_status_t dist_variable_synchronization(const dist_variable_t* variable,
                                                        dist_synchronization_t* synchronization) {
  return call_guarded(__func__, [&] {
    *require(synchronization, "synchronization") =
        static_cast<dist_synchronization_t>(require(variable, "variable")->variable->synchronization());
  });
}

DIST_EXPORT dist_status_t dist_variable_aggregation(const dist_variable_t* variable, dist_aggregation_t* aggregation) {
  return call_guarded(__func__, [&] {
    *require(aggregation, "aggregation") =
        static_cast<dist_aggregation_t>(require(variable, "variable")->variable->aggregation());
  });
}

DIST_EXPORT dist_status_t dist_variable_read(dist_variable_t* variable, dist_replica_context_t* replica,
                                             const dist_buffer_t* out) {
  return call_guarded(__func__, [&] {
    require(variable, "variable");
    variable->variable->read(dist::replica_of(replica), dist::host_or_device_tensor_of(out, "out"));
  });
}

DIST_EXPORT dist_status_t dist_variable_assign(dist_variable_t* variable, dist_replica_context_t* replica,
                                               const dist_buffer_t* value) {
  return call_guarded(__func__, [&] { dist::update(variable, replica, value, dist::UpdateKind::kAssign); });
}

DIST_EXPORT dist_status_t dist_variable_assign_add(dist_variable_t* variable, dist_replica_context_t* replica,
                                                   const dist_buffer_t* value) {
  return call_guarded(__func__, [&] { dist::update(variable, replica, value, dist::UpdateKind::kAdd); });
}

DIST_EXPORT dist_status_t dist_variable_assign_sub(dist_variable_t* variable, dist_replica_context_t* replica,
                                                   const dist_buffer_t* value) {
  return call_guarded(__func__, [&] { dist::update(variable, replica, value, dist::UpdateKind::kSub); });
}

DIST_EXPORT dist_status_t dist_variable_apply_gradient(dist_variable_t* variable, dist_replica_context_t* replica,
                                                       const dist_buffer_t* gradient) {
  return call_guarded(__func__, [&] {
    require(variable, "variable")->variable->apply_gradient(dist::replica_of(replica), dist::tensor_of(gradient, "gradient"));
  });
}

DIST_EXPORT dist_status_t dist_variable_read_rows(dist_variable_t* variable, dist_replica_context_t* replica,
                                                  const int64_t* rows, uint64_t count, const dist_buffer_t* out) {
  return call_guarded(__func__, [&] {
    require(variable, "variable")->variable->read_rows(dist::replica_of(replica), rows, count, dist::tensor_of(out, "out"));
  });
}

DIST_EXPORT dist_status_t dist_variable_add_rows(dist_variable_t* variable, dist_replica_context_t* replica,
                                                 const int64_t* rows, uint64_t count, const dist_buffer_t* values) {
  return call_guarded(__func__, [&] {
    require(variable, "variable")->variable->add_rows(dist::replica_of(replica), rows, count,
                                                      dist::tensor_of(values, "values"));
  });
}

DIST_EXPORT dist_status_t dist_variable_apply_rows(dist_variable_t* variable, dist_replica_context_t* replica,
                                                   const int64_t* rows, uint64_t count,
                                                   const dist_buffer_t* gradients) {
  return call_guarded(__func__, [&] {
    require(variable, "variable")->variable->apply_rows(dist::replica_of(replica), rows, count,
                                                        dist::tensor_of(gradients, "gradients"));
  });
}

DIST_EXPORT dist_status_t dist_variable_num_shards(const dist_variable_t* variable, int32_t* count) {
  return call_guarded(__func__, [&] {
    require(count, "count");
    const dist::Variable& v = *require(variable, "variable")->variable;
    *count = v.on_servers() ? static_cast<int32_t>(v.placement().shards.size()) : 0;
  });
}

DIST_EXPORT dist_status_t dist_variable_shard(const dist_variable_t* variable, int32_t i, int32_t* server,
                                              uint64_t* first_row, uint64_t* rows) {
  return call_guarded(__func__, [&] {
    require(server, "server");
    require(first_row, "first_row");
    require(rows, "rows");
    const dist::Variable& v = *require(variable, "variable")->variable;
    const auto& shards = v.placement().shards;
    if (i < 0 || static_cast<size_t>(i) >= shards.size()) {
      dist::fail_invalid("shard " + std::to_string(i) + " is out of range for the " + std::to_string(shards.size()) +
                         " shards of variable '" + v.name() + "'");
    }
    const dist::ShardPlacement& shard = shards[static_cast<size_t>(i)];
    *server = shard.server;
    *first_row = shard.row_offset;
    *rows = shard.rows;
  });
}

DIST_EXPORT dist_status_t dist_variable_num_copies(const dist_variable_t* variable, int32_t* count) {
  return call_guarded(__func__, [&] {
    *require(count, "count") = require(variable, "variable")->variable->num_copies();
  });
}

DIST_EXPORT dist_status_t dist_variable_read_copy(const dist_variable_t* variable, int32_t i,
                                                  const dist_buffer_t* out) {
  return call_guarded(__func__, [&] {
    require(variable, "variable");
    variable->variable->read_copy(i, dist::host_or_device_tensor_of(out, "out"));
  });
}

}  // extern "C"
