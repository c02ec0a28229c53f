// dist_input_context_* and dist_strategy_split_batch: feeding the replicas.
#include <algorithm>

#include "c_api/guard.h"
#include "c_api/strategy_handles.h"
#include "strategy/batch_split.h"

using dist::call_guarded;
using dist::require;

extern "C" {

DIST_EXPORT dist_status_t dist_input_context_create(int32_t num_input_pipelines, int32_t input_pipeline_id,
                                                    int32_t num_replicas_in_sync, dist_input_context_t** input) {
  return call_guarded(__func__, [&] {
    require(input, "input");
    *input = new dist_input_context{dist::InputContext(num_input_pipelines, input_pipeline_id, num_replicas_in_sync)};
  });
}

DIST_EXPORT dist_status_t dist_strategy_input_context(const dist_strategy_t* strategy, dist_input_context_t** input) {
  return call_guarded(__func__, [&] {
    require(input, "input");
    const dist::Strategy& s = *require(strategy, "strategy")->strategy;
    *input = new dist_input_context{dist::InputContext(s.num_workers(), s.worker_index(), s.num_replicas_in_sync())};
  });
}

DIST_EXPORT void dist_input_context_destroy(dist_input_context_t* input) { delete input; }

DIST_EXPORT dist_status_t dist_input_context_num_input_pipelines(const dist_input_context_t* input, int32_t* count) {
  return call_guarded(__func__, [&] {
    *require(count, "count") = require(input, "input")->input.num_input_pipelines();
  });
}

DIST_EXPORT dist_status_t dist_input_context_input_pipeline_id(const dist_input_context_t* input, int32_t* id) {
  return call_guarded(__func__, [&] { *require(id, "id") = require(input, "input")->input.input_pipeline_id(); });
}

DIST_EXPORT dist_status_t dist_input_context_num_replicas_in_sync(const dist_input_context_t* input, int32_t* count) {
  return call_guarded(__func__, [&] {
    *require(count, "count") = require(input, "input")->input.num_replicas_in_sync();
  });
}

DIST_EXPORT dist_status_t dist_input_context_per_replica_batch_size(const dist_input_context_t* input,
                                                                    int64_t global_batch_size, int64_t* per_replica) {
  return call_guarded(__func__, [&] {
    require(per_replica, "per_replica");
    *per_replica = require(input, "input")->input.per_replica_batch_size(global_batch_size);
  });
}

DIST_EXPORT dist_status_t dist_input_context_shard_files(const dist_input_context_t* input, int64_t num_files,
                                                         int64_t* indices, int64_t capacity, int64_t* count) {
  return call_guarded(__func__, [&] {
    require(input, "input");
    require(count, "count");
    if (capacity < 0) dist::fail_invalid("capacity " + std::to_string(capacity) + " is negative");
    const std::vector<int64_t> mine = input->input.shard_files(num_files);
    if (static_cast<int64_t>(mine.size()) > capacity) {
      dist::fail_invalid("indices has room for " + std::to_string(capacity) + " files but this pipeline gets " +
                         std::to_string(mine.size()));
    }
    if (!mine.empty()) std::copy(mine.begin(), mine.end(), require(indices, "indices"));
    *count = static_cast<int64_t>(mine.size());
  });
}

DIST_EXPORT dist_status_t dist_input_context_shard_range(const dist_input_context_t* input, int64_t total,
                                                         int64_t* begin, int64_t* count) {
  return call_guarded(__func__, [&] {
    require(input, "input");
    require(begin, "begin");
    require(count, "count");
    const dist::InputContext::Range range = input->input.shard_range(total);
    *begin = range.begin;
    *count = range.count;
  });
}

DIST_EXPORT dist_status_t dist_strategy_split_batch(const dist_strategy_t* strategy, const dist_buffer_t* batch,
                                                    uint64_t rows, dist_buffer_t* per_replica,
                                                    int32_t num_per_replica) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    require(per_replica, "per_replica");
    const int replicas = strategy->strategy->num_local_replicas();
    if (num_per_replica != replicas) {
      dist::fail_invalid("per_replica has " + std::to_string(num_per_replica) + " entries for " +
                         std::to_string(replicas) + " local replicas");
    }
    const std::vector<dist::TensorRef> parts = dist::split_batch(dist::tensor_of(batch, "batch"), rows, replicas);
    for (int r = 0; r < replicas; ++r) {
      const dist::TensorRef& part = parts[static_cast<size_t>(r)];
      per_replica[r] = dist_buffer_t{part.data, part.count, static_cast<dist_dtype_t>(part.dtype), DIST_MEMORY_HOST,
                                     nullptr};
    }
  });
}

}  // extern "C"
