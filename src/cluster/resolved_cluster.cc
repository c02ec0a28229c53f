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

namespace {

// Simple's, Slurm's and Union's `rpc_layer or self.rpc_layer`: an empty
// argument falls back to the cluster's layer.
std::string layer_or(const std::optional<std::string>& rpc, const std::optional<std::string>& fallback) {
  return (rpc && !rpc->empty()) ? *rpc : fallback.value_or("");
}

// TF_CONFIG's rule: a cluster without tasks, or of one job holding task 0
// alone, has no master to name.
bool at_most_one_task(const ClusterSpec& spec) {
  if (spec.empty()) return true;
  if (spec.jobs().size() != 1) return false;
  const ClusterSpec::Tasks& tasks = spec.jobs().begin()->second;
  return !tasks.empty() && tasks.rbegin()->first == 0;
}

}  // namespace

std::string ResolvedCluster::master(const std::optional<std::string>& type,
                                    std::optional<int32_t> id,
                                    const std::optional<std::string>& rpc) const {
  if (rendezvous && spec.empty()) return "";  // no address is known before the rendezvous
  const std::optional<std::string>& own_type = type ? type : task_type;
  const std::optional<int32_t> own_id = id ? id : task_id;
  switch (master_rule) {
    case MasterRule::kTfConfig: {
      if (session_master) return *session_master;
      if (at_most_one_task(spec)) return "";
      if (!own_type || !own_id) {
        fail_invalid("master(): the cluster has several tasks (jobs: " + spec.job_names() +
                     ") but no task type and id were given and the cluster names none for this process");
      }
      // TF_CONFIG's `rpc_layer if rpc_layer is not None`: "" means no layer.
      return format_master_url(spec.task_address(*own_type, *own_id), rpc ? *rpc : rpc_layer.value_or(""));
    }
    case MasterRule::kOwnTask:
      if (!own_type || !own_id) return "";
      return format_master_url(spec.task_address(*own_type, *own_id), layer_or(rpc, rpc_layer));
    case MasterRule::kSimple:
      if (type && id) return format_master_url(spec.task_address(*type, *id), layer_or(rpc, rpc_layer));
      // TF would write "grpc://" for an empty master; nothing is more useful.
      return default_master.empty() ? "" : format_master_url(default_master, layer_or(rpc, rpc_layer));
    case MasterRule::kUnion:
      if (type && id) return format_master_url(spec.task_address(*type, *id), layer_or(rpc, own_rpc_layer));
      return first_member ? first_member->master(std::nullopt, std::nullopt, rpc) : "";
  }
  fail(Status::kInternal, "master(): unknown master rule");
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
  // Where TF's master() would raise (several tasks, none named), there is none.
  std::string m;
  try {
    m = master();
  } catch (const Error&) {
    m.clear();
  }
  out["master"] = m.empty() ? Json(nullptr) : Json(m);
  if (session_master) out["session_master"] = *session_master;
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
