// TFConfigClusterResolver: the TF_CONFIG environment variable, a JSON document
// {"cluster": {...}, "task": {"type": T, "index": I}, "rpc_layer": R,
//  "session_master": M, "environment": E}. Every key is optional and unknown
// keys are ignored. As TF reads it: a task type given as a number is its
// decimal text (str(123456)), an index given as a numeric string is that
// number, and session_master, when present, is master() itself.
#include "base/numbers.h"
#include "base/status.h"
#include "cluster/resolver.h"

namespace dist {

namespace {

std::optional<std::string> optional_string(const Json& doc, const char* key,
                                           const std::string& where) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    fail_invalid(where + ": " + key + " " + json_excerpt(*it) + " must be a string, not a " +
                 json_type_name(*it));
  }
  return it->get<std::string>();
}

// TF takes str(task["type"]): a job named by a number ("123456") may be given
// as one. Other JSON types have no text both languages agree on.
std::optional<std::string> optional_task_type(const Json& task, const std::string& where) {
  auto it = task.find("type");
  if (it != task.end() && it->is_number_integer()) return dump_json(*it);
  return optional_string(task, "type", where);
}

// task.index arrives as a number or, from some launchers, as a numeric string.
std::optional<int32_t> optional_index(const Json& value, const std::string& field) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return parse_int32(value.get<std::string>(), field);
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() ? value.get<uint64_t>() > INT32_MAX
                                   : (value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX)) {
      fail_invalid(field + " " + json_excerpt(value) + " is out of range [0, 2147483647]");
    }
    return static_cast<int32_t>(value.get<int64_t>());
  }
  fail_invalid(field + " " + json_excerpt(value) + " must be an integer, not a " +
               json_type_name(value));
}

}  // namespace

ResolvedCluster parse_tf_config(const std::string& text, const std::string& where) {
  ResolvedCluster cluster;
  cluster.resolver = ResolverKind::kTfConfig;
  cluster.master_rule = MasterRule::kTfConfig;
  // TF treats an unset or empty TF_CONFIG as an empty configuration.
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return cluster;
  Json doc = parse_json(text, where);
  if (!doc.is_object()) {
    fail_invalid(where + " must be a JSON object, not a " + json_type_name(doc));
  }

  if (auto it = doc.find("cluster"); it != doc.end() && !it->is_null()) {
    cluster.spec = ClusterSpec::from_json(*it, where + ": cluster");
  }

  // TF_CONFIG's "task" object; dist_cluster_to_json writes task_type/task_id.
  if (auto it = doc.find("task"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) {
      fail_invalid(where + ": task must be an object {\"type\", \"index\"}, not a " +
                   json_type_name(*it));
    }
    cluster.task_type = optional_task_type(*it, where + ": task");
    if (auto index = it->find("index"); index != it->end()) {
      cluster.task_id = optional_index(*index, where + ": task.index");
    }
  } else {
    cluster.task_type = optional_string(doc, "task_type", where);
    if (auto index = doc.find("task_id"); index != doc.end()) {
      cluster.task_id = optional_index(*index, where + ": task_id");
    }
  }
  cluster.rpc_layer = optional_string(doc, "rpc_layer", where);
  cluster.session_master = optional_string(doc, "session_master", where);
  cluster.environment = optional_string(doc, "environment", where);
  // Facts dist_cluster_to_json records beside the TF_CONFIG keys, read back so
  // that its output round-trips.
  if (auto it = doc.find("num_accelerators"); it != doc.end() && it->is_object()) {
    for (const auto& [device, count] : it->items()) {
      cluster.accelerators[device] =
          optional_index(count, where + ": num_accelerators." + device).value_or(0);
    }
  }
  cluster.cuda_visible_devices = optional_string(doc, "cuda_visible_devices", where);
  if (cluster.task_type && cluster.task_type->empty()) {
    fail_invalid(where + ": task.type is empty");
  }
  return cluster;
}

ResolvedCluster resolve_tf_config(const ResolveOptions& options) {
  ResolvedCluster cluster = parse_tf_config(options.env.get("TF_CONFIG").value_or(""), "TF_CONFIG");
  apply_overrides(cluster, options, "TF_CONFIG: task.type", "TF_CONFIG: task.index");
  if (options.num_gpus || cluster.accelerators.empty()) set_local_accelerators(cluster, options);
  return cluster;
}

ResolvedCluster cluster_from_json(const std::string& text) {
  ResolvedCluster cluster = parse_tf_config(text, "json");
  cluster.check_task("json: task type", "json: task index");
  if (cluster.accelerators.empty()) set_local_accelerators(cluster, ResolveOptions{});
  return cluster;
}

}  // namespace dist
