#include "cluster/resolved_cluster.h"

#include "base/status.h"

namespace dist {

const char* resolver_name(ResolverKind kind) {
  switch (kind) {
    case ResolverKind::kAuto: return "auto";
    case ResolverKind::kTfConfig: return "tf_config";
    case ResolverKind::kSimple: return "simple";
    case ResolverKind::kSlurm: return "slurm";
    case ResolverKind::kMpi: return "mpi";
    case ResolverKind::kTorchrun: return "torchrun";
    case ResolverKind::kUnion: return "union";
  }
  return nullptr;
}

std::string format_master_url(const std::string& address, const std::string& rpc_layer) {
  return rpc_layer.empty() ? address : rpc_layer + "://" + address;
}

std::string ResolvedCluster::master(const std::optional<std::string>& type,
                                    std::optional<int32_t> id,
                                    const std::optional<std::string>& rpc) const {
  if (rendezvous && spec.empty()) return "";  // no address is known before the rendezvous
  const std::optional<std::string>& use_type = type ? type : task_type;
  std::optional<int32_t> use_id = id ? id : task_id;
  // As TF: an explicit rpc layer wins, then the cluster's; an empty one means none.
  std::string layer = (rpc && !rpc->empty()) ? *rpc : rpc_layer.value_or("");
  if (use_type && use_id) return format_master_url(spec.task_address(*use_type, *use_id), layer);
  if (default_master.empty()) return "";
  return format_master_url(default_master, layer);
}

int32_t ResolvedCluster::num_accelerators(const std::string& device_type) const {
  auto it = accelerators.find(device_type);
  return it == accelerators.end() ? 0 : it->second;
}

Json ResolvedCluster::to_json() const {
  auto or_null = [](const auto& value) { return value ? Json(*value) : Json(nullptr); };
  Json out = Json::object();
  out["resolver"] = resolver_name(resolver);
  out["cluster"] = spec.to_json();
  out["task_type"] = or_null(task_type);
  out["task_id"] = or_null(task_id);
  out["rpc_layer"] = or_null(rpc_layer);
  out["environment"] = or_null(environment);
  std::string m = master();
  out["master"] = m.empty() ? Json(nullptr) : Json(m);
  out["num_accelerators"] = Json(accelerators);
  out["cuda_visible_devices"] = or_null(cuda_visible_devices);
  if (rendezvous) {
    Json point = Json::object();
    point["address"] = rendezvous->address;
    point["rank"] = rendezvous->rank;
    point["size"] = rendezvous->size;
    out["rendezvous"] = point;
  }
  return out;
}

void ResolvedCluster::check_task(const std::string& type_field, const std::string& id_field) const {
  if (task_id && *task_id < 0) {
    fail_invalid(id_field + " " + std::to_string(*task_id) + " is negative");
  }
  if (!task_type || spec.empty() || *task_type == "evaluator") return;
  if (!spec.has_job(*task_type)) {
    fail_invalid(type_field + " " + quoted(*task_type) + " is not a job in the cluster (jobs: " +
                 spec.job_names() + ")");
  }
  if (task_id && spec.job(*task_type).count(*task_id) == 0) {
    fail_invalid(id_field + " " + std::to_string(*task_id) + " is out of range for job " +
                 quoted(*task_type) + " (" + std::to_string(spec.num_tasks(*task_type)) +
                 " tasks)");
  }
}

}  // namespace dist
