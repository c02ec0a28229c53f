// dist-info cluster: resolves through the public C ABI, exactly as a user
// program would, and prints the result (plus the masters asked for).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/numbers.h"
#include "base/status.h"
#include <distribute/c_api.h>
#include "cluster/job_layout.h"
#include "commands.h"

namespace dist::info {

namespace {

struct ClusterFlags {
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  // Storage the options point into.
  std::vector<std::string> strings;
  std::vector<std::string> job_names;
  std::vector<const char*> job_name_ptrs;
  std::vector<int32_t> job_counts;
  std::vector<std::string> masters;  // "TYPE:ID"
  bool json = false;
};

dist_resolver_kind_t parse_resolver(const std::string& name) {
  for (dist_resolver_kind_t kind = DIST_RESOLVER_TF_CONFIG; kind <= DIST_RESOLVER_TORCHRUN; ++kind) {
    if (name == dist_resolver_name(kind)) return kind;
  }
  if (name == "auto") return DIST_RESOLVER_AUTO;
  fail_invalid("--resolver: " + quoted(name) + " is not one of auto, tf_config, simple, slurm, mpi, torchrun");
}

bool parse_bool(const std::string& text, const std::string& flag) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  fail_invalid(flag + ": " + quoted(text) + " is not true or false");
}

void parse_flags(const Args& args, ClusterFlags& flags) {
  flags.strings.reserve(args.size());  // c_str() pointers must stay put
  dist_cluster_options_t& o = flags.options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--json") {
      flags.json = true;
      continue;
    }
    if (i + 1 >= args.size()) fail_invalid(flag + " needs a value (or is not a flag of dist-info cluster)");
    const std::string& value = args[++i];
    auto text = [&]() { return flags.strings.emplace_back(value).c_str(); };
    if (flag == "--resolver") {
      o.resolver = parse_resolver(value);
      o.field_mask |= DIST_CLUSTER_OPT_RESOLVER;
    } else if (flag == "--task-type") {
      o.task_type = text();
      o.field_mask |= DIST_CLUSTER_OPT_TASK_TYPE;
    } else if (flag == "--task-id") {
      o.task_id = parse_int32(value, flag);
      o.field_mask |= DIST_CLUSTER_OPT_TASK_ID;
    } else if (flag == "--rpc-layer") {
      o.rpc_layer = text();
      o.field_mask |= DIST_CLUSTER_OPT_RPC_LAYER;
    } else if (flag == "--environment") {
      o.environment = text();
      o.field_mask |= DIST_CLUSTER_OPT_ENVIRONMENT;
    } else if (flag == "--cluster-spec") {
      o.cluster_spec_json = text();
      o.field_mask |= DIST_CLUSTER_OPT_CLUSTER_SPEC;
    } else if (flag == "--master") {
      o.master = text();
      o.field_mask |= DIST_CLUSTER_OPT_MASTER;
    } else if (flag == "--jobs") {
      for (const auto& [name, count] : parse_job_counts(value, flag)) {
        flags.job_names.push_back(name);
        flags.job_counts.push_back(count);
      }
      for (const auto& name : flags.job_names) flags.job_name_ptrs.push_back(name.c_str());
      o.job_names = flags.job_name_ptrs.data();
      o.job_counts = flags.job_counts.data();
      o.num_jobs = flags.job_counts.size();
      o.field_mask |= DIST_CLUSTER_OPT_JOBS;
    } else if (flag == "--port-base") {
      o.port_base = parse_int32(value, flag, 1, 65535);
      o.field_mask |= DIST_CLUSTER_OPT_PORT_BASE;
    } else if (flag == "--tasks-per-node") {
      o.tasks_per_node = parse_int32(value, flag, 1);
      o.field_mask |= DIST_CLUSTER_OPT_TASKS_PER_NODE;
    } else if (flag == "--gpus-per-node") {
      o.gpus_per_node = parse_int32(value, flag);
      o.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_NODE;
    } else if (flag == "--gpus-per-task") {
      o.gpus_per_task = parse_int32(value, flag);
      o.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_TASK;
    } else if (flag == "--auto-set-gpu") {
      o.auto_set_gpu = parse_bool(value, flag) ? 1 : 0;
      o.field_mask |= DIST_CLUSTER_OPT_AUTO_SET_GPU;
    } else if (flag == "--num-gpus") {
      o.num_gpus = parse_int32(value, flag);
      o.field_mask |= DIST_CLUSTER_OPT_NUM_GPUS;
    } else if (flag == "--master-for") {
      flags.masters.push_back(value);
    } else {
      fail_invalid("unknown flag " + quoted(flag) + " for dist-info cluster");
    }
  }
}

// Throws with the library's message when a call fails.
void check(dist_status_t status) {
  if (status != DIST_OK) fail(static_cast<Status>(status), dist_last_error());
}

std::string take_string(char* owned) {
  std::unique_ptr<char, decltype(&dist_string_free)> guard(owned, &dist_string_free);
  return owned;
}

Json masters_json(const dist_cluster_t* cluster, const std::vector<std::string>& requests) {
  Json masters = Json::object();
  for (const std::string& request : requests) {
    size_t colon = request.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      fail_invalid("--master-for: " + quoted(request) + " is not of the form TYPE:ID");
    }
    std::string type = request.substr(0, colon);
    int32_t id = parse_int32(request.substr(colon + 1), "--master-for " + quoted(request));
    char* master = nullptr;
    check(dist_cluster_master(cluster, type.c_str(), id, nullptr, &master));
    masters[request] = take_string(master);
  }
  return masters;
}

void print_human(const Json& view) {
  std::printf("resolver:     %s\n", view["resolver"].get<std::string>().c_str());
  auto show = [](const Json& v) { return v.is_null() ? std::string("(none)") : v.is_string() ? v.get<std::string>() : dump_json(v); };
  std::printf("task:         %s:%s\n", show(view["task_type"]).c_str(), show(view["task_id"]).c_str());
  std::printf("rpc layer:    %s\n", show(view["rpc_layer"]).c_str());
  std::printf("environment:  %s\n", show(view["environment"]).c_str());
  std::printf("master:       %s\n", show(view["master"]).c_str());
  std::printf("accelerators: %s\n", dump_json(view["num_accelerators"]).c_str());
  std::printf("CUDA devices: %s\n", show(view["cuda_visible_devices"]).c_str());
  std::printf("cluster:\n");
  if (view.contains("rendezvous")) {
    const Json& point = view["rendezvous"];
    std::printf("  (gathered when the context joins: rank %s of %s meets rank 0 at %s)\n",
                dump_json(point["rank"]).c_str(), dump_json(point["size"]).c_str(),
                point["address"].get<std::string>().c_str());
  } else if (view["cluster"].empty()) {
    std::printf("  (empty: a single process)\n");
  }
  for (const auto& [job, tasks] : view["cluster"].items()) {
    std::printf("  %s:\n", job.c_str());
    if (tasks.is_array()) {
      for (size_t i = 0; i < tasks.size(); ++i) std::printf("    %zu  %s\n", i, tasks[i].get<std::string>().c_str());
    } else {
      for (const auto& [index, address] : tasks.items()) std::printf("    %s  %s\n", index.c_str(), address.get<std::string>().c_str());
    }
  }
  for (const auto& [request, master] : view["masters"].items()) {
    std::printf("master(%s): %s\n", request.c_str(), master.get<std::string>().c_str());
  }
}

}  // namespace

int cluster_command(const Args& args) {
  ClusterFlags flags;
  parse_flags(args, flags);
  dist_cluster_t* raw = nullptr;
  check(dist_cluster_resolve(&flags.options, &raw));
  std::unique_ptr<dist_cluster_t, decltype(&dist_cluster_destroy)> cluster(raw, &dist_cluster_destroy);
  char* json = nullptr;
  check(dist_cluster_to_json(cluster.get(), &json));
  Json view = Json::parse(take_string(json));
  view["masters"] = masters_json(cluster.get(), flags.masters);
  if (flags.json) {
    std::printf("%s\n", dump_json(view, 2).c_str());
  } else {
    print_human(view);
  }
  return 0;
}

}  // namespace dist::info
