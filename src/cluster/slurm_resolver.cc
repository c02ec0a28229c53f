// SlurmClusterResolver: the cluster of a Slurm job step (srun), from
//   SLURM_PROCID               this task's rank
//   SLURM_STEP_NUM_TASKS       the number of tasks
//   SLURM_STEP_NODELIST        the step's nodes, in hostlist syntax
//   SLURM_STEP_TASKS_PER_NODE  tasks on each node, "2(x3),1"
// As TF's resolver: the nodes are sorted by name (a node listed twice keeps
// its last task count), ranks fill them in that order, on each node local task
// k listens at host:(port_base + k) and uses GPUs [k * gpus_per_task,
// (k + 1) * gpus_per_task), and the ranks are split into jobs in sorted
// job-name order. GPUs per node default to the entries of CUDA_VISIBLE_DEVICES
// when it is set, else the node's count; the rpc layer defaults to "grpc".
// Where CUDA_VISIBLE_DEVICES lists the job's devices, a task gets its share of
// those entries rather than TF's plain indices.
//
// Slurm hands out ranks in nodelist order, so where sorting names as strings
// reorders them ("n10" before "n9"), or srun places ranks other than in
// blocks, TF gives a task another node's address; when SLURMD_NODENAME says
// so, this resolver fails naming both instead.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/numbers.h"
#include "base/status.h"
#include "cluster/hostlist.h"
#include "cluster/job_layout.h"
#include "cluster/launcher_rank.h"
#include "cluster/resolver.h"
#include "topology/accelerators.h"

namespace dist {

namespace {

constexpr const char* kSource = "SLURM";
constexpr int32_t kDefaultPortBase = 8888;
constexpr int32_t kMaxPort = 65535;
// Every process holds the whole cluster spec; beyond this size the spec itself
// (and the time to build it) stops being reasonable.
constexpr int32_t kMaxTasks = 1000000;
constexpr int32_t kMaxGpusPerNode = 1024;

std::string required_text(const Environment& env, const std::string& name) {
  auto value = env.get(name);
  if (!value) fail_invalid(std::string(kSource) + ": " + name + " is not set");
  return *value;
}

// TF's task configuration: each node and its tasks, sorted by node name. The
// counts are the tasks_per_node option for every node, or
// SLURM_STEP_TASKS_PER_NODE, which must list as many nodes as the nodelist.
std::map<std::string, int32_t> tasks_on_nodes(const ResolveOptions& options, const std::vector<std::string>& hosts) {
  std::vector<int32_t> counts;
  if (options.tasks_per_node) {
    if (*options.tasks_per_node < 1) {
      fail_invalid(std::string(kSource) + ": options: tasks_per_node " + std::to_string(*options.tasks_per_node) +
                   " must be >= 1");
    }
    counts.assign(hosts.size(), *options.tasks_per_node);
  } else {
    const std::string text = required_text(options.env, "SLURM_STEP_TASKS_PER_NODE");
    counts = expand_tasks_per_node(text, std::string(kSource) + ": SLURM_STEP_TASKS_PER_NODE");
    if (counts.size() != hosts.size()) {
      fail_invalid(std::string(kSource) + ": SLURM_STEP_TASKS_PER_NODE " + quoted(text) + " gives " +
                   std::to_string(counts.size()) + " nodes but SLURM_STEP_NODELIST " +
                   quoted(*options.env.get("SLURM_STEP_NODELIST")) + " has " + std::to_string(hosts.size()));
    }
  }
  std::map<std::string, int32_t> nodes;
  for (size_t i = 0; i < hosts.size(); ++i) nodes[hosts[i]] = counts[i];
  return nodes;
}

// The entries of CUDA_VISIBLE_DEVICES ("" is none, where TF would count one).
std::vector<std::string> visible_devices(const std::string& value) {
  std::vector<std::string> devices;
  for (size_t start = 0; !value.empty() && start <= value.size();) {
    size_t comma = std::min(value.find(',', start), value.size());
    devices.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  if (devices.size() > static_cast<size_t>(kMaxGpusPerNode)) {
    fail_invalid(std::string(kSource) + ": CUDA_VISIBLE_DEVICES lists " + std::to_string(devices.size()) +
                 " devices, more than " + std::to_string(kMaxGpusPerNode) + " GPUs on a node");
  }
  return devices;
}

// The devices of GPUs [first, first + count) of the node: as TF, their
// indices ("2,3"); where Slurm already listed the job's devices in
// CUDA_VISIBLE_DEVICES, those entries instead (TF's indices would name
// devices the job was not given); "" for none.
std::string gpu_ids(const std::vector<std::string>& visible, int64_t first, int32_t count) {
  const bool listed = static_cast<int64_t>(visible.size()) >= first + count;
  std::string ids;
  for (int64_t id = first; id < first + count; ++id) {
    ids += (ids.empty() ? "" : ",") + (listed ? visible[static_cast<size_t>(id)] : std::to_string(id));
  }
  return ids;
}

// The C ABI rejects negative counts; internal callers get the same check here.
int32_t non_negative(int32_t value, const char* option) {
  if (value < 0) {
    fail_invalid(std::string(kSource) + ": options: " + option + " " + std::to_string(value) + " is negative");
  }
  return value;
}

// GPU ids are written out one by one into CUDA_VISIBLE_DEVICES, so an absurd
// count would build an absurd string; no node has anywhere near this many.
int32_t gpu_count(int32_t value, const char* option) {
  if (non_negative(value, option) > kMaxGpusPerNode) {
    fail_invalid(std::string(kSource) + ": options: " + option + " " + std::to_string(value) + " is more than " +
                 std::to_string(kMaxGpusPerNode) + " GPUs on a node");
  }
  return value;
}

}  // namespace

ResolvedCluster resolve_slurm(const ResolveOptions& options) {
  const Environment& env = options.env;
  const int32_t rank = required_int(env, "SLURM_PROCID", kSource, 0);
  // TF reads the step's task count only for its default job; where it is
  // set, a count that disagrees with the nodes' is an error here.
  std::optional<int32_t> step_tasks;
  if (options.jobs.empty() || env.get("SLURM_STEP_NUM_TASKS")) {
    step_tasks = required_int(env, "SLURM_STEP_NUM_TASKS", kSource, 1);
    if (*step_tasks > kMaxTasks) {
      fail_invalid(std::string(kSource) + ": SLURM_STEP_NUM_TASKS " + std::to_string(*step_tasks) +
                   " is more than the " + std::to_string(kMaxTasks) + " tasks a cluster spec may hold");
    }
    if (rank >= *step_tasks) {
      fail_invalid(std::string(kSource) + ": SLURM_PROCID " + std::to_string(rank) +
                   " is out of range for SLURM_STEP_NUM_TASKS " + std::to_string(*step_tasks));
    }
  }

  const std::map<std::string, int32_t> nodes = tasks_on_nodes(
      options, expand_hostlist(required_text(env, "SLURM_STEP_NODELIST"), std::string(kSource) + ": SLURM_STEP_NODELIST"));
  int64_t total = 0;
  int32_t max_tasks_per_node = 0;
  for (const auto& node : nodes) {
    total += node.second;
    max_tasks_per_node = std::max(max_tasks_per_node, node.second);
  }
  if (total > kMaxTasks) {
    fail_invalid(std::string(kSource) + ": the nodes run " + std::to_string(total) + " tasks, more than the " +
                 std::to_string(kMaxTasks) + " tasks a cluster spec may hold");
  }
  const int32_t num_tasks = static_cast<int32_t>(total);
  if (step_tasks && *step_tasks != num_tasks) {
    fail_invalid(std::string(kSource) + ": the nodes run " + std::to_string(num_tasks) + " tasks (" +
                 (options.tasks_per_node ? "options: tasks_per_node " + std::to_string(*options.tasks_per_node) +
                                               " on " + std::to_string(nodes.size()) + " nodes"
                                         : "SLURM_STEP_TASKS_PER_NODE " +
                                               quoted(*env.get("SLURM_STEP_TASKS_PER_NODE"))) +
                 ") but SLURM_STEP_NUM_TASKS is " + std::to_string(*step_tasks));
  }
  if (rank >= num_tasks) {
    fail_invalid(std::string(kSource) + ": SLURM_PROCID " + std::to_string(rank) + " is out of range for the " +
                 std::to_string(num_tasks) + " tasks on the step's nodes");
  }

  const int32_t port_base = options.port_base.value_or(kDefaultPortBase);
  if (port_base < 1 || static_cast<int64_t>(port_base) + max_tasks_per_node - 1 > kMaxPort) {
    fail_invalid(std::string(kSource) + ": port_base " + std::to_string(port_base) + " with " +
                 std::to_string(max_tasks_per_node) + " tasks on a node needs ports above " +
                 std::to_string(kMaxPort));
  }

  // TF's default GPUs per node: the entries of CUDA_VISIBLE_DEVICES when it is
  // set, else the node's.
  const auto visible_value = env.get("CUDA_VISIBLE_DEVICES");
  const std::vector<std::string> visible = visible_devices(visible_value.value_or(""));
  const int32_t gpus_per_node =
      options.gpus_per_node ? gpu_count(*options.gpus_per_node, "gpus_per_node")
                            : (visible_value ? static_cast<int32_t>(visible.size()) : node_gpu_count());
  const int32_t gpus_per_task = options.gpus_per_task ? gpu_count(*options.gpus_per_task, "gpus_per_task")
                                                      : gpus_per_node / max_tasks_per_node;
  if (static_cast<int64_t>(gpus_per_task) * max_tasks_per_node > gpus_per_node) {
    fail_invalid(std::string(kSource) + ": requested " + std::to_string(gpus_per_task) + " GPUs per task x " +
                 std::to_string(max_tasks_per_node) + " tasks per node but the node has " +
                 std::to_string(gpus_per_node) + " GPUs");
  }

  // Addresses in rank order, and this rank's node and position on it.
  std::vector<std::string> addresses;
  addresses.reserve(static_cast<size_t>(num_tasks));
  int32_t local_index = 0;
  std::string own_node;
  for (const auto& [host, count] : nodes) {
    for (int32_t k = 0; k < count; ++k) {
      if (static_cast<int32_t>(addresses.size()) == rank) {
        local_index = k;
        own_node = host;
      }
      addresses.push_back(host + ":" + std::to_string(port_base + k));
    }
  }
  if (auto node_name = env.get("SLURMD_NODENAME"); node_name && !node_name->empty() && *node_name != own_node) {
    fail_invalid(std::string(kSource) + ": rank " + std::to_string(rank) + " runs on " + dist::quoted(*node_name) +
                 " (SLURMD_NODENAME) but TensorFlow's layout (nodes sorted by name, ranks in blocks) puts it on " +
                 dist::quoted(own_node) +
                 "; name the nodes so that they sort as Slurm lists them (n01, n02, ... n10) and keep srun's "
                 "default --distribution=block");
  }

  const JobCounts jobs = normalize_jobs(options.jobs, num_tasks, kSource);
  const TaskName task = task_of_rank(jobs, rank);
  ResolvedCluster cluster;
  cluster.resolver = ResolverKind::kSlurm;
  cluster.rpc_layer = "grpc";
  cluster.spec = layout_jobs(jobs, addresses);
  cluster.spec.validate(std::string(kSource) + ": cluster");
  cluster.task_type = task.type;
  cluster.task_id = task.id;
  // With no GPUs per task the task gets "", which hides every device from CUDA,
  // rather than leaving CUDA_VISIBLE_DEVICES alone and sharing all of them.
  cluster.cuda_visible_devices = gpu_ids(visible, static_cast<int64_t>(local_index) * gpus_per_task, gpus_per_task);
  cluster.accelerators["GPU"] = options.num_gpus ? non_negative(*options.num_gpus, "num_gpus") : gpus_per_task;
  apply_overrides(cluster, options, "SLURM: task type", "SLURM: task index");

  // Only the real environment is changed, and only once everything checked out.
  if (options.auto_set_gpu && env.is_process()) {
    if (setenv("CUDA_VISIBLE_DEVICES", cluster.cuda_visible_devices->c_str(), 1) != 0) {
      fail(Status::kSystem, std::string(kSource) + ": setenv(CUDA_VISIBLE_DEVICES) failed: " + std::strerror(errno));
    }
  }
  return cluster;
}

}  // namespace dist
