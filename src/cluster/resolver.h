// Cluster resolvers: each turns one source (TF_CONFIG, a JSON spec, Slurm, an MPI
// launcher, torchrun, a union of others) into a ResolvedCluster.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/environment.h"
#include "cluster/resolved_cluster.h"

namespace dist {

struct ResolveOptions {
  ResolverKind resolver = ResolverKind::kAuto;
  // Explicit overrides (TF resolvers' constructor arguments).
  std::optional<std::string> task_type;
  std::optional<int32_t> task_id;
  std::optional<std::string> rpc_layer;
  std::optional<std::string> environment;
  // SIMPLE.
  std::optional<std::string> cluster_spec_json;
  std::string master;
  // SLURM / MPI / TORCHRUN: ranks split into jobs in sorted name order.
  std::vector<std::pair<std::string, int32_t>> jobs;
  std::optional<int32_t> port_base;
  std::optional<int32_t> tasks_per_node;
  std::optional<int32_t> gpus_per_node;
  std::optional<int32_t> gpus_per_task;
  bool auto_set_gpu = true;
  // UNION, in priority order.
  std::vector<const ResolvedCluster*> members;
  // Where environment variables come from.
  Environment env = Environment::from_process();
  // Reported GPU count instead of counting devices.
  std::optional<int32_t> num_gpus;
};

ResolvedCluster resolve_cluster(const ResolveOptions& options);

// One per source; each applies the overrides and checks the task itself.
ResolvedCluster resolve_tf_config(const ResolveOptions& options);
ResolvedCluster resolve_simple(const ResolveOptions& options);
ResolvedCluster resolve_slurm(const ResolveOptions& options);
ResolvedCluster resolve_mpi(const ResolveOptions& options);
ResolvedCluster resolve_torchrun(const ResolveOptions& options);
ResolvedCluster resolve_union(const ResolveOptions& options);

// Parses a TF_CONFIG document (also dist_cluster_to_json's output). `where`
// prefixes errors ("TF_CONFIG").
ResolvedCluster parse_tf_config(const std::string& text, const std::string& where);

// A cluster given as such a document (dist_cluster_from_json): parsed, its
// task checked against it, with this process's accelerators when it names
// none. Errors say "json".
ResolvedCluster cluster_from_json(const std::string& text);

// Which resolver AUTO picks for this environment.
ResolverKind detect_resolver(const Environment& env);

// Shared by every resolver: explicit overrides replace what the source said,
// then the task is checked against the cluster. The fields name where the
// resolver found the task type and id, for messages.
void apply_overrides(ResolvedCluster& cluster, const ResolveOptions& options,
                     const std::string& type_field = "task type",
                     const std::string& id_field = "task index");

// Accelerators of this task when the resolver does not assign devices itself:
// the num_gpus override, else the devices this process can see.
void set_local_accelerators(ResolvedCluster& cluster, const ResolveOptions& options);

}  // namespace dist
