// dist_strategy_run and what a replica function may call: its ids, the
// replica all-reduce, merge calls and its result.
#include <cstring>

#include "c_api/guard.h"
#include "c_api/strategy_handles.h"
#include "strategy/run.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

// A status a user function returned, as the exception run_replicas collects;
// the message is the one libdistribute left on that thread, if any.
[[noreturn]] void throw_returned(dist_status_t status, const char* what) {
  const std::string known = dist_status_string(status);
  const std::string last = dist_last_error();
  if (known == "DIST_ERR_UNKNOWN" || status > 0) {
    fail_invalid(std::string(what) + " returned " + std::to_string(status) + ", which is not a dist_status_t");
  }
  throw Error(static_cast<Status>(status),
              std::string(what) + " returned " + known + (last.empty() ? "" : ": " + last));
}

struct MergeArguments {
  dist_merge_fn_t fn = nullptr;
  void* value = nullptr;
  void* user_data = nullptr;
};

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_strategy_run(dist_strategy_t* strategy, dist_replica_fn_t fn, void* user_data) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    require(reinterpret_cast<void*>(fn), "fn");
    const size_t replicas = static_cast<size_t>(strategy->strategy->num_local_replicas());
    if (strategy->strategy->running()) dist::fail_invalid("dist_strategy_run is already running on this strategy");
    strategy->result_storage.assign(replicas, {});
    strategy->results.assign(replicas, dist_buffer_t{nullptr, 0, DIST_DTYPE_U8, DIST_MEMORY_HOST, nullptr});
    dist::run_replicas(*strategy->strategy, [&](dist::ReplicaContext& replica) {
      dist_replica_context handle{&replica, strategy};
      const dist_status_t status = fn(&handle, user_data);
      if (status != DIST_OK) dist::throw_returned(status, "the replica function");
    });
  });
}

DIST_EXPORT dist_status_t dist_replica_id(const dist_replica_context_t* replica, int32_t* id) {
  return call_guarded(__func__, [&] { *require(id, "id") = require(replica, "replica")->replica->replica_id(); });
}

DIST_EXPORT dist_status_t dist_replica_num_replicas_in_sync(const dist_replica_context_t* replica, int32_t* count) {
  return call_guarded(__func__, [&] {
    *require(count, "count") = require(replica, "replica")->replica->num_replicas_in_sync();
  });
}

DIST_EXPORT dist_status_t dist_replica_local_index(const dist_replica_context_t* replica, int32_t* index) {
  return call_guarded(__func__, [&] {
    *require(index, "index") = require(replica, "replica")->replica->local_index();
  });
}

DIST_EXPORT dist_status_t dist_replica_strategy(const dist_replica_context_t* replica, dist_strategy_t** strategy) {
  return call_guarded(__func__, [&] { *require(strategy, "strategy") = require(replica, "replica")->strategy; });
}

DIST_EXPORT dist_status_t dist_replica_device(const dist_replica_context_t* replica, int32_t* device) {
  return call_guarded(__func__, [&] {
    require(device, "device");
    const dist::ReplicaContext& context = *require(replica, "replica")->replica;
    *device = context.strategy().replica_device(context.local_index());
  });
}

DIST_EXPORT dist_status_t dist_replica_stream(const dist_replica_context_t* replica, void** stream) {
  return call_guarded(__func__, [&] {
    require(stream, "stream");
    const dist::ReplicaContext& context = *require(replica, "replica")->replica;
    *stream = context.strategy().replica_stream(context.local_index());
  });
}

DIST_EXPORT dist_status_t dist_replica_all_reduce(dist_replica_context_t* replica, dist_op_t op,
                                                  const dist_buffer_t* buffer) {
  return call_guarded(__func__, [&] {
    require(replica, "replica");
    const dist::ReduceOp reduce_op = dist::reduce_op_from_int(op);
    replica->replica->all_reduce(reduce_op, dist::host_or_device_tensor_of(buffer, "buffer"));
  });
}

DIST_EXPORT dist_status_t dist_replica_merge_call(dist_replica_context_t* replica, dist_merge_fn_t fn, void* value,
                                                  void* user_data) {
  return call_guarded(__func__, [&] {
    require(replica, "replica");
    require(reinterpret_cast<void*>(fn), "fn");
    dist::MergeArguments mine{fn, value, user_data};
    dist_strategy_t* strategy = replica->strategy;
    replica->replica->merge_call(&mine, [strategy](const std::vector<void*>& payloads) {
      std::vector<void*> values;
      for (void* p : payloads) values.push_back(static_cast<dist::MergeArguments*>(p)->value);
      const auto* first = static_cast<dist::MergeArguments*>(payloads[0]);
      const dist_status_t status =
          first->fn(strategy, values.data(), static_cast<int32_t>(values.size()), first->user_data);
      if (status != DIST_OK) dist::throw_returned(status, "the merge function");
    });
  });
}

DIST_EXPORT dist_status_t dist_replica_set_result(dist_replica_context_t* replica, const dist_buffer_t* value) {
  return call_guarded(__func__, [&] {
    require(replica, "replica");
    const dist::TensorRef tensor = dist::tensor_of(value, "value");
    const size_t index = static_cast<size_t>(replica->replica->local_index());
    std::vector<unsigned char>& storage = replica->strategy->result_storage[index];
    storage.assign(tensor.bytes(), 0);
    if (tensor.bytes() > 0) std::memcpy(storage.data(), tensor.data, tensor.bytes());
    replica->strategy->results[index] = dist_buffer_t{storage.empty() ? nullptr : storage.data(), tensor.count,
                                                      static_cast<dist_dtype_t>(tensor.dtype), DIST_MEMORY_HOST,
                                                      nullptr};
  });
}

DIST_EXPORT dist_status_t dist_strategy_local_results(const dist_strategy_t* strategy, const dist_buffer_t** results,
                                                      int32_t* count) {
  return call_guarded(__func__, [&] {
    require(strategy, "strategy");
    require(results, "results");
    require(count, "count");
    strategy->strategy->require_cross_replica("dist_strategy_local_results");
    if (strategy->results.empty()) dist::fail_invalid("no dist_strategy_run has set results yet");
    *results = strategy->results.data();
    *count = static_cast<int32_t>(strategy->results.size());
  });
}

}  // extern "C"
