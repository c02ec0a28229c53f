// The resolved view of a cluster: what every resolver produces and the C ABI's
// dist_cluster_t wraps. Mirrors TensorFlow's ClusterResolver properties.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/json.h"
#include "cluster/cluster_spec.h"
#include "cluster/job_layout.h"

namespace dist {

enum class ResolverKind : int32_t {
  kAuto = 0,
  kTfConfig = 1,
  kSimple = 2,
  kSlurm = 3,
  kMpi = 4,
  kTorchrun = 5,
  kUnion = 6,
};

// "tf_config", "simple", ...; nullptr for a value outside the enum.
const char* resolver_name(ResolverKind kind);

// How master() answers when asked without a task, after the TF resolver each
// source mirrors (their master() methods differ).
enum class MasterRule : int32_t {
  // SlurmClusterResolver's, and the default (the MPI and torchrun resolvers,
  // clusters built otherwise): the given task, else this task; "" when
  // neither is known. An empty rpc argument means "the cluster's".
  kOwnTask,
  // TFConfigClusterResolver: session_master when TF_CONFIG has one; "" for a
  // cluster with no task or a single task; else the given task, else this
  // task (an error when neither is known). An empty rpc argument means none.
  kTfConfig,
  // SimpleClusterResolver: the given task (type and id both), else the
  // `master` option; never this task.
  kSimple,
  // UnionClusterResolver: the given task (type and id both) in the merged
  // spec with the union's own rpc layer, else the first member's master().
  kUnion,
};

// Where every task's address comes from when a launcher gave ranks but not
// hosts (torchrun or mpirun across hosts): a rendezvous at `address`, run by
// the transport when the context joins (transport/rendezvous.h). Rank 0
// listens there; the tasks' addresses become spec, laid out as `jobs` says.
struct RendezvousPoint {
  std::string address;  // "host:port"
  int32_t rank = 0;
  int32_t size = 0;
  JobCounts jobs;       // normalized: ranks 0..size-1 in sorted job-name order
  std::string source;   // "torchrun", "MPI": prefixes messages
};

struct ResolvedCluster {
  ResolverKind resolver = ResolverKind::kTfConfig;
  MasterRule master_rule = MasterRule::kOwnTask;
  ClusterSpec spec;
  std::optional<std::string> task_type;
  std::optional<int32_t> task_id;
  std::optional<std::string> rpc_layer;
  std::optional<std::string> environment;
  // kTfConfig: TF_CONFIG's "session_master", which master() returns as is.
  std::optional<std::string> session_master;
  // kSimple: what master() returns without a task (the `master` option).
  std::string default_master;
  // kUnion: the first member, which answers master() without a task, and the
  // rpc layer given to the union itself (not inherited from the member).
  std::shared_ptr<const ResolvedCluster> first_member;
  std::optional<std::string> own_rpc_layer;
  // Device type -> count available to this task, e.g. {"GPU": 0}.
  std::map<std::string, int32_t> accelerators;
  std::optional<std::string> cuda_visible_devices;
  // Set while the addresses are still to be gathered (spec is empty until then).
  std::optional<RendezvousPoint> rendezvous;

  // TF's master(task_type, task_id, rpc_layer) under this cluster's rule.
  // Throws (invalid argument) where TF raises: an unknown task, or a
  // TF_CONFIG cluster of several tasks asked without any task.
  std::string master(const std::optional<std::string>& type = std::nullopt,
                     std::optional<int32_t> id = std::nullopt,
                     const std::optional<std::string>& rpc = std::nullopt) const;

  int32_t num_accelerators(const std::string& device_type) const;

  Json to_json() const;

  // The task must exist in the cluster unless it is an evaluator (which TF keeps
  // outside the cluster) or the cluster is empty. The fields name where the type
  // and id came from in messages ("TF_CONFIG: task.index").
  void check_task(const std::string& type_field, const std::string& id_field) const;
};

// "<rpc_layer>://<address>", or the address alone without an rpc layer.
std::string format_master_url(const std::string& address, const std::string& rpc_layer);

}  // namespace dist
