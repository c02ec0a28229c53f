// dist_cluster_*: the C face of src/cluster.
#include <memory>

#include "c_api/cluster_handle.h"
#include "c_api/guard.h"
#include "c_api/strings.h"
#include "cluster/resolver.h"


namespace dist {
namespace {

std::optional<std::string> optional_text(const char* value, const char* field) {
  if (value == nullptr) fail_invalid(std::string("options: ") + field + " is NULL but its field_mask bit is set");
  std::string text(value);
  if (!is_valid_utf8(text)) fail_invalid(std::string("options: ") + field + " is not valid UTF-8");
  return text;
}

ResolveOptions read_options(const dist_cluster_options_t* in) {
  ResolveOptions out;
  if (in == nullptr) return out;
  const uint64_t mask = in->field_mask;
  auto has = [mask](uint64_t bit) { return (mask & bit) != 0; };
  if (has(DIST_CLUSTER_OPT_ENV)) out.env = Environment::from_list(require(in->env, "options: env"));
  if (has(DIST_CLUSTER_OPT_RESOLVER)) {
    if (in->resolver < DIST_RESOLVER_AUTO || in->resolver > DIST_RESOLVER_UNION) {
      fail_invalid("options: resolver " + std::to_string(in->resolver) + " is not a DIST_RESOLVER_* value");
    }
    out.resolver = static_cast<ResolverKind>(in->resolver);
  }
  if (has(DIST_CLUSTER_OPT_TASK_TYPE)) {
    out.task_type = optional_text(in->task_type, "task_type");
    if (out.task_type->empty()) fail_invalid("options: task_type is empty");
  }
  if (has(DIST_CLUSTER_OPT_TASK_ID)) {
    if (in->task_id < 0) fail_invalid("options: task_id " + std::to_string(in->task_id) + " is negative");
    out.task_id = in->task_id;
  }
  if (has(DIST_CLUSTER_OPT_RPC_LAYER)) out.rpc_layer = optional_text(in->rpc_layer, "rpc_layer");
  if (has(DIST_CLUSTER_OPT_ENVIRONMENT)) out.environment = optional_text(in->environment, "environment");
  if (has(DIST_CLUSTER_OPT_CLUSTER_SPEC)) out.cluster_spec_json = optional_text(in->cluster_spec_json, "cluster_spec_json");
  if (has(DIST_CLUSTER_OPT_MASTER)) out.master = *optional_text(in->master, "master");
  if (has(DIST_CLUSTER_OPT_JOBS)) {
    if (in->num_jobs > 0) {
      require(in->job_names, "options: job_names");
      require(in->job_counts, "options: job_counts");
    }
    for (size_t i = 0; i < in->num_jobs; ++i) {
      const std::string field = "job_names[" + std::to_string(i) + "]";
      out.jobs.emplace_back(*optional_text(in->job_names[i], field.c_str()), in->job_counts[i]);
    }
  }
  auto count = [](int32_t value, const char* field, int32_t min) {
    if (value < min) {
      fail_invalid(std::string("options: ") + field + " " + std::to_string(value) + " must be >= " +
                   std::to_string(min));
    }
    return value;
  };
  if (has(DIST_CLUSTER_OPT_PORT_BASE)) {
    out.port_base = count(in->port_base, "port_base", 1);
    if (in->port_base > 65535) fail_invalid("options: port_base " + std::to_string(in->port_base) + " is above 65535");
  }
  if (has(DIST_CLUSTER_OPT_TASKS_PER_NODE)) out.tasks_per_node = count(in->tasks_per_node, "tasks_per_node", 1);
  if (has(DIST_CLUSTER_OPT_GPUS_PER_NODE)) out.gpus_per_node = count(in->gpus_per_node, "gpus_per_node", 0);
  if (has(DIST_CLUSTER_OPT_GPUS_PER_TASK)) out.gpus_per_task = count(in->gpus_per_task, "gpus_per_task", 0);
  if (has(DIST_CLUSTER_OPT_AUTO_SET_GPU)) out.auto_set_gpu = in->auto_set_gpu != 0;
  if (has(DIST_CLUSTER_OPT_MEMBERS)) {
    if (in->num_members > 0) require(in->members, "options: members");
    for (size_t i = 0; i < in->num_members; ++i) {
      const dist_cluster* member = in->members[i];
      out.members.push_back(member == nullptr ? nullptr : &member->resolved);
    }
  }
  if (has(DIST_CLUSTER_OPT_NUM_GPUS)) out.num_gpus = count(in->num_gpus, "num_gpus", 0);
  return out;
}

dist_cluster* wrap(ResolvedCluster resolved) {
  return std::make_unique<dist_cluster>(make_cluster_handle(std::move(resolved))).release();
}

const char* or_null(const std::optional<std::string>& value) {
  return value ? value->c_str() : nullptr;
}

}  // namespace
}  // namespace dist

using dist::call_guarded;
using dist::require;

extern "C" {

DIST_EXPORT dist_status_t dist_cluster_resolve(const dist_cluster_options_t* options,
                                               dist_cluster_t** cluster) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    *cluster = dist::wrap(dist::resolve_cluster(dist::read_options(options)));
  });
}

DIST_EXPORT dist_status_t dist_cluster_from_json(const char* json, dist_cluster_t** cluster) {
  return call_guarded(__func__, [&] {
    require(json, "json");
    require(cluster, "cluster");
    *cluster = dist::wrap(dist::cluster_from_json(json));
  });
}

DIST_EXPORT void dist_cluster_destroy(dist_cluster_t* cluster) { delete cluster; }

DIST_EXPORT const char* dist_resolver_name(dist_resolver_kind_t kind) {
  if (kind <= DIST_RESOLVER_AUTO || kind > DIST_RESOLVER_UNION) return nullptr;
  return dist::resolver_name(static_cast<dist::ResolverKind>(kind));
}

DIST_EXPORT dist_status_t dist_cluster_resolver(const dist_cluster_t* cluster,
                                                dist_resolver_kind_t* kind) {
  return call_guarded(__func__, [&] {
    *require(kind, "kind") = static_cast<dist_resolver_kind_t>(require(cluster, "cluster")->resolved.resolver);
  });
}

DIST_EXPORT dist_status_t dist_cluster_task_type(const dist_cluster_t* cluster, const char** task_type) {
  return call_guarded(__func__, [&] {
    *require(task_type, "task_type") = dist::or_null(require(cluster, "cluster")->resolved.task_type);
  });
}

DIST_EXPORT dist_status_t dist_cluster_task_id(const dist_cluster_t* cluster, int32_t* task_id) {
  return call_guarded(__func__, [&] {
    *require(task_id, "task_id") = require(cluster, "cluster")->resolved.task_id.value_or(-1);
  });
}

DIST_EXPORT dist_status_t dist_cluster_rpc_layer(const dist_cluster_t* cluster, const char** rpc_layer) {
  return call_guarded(__func__, [&] {
    *require(rpc_layer, "rpc_layer") = dist::or_null(require(cluster, "cluster")->resolved.rpc_layer);
  });
}

DIST_EXPORT dist_status_t dist_cluster_environment(const dist_cluster_t* cluster,
                                                   const char** environment) {
  return call_guarded(__func__, [&] {
    *require(environment, "environment") = dist::or_null(require(cluster, "cluster")->resolved.environment);
  });
}

DIST_EXPORT dist_status_t dist_cluster_num_jobs(const dist_cluster_t* cluster, size_t* num_jobs) {
  return call_guarded(__func__, [&] {
    *require(num_jobs, "num_jobs") = require(cluster, "cluster")->job_names.size();
  });
}

DIST_EXPORT dist_status_t dist_cluster_job_name(const dist_cluster_t* cluster, size_t i,
                                                const char** job_name) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    require(job_name, "job_name");
    if (i >= cluster->job_names.size()) {
      dist::fail_invalid("job " + std::to_string(i) + " is out of range (" +
                         std::to_string(cluster->job_names.size()) + " jobs)");
    }
    *job_name = cluster->job_names[i].c_str();
  });
}

DIST_EXPORT dist_status_t dist_cluster_num_tasks(const dist_cluster_t* cluster, const char* job,
                                                 int32_t* num_tasks) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    require(job, "job");
    *require(num_tasks, "num_tasks") = cluster->resolved.spec.num_tasks(job);
  });
}

DIST_EXPORT dist_status_t dist_cluster_task_index(const dist_cluster_t* cluster, const char* job,
                                                  int32_t i, int32_t* task_index) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    require(job, "job");
    require(task_index, "task_index");
    const auto& tasks = cluster->resolved.spec.job(job);
    if (i < 0 || static_cast<size_t>(i) >= tasks.size()) {
      dist::fail_invalid("task " + std::to_string(i) + " is out of range for job " + dist::quoted(job) +
                         " (" + std::to_string(tasks.size()) + " tasks)");
    }
    *task_index = std::next(tasks.begin(), i)->first;
  });
}

DIST_EXPORT dist_status_t dist_cluster_task_address(const dist_cluster_t* cluster, const char* job,
                                                    int32_t task_index, const char** address) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    require(job, "job");
    require(address, "address");
    *address = cluster->resolved.spec.task_address(job, task_index).c_str();
  });
}

DIST_EXPORT dist_status_t dist_cluster_master(const dist_cluster_t* cluster, const char* task_type,
                                              int32_t task_id, const char* rpc_layer, char** master) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    require(master, "master");
    std::optional<std::string> type;
    std::optional<int32_t> id;
    std::optional<std::string> rpc;
    if (task_type != nullptr) type = task_type;
    if (task_id >= 0) id = task_id;
    if (rpc_layer != nullptr) rpc = rpc_layer;
    *master = dist::copy_for_caller(cluster->resolved.master(type, id, rpc));
  });
}

DIST_EXPORT dist_status_t dist_cluster_num_accelerators(const dist_cluster_t* cluster,
                                                        const char* device_type, int32_t* count) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    *require(count, "count") = cluster->resolved.num_accelerators(device_type ? device_type : "GPU");
  });
}

DIST_EXPORT dist_status_t dist_cluster_cuda_visible_devices(const dist_cluster_t* cluster,
                                                            const char** devices) {
  return call_guarded(__func__, [&] {
    *require(devices, "devices") = dist::or_null(require(cluster, "cluster")->resolved.cuda_visible_devices);
  });
}

DIST_EXPORT dist_status_t dist_cluster_to_json(const dist_cluster_t* cluster, char** json) {
  return call_guarded(__func__, [&] {
    require(cluster, "cluster");
    // Checked before the copy: in `*require(...) = copy` C++17 evaluates the
    // right side first, so a NULL json would leak the copy.
    require(json, "json");
    *json = dist::copy_for_caller(dist::dump_json(cluster->resolved.to_json()));
  });
}

}  // extern "C"
