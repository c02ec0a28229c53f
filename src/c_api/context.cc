// dist_context_* and dist_comm_*: joining the cluster and forming groups.
#include "c_api/guard.h"
#include "c_api/strings.h"
#include "c_api/handles.h"
#include "c_api/cluster_handle.h"
#include "collectives/algorithm_table.h"
#include "transport/join.h"
#include "transport/oob_bootstrap.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

ContextOptions read_context_options(const dist_context_options_t* in) {
  ContextOptions out;
  if (in == nullptr) return out;
  auto has = [in](uint64_t bit) { return (in->field_mask & bit) != 0; };
  if (has(DIST_CONTEXT_OPT_TOKEN)) out.token.token = std::string(require(in->token, "options: token"));
  if (has(DIST_CONTEXT_OPT_TOKEN_FILE)) out.token.token_file = std::string(require(in->token_file, "options: token_file"));
  auto milliseconds = [](int64_t value, const char* field) {
    if (value <= 0) fail_invalid(std::string("options: ") + field + " " + std::to_string(value) + " must be positive");
    return std::chrono::milliseconds(value);
  };
  if (has(DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS)) out.connect_timeout = milliseconds(in->connect_timeout_ms, "connect_timeout_ms");
  if (has(DIST_CONTEXT_OPT_TIMEOUT_MS)) out.timeout = milliseconds(in->timeout_ms, "timeout_ms");
  if (has(DIST_CONTEXT_OPT_TIMELINE)) {
    out.timeline_prefix = std::string(require(in->timeline, "options: timeline"));
    if (out.timeline_prefix.empty()) fail_invalid("options: timeline is empty; it is the prefix of the files to write");
  }
  return out;
}

std::vector<int> all_ranks(int size) {
  std::vector<int> ranks(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<size_t>(r)] = r;
  return ranks;
}

dist_context* wrap_context(JoinedContext joined) {
  auto created = std::make_unique<dist_context>();
  created->context = std::move(joined.context);
  created->cluster = make_cluster_handle(std::move(joined.cluster));
  created->world.is_world = true;
  created->world.communicator =
      std::make_unique<Communicator>(*created->context, 0, all_ranks(created->context->size()));
  return created.release();
}

// DIST_COLLECTIVE_* and CollectiveKind agree up to BARRIER; ALL_TO_ALL_V is
// the kind after the internal exchanges.
CollectiveKind kind_of_collective(dist_collective_t collective) {
  if (collective == DIST_COLLECTIVE_ALL_TO_ALL_V) return CollectiveKind::kAllToAllV;
  if (collective < DIST_COLLECTIVE_ALL_REDUCE || collective > DIST_COLLECTIVE_BARRIER) {
    fail_invalid("collective " + std::to_string(collective) + " is not a DIST_COLLECTIVE_* value");
  }
  return static_cast<CollectiveKind>(collective);
}

dist_collective_t collective_of_kind(CollectiveKind kind) {
  if (kind == CollectiveKind::kAllToAllV) return DIST_COLLECTIVE_ALL_TO_ALL_V;
  return static_cast<dist_collective_t>(kind);
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_context_create(const dist_cluster_t* cluster, const dist_context_options_t* options,
                                              dist_context_t** context) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    require(context, "context");
    *context = dist::wrap_context(dist::join_cluster(cluster->resolved, dist::read_context_options(options)));
  });
}

DIST_EXPORT dist_status_t dist_context_create_oob(const dist_oob_t* oob, const dist_context_options_t* options,
                                                  dist_context_t** context) {
  return call_guarded(__func__, [&] {
    require(oob, "oob");
    require(context, "context");
    require(oob->allgather, "oob.allgather");
    require(oob->test, "oob.test");
    dist::OobExchange exchange;
    exchange.rank = oob->rank;
    exchange.size = oob->size;
    exchange.allgather = [oob](const void* send, void* recv, size_t bytes, void** request) {
      return oob->allgather(oob->user_data, send, recv, bytes, request);
    };
    exchange.test = [oob](void* request) { return oob->test(oob->user_data, request); };
    if (oob->free != nullptr) exchange.free = [oob](void* request) { oob->free(oob->user_data, request); };
    *context = dist::wrap_context(dist::join_out_of_band(exchange, dist::read_context_options(options)));
  });
}

DIST_EXPORT void dist_context_destroy(dist_context_t* context) {
  if (context == nullptr) return;
  context->world.communicator.reset();
  delete context;
}

DIST_EXPORT dist_status_t dist_context_rank(const dist_context_t* context, int32_t* rank) {
  return call_guarded(__func__, [&] { *require(rank, "rank") = require(context, "context")->context->rank(); });
}

DIST_EXPORT dist_status_t dist_context_size(const dist_context_t* context, int32_t* size) {
  return call_guarded(__func__, [&] { *require(size, "size") = require(context, "context")->context->size(); });
}

DIST_EXPORT dist_status_t dist_context_abort(dist_context_t* context, const char* reason) {
  return call_guarded(__func__, [&] {
    require(context, "context")->context->abort(reason != nullptr ? reason : "no reason given");
  });
}

DIST_EXPORT dist_status_t dist_comm_world(dist_context_t* context, dist_comm_t** comm) {
  return call_guarded(__func__, [&] { *require(comm, "comm") = &require(context, "context")->world; });
}

DIST_EXPORT dist_status_t dist_comm_split(dist_comm_t* comm, int32_t color, int32_t key, dist_comm_t** new_comm) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    require(new_comm, "new_comm");
    auto split = comm->communicator->split(color, key);
    if (!split) {
      *new_comm = nullptr;
      return;
    }
    auto handle = std::make_unique<dist_comm>();
    handle->communicator = std::move(split);
    *new_comm = handle.release();
  });
}

DIST_EXPORT void dist_comm_destroy(dist_comm_t* comm) {
  if (comm == nullptr || comm->is_world) return;
  delete comm;
}

DIST_EXPORT dist_status_t dist_comm_rank(const dist_comm_t* comm, int32_t* rank) {
  return call_guarded(__func__, [&] { *require(rank, "rank") = require(comm, "comm")->communicator->rank(); });
}

DIST_EXPORT dist_status_t dist_comm_size(const dist_comm_t* comm, int32_t* size) {
  return call_guarded(__func__, [&] { *require(size, "size") = require(comm, "comm")->communicator->size(); });
}

DIST_EXPORT dist_status_t dist_comm_path(const dist_comm_t* comm, dist_comm_path_t* path) {
  return call_guarded(__func__, [&] {
    require(path, "path");
    *path = static_cast<dist_comm_path_t>(require(comm, "comm")->communicator->path());
  });
}

DIST_EXPORT dist_status_t dist_comm_device_path(const dist_comm_t* comm, dist_comm_path_t* path) {
  return call_guarded(__func__, [&] {
    require(path, "path");
    require(comm, "comm");
#ifdef DIST_HAVE_CUDA
    dist::Path chosen = dist::Path::kSelf;
    if (comm->communicator->device_path(&chosen)) {
      *path = static_cast<dist_comm_path_t>(chosen);
      return;
    }
    dist::fail(dist::Status::kUnavailable, "no call on CUDA memory has been made on this communicator yet");
#else
    dist::fail(dist::Status::kUnavailable, "this libdistribute was built without CUDA");
#endif
  });
}

DIST_EXPORT dist_status_t dist_comm_local_rank(const dist_comm_t* comm, int32_t* local_rank) {
  return call_guarded(__func__, [&] {
    *require(local_rank, "local_rank") = require(comm, "comm")->communicator->hosts().local_rank;
  });
}

DIST_EXPORT dist_status_t dist_comm_local_size(const dist_comm_t* comm, int32_t* local_size) {
  return call_guarded(__func__, [&] {
    *require(local_size, "local_size") = require(comm, "comm")->communicator->hosts().local_size;
  });
}

DIST_EXPORT dist_status_t dist_comm_num_hosts(const dist_comm_t* comm, int32_t* num_hosts) {
  return call_guarded(__func__, [&] {
    *require(num_hosts, "num_hosts") = require(comm, "comm")->communicator->hosts().num_hosts();
  });
}

DIST_EXPORT dist_status_t dist_comm_split_host(dist_comm_t* comm, dist_comm_t** host_comm) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    require(host_comm, "host_comm");
    auto handle = std::make_unique<dist_comm>();
    handle->communicator = comm->communicator->split_host();
    *host_comm = handle.release();
  });
}

static_assert(static_cast<int32_t>(dist::Path::kSelf) == DIST_COMM_PATH_SELF &&
              static_cast<int32_t>(dist::Path::kPointToPoint) == DIST_COMM_PATH_POINT_TO_POINT &&
              static_cast<int32_t>(dist::Path::kSharedMemory) == DIST_COMM_PATH_SHARED_MEMORY &&
              static_cast<int32_t>(dist::Path::kHierarchical) == DIST_COMM_PATH_HIERARCHICAL &&
              static_cast<int32_t>(dist::Path::kNccl) == DIST_COMM_PATH_NCCL &&
              static_cast<int32_t>(dist::Path::kStaged) == DIST_COMM_PATH_STAGED,
              "DIST_COMM_PATH_* numbers the paths as Path does");

static_assert(static_cast<int32_t>(dist::CollectiveKind::kAllReduce) == DIST_COLLECTIVE_ALL_REDUCE &&
              static_cast<int32_t>(dist::CollectiveKind::kReduce) == DIST_COLLECTIVE_REDUCE &&
              static_cast<int32_t>(dist::CollectiveKind::kBroadcast) == DIST_COLLECTIVE_BROADCAST &&
              static_cast<int32_t>(dist::CollectiveKind::kAllGather) == DIST_COLLECTIVE_ALL_GATHER &&
              static_cast<int32_t>(dist::CollectiveKind::kReduceScatter) == DIST_COLLECTIVE_REDUCE_SCATTER &&
              static_cast<int32_t>(dist::CollectiveKind::kAllToAll) == DIST_COLLECTIVE_ALL_TO_ALL &&
              static_cast<int32_t>(dist::CollectiveKind::kBarrier) == DIST_COLLECTIVE_BARRIER,
              "DIST_COLLECTIVE_* numbers the collectives as CollectiveKind does");

DIST_EXPORT dist_status_t dist_comm_algorithm(const dist_comm_t* comm, dist_collective_t collective, uint64_t bytes,
                                              const char** name) {
  return call_guarded(__func__, [&] {
    require(name, "name");
    require(comm, "comm");
    *name = comm->communicator->algorithm_for(dist::kind_of_collective(collective), static_cast<size_t>(bytes));
  });
}

DIST_EXPORT dist_status_t dist_context_dump(dist_context_t* context, char** json) {
  return call_guarded(__func__, [&] {
    require(json, "json");
    *json = dist::copy_for_caller(dist::dump_json(require(context, "context")->context->dump(), 1));
  });
}

DIST_EXPORT dist_status_t dist_comm_stats(const dist_comm_t* comm, dist_comm_stat_t* stats, uint64_t capacity,
                                          uint64_t* count) {
  return call_guarded(__func__, [&] {
    require(count, "count");
    require(comm, "comm");
    if (capacity > 0) require(stats, "stats");
    const std::vector<dist::CallStatsRow> rows = comm->communicator->stats();
    for (size_t i = 0; i < rows.size() && i < capacity; ++i) {
      dist_comm_stat_t out{};
      out.collective = dist::collective_of_kind(rows[i].kind);
      out.path = static_cast<dist_comm_path_t>(rows[i].path);
      out.algorithm = rows[i].algorithm;
      out.calls = rows[i].calls;
      out.failed = rows[i].failed;
      out.bytes = rows[i].bytes;
      out.timed_calls = rows[i].timed_calls;
      out.time_ns = rows[i].time_ns;
      stats[i] = out;
    }
    *count = rows.size();
  });
}

DIST_EXPORT dist_status_t dist_comm_stats_reset(dist_comm_t* comm) {
  return call_guarded(__func__, [&] { require(comm, "comm")->communicator->reset_stats(); });
}

DIST_EXPORT dist_status_t dist_comm_configure(dist_comm_t* comm, const dist_comm_options_t* options) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    require(options, "options");
    if (options->field_mask & DIST_COMM_OPT_TIMEOUT_MS) {
      if (options->timeout_ms <= 0) {
        dist::fail_invalid("options: timeout_ms " + std::to_string(options->timeout_ms) + " must be positive");
      }
      comm->communicator->set_timeout(std::chrono::milliseconds(options->timeout_ms));
    }
    if (options->field_mask & DIST_COMM_OPT_ALLREDUCE) {
      // The table of algorithms names what each DIST_ALLREDUCE_* forces.
      const char* forced = dist::forced_all_reduce_name(options->allreduce);
      if (forced == nullptr) {
        dist::fail_invalid("options: allreduce " + std::to_string(options->allreduce) +
                           " is not a DIST_ALLREDUCE_* value");
      }
      if (options->allreduce == DIST_ALLREDUCE_SHARED_MEMORY && !comm->communicator->has_shared_memory()) {
        dist::fail(dist::Status::kUnsupported,
                   "options: allreduce DIST_ALLREDUCE_SHARED_MEMORY needs a communicator on one host with "
                   "shared memory enabled (see dist_comm_path)");
      }
      if (options->allreduce == DIST_ALLREDUCE_HIERARCHICAL &&
          comm->communicator->path() != dist::Path::kHierarchical) {
        dist::fail(dist::Status::kUnsupported,
                   "options: allreduce DIST_ALLREDUCE_HIERARCHICAL needs a communicator across hosts with several "
                   "ranks on some and shared memory enabled (see dist_comm_path)");
      }
      dist::AlgorithmOptions algorithms = comm->communicator->algorithms();
      algorithms.all_reduce = forced;
      comm->communicator->set_algorithms(algorithms);
    }
    if (options->field_mask & DIST_COMM_OPT_STALL_WARNING_MS) {
      if (options->stall_warning_ms < 0) {
        dist::fail_invalid("options: stall_warning_ms " + std::to_string(options->stall_warning_ms) +
                           " must be 0 (no warning) or positive");
      }
      comm->communicator->set_stall_warning(std::chrono::milliseconds(options->stall_warning_ms));
    }
    if (options->field_mask & DIST_COMM_OPT_DETERMINISTIC) {
      if (options->deterministic != 0 && options->deterministic != 1) {
        dist::fail_invalid("options: deterministic " + std::to_string(options->deterministic) + " must be 0 or 1");
      }
      comm->communicator->set_deterministic(options->deterministic == 1);
    }
    if (options->field_mask & DIST_COMM_OPT_TIMING) {
      if (options->timing != 0 && options->timing != 1) {
        dist::fail_invalid("options: timing " + std::to_string(options->timing) + " must be 0 or 1");
      }
      comm->communicator->set_timing(options->timing == 1);
    }
  });
}

}  // extern "C"
