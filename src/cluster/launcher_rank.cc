#include "cluster/launcher_rank.h"

#include <map>
#include <optional>
#include <vector>

#include "base/numbers.h"
#include "base/status.h"
#include "cluster/hostlist.h"
#include "cluster/job_layout.h"

namespace dist {

namespace {

constexpr int32_t kDefaultPortBase = 8888;

// MASTER_PORT belongs to the launcher's own rendezvous store (torchrun binds it),
// so the tasks start one above it.
int32_t port_base(const ResolveOptions& options, const std::string& source) {
  if (options.port_base) return *options.port_base;
  if (auto port = options.env.get("MASTER_PORT")) {
    return parse_int32(*port, source + ": MASTER_PORT", 1, 65535) + 1;
  }
  return kDefaultPortBase;
}

void check_port_room(int32_t base, int32_t ports, const std::string& source) {
  if (base < 1 || static_cast<int64_t>(base) + ports - 1 > 65535) {
    fail_invalid(source + ": port_base " + std::to_string(base) + " leaves no room for " + std::to_string(ports) +
                 " ports below 65536");
  }
}

std::string host_and_port(const std::string& host, int32_t port) {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return shown + ":" + std::to_string(port);
}

// DIST_HOSTS names either every rank's host, in rank order, or every node's
// once, with the ranks in equal consecutive blocks per node (how mpirun and
// torchrun place them by default). The i-th rank on a host listens at base + i.
std::vector<std::string> addresses_on_hosts(const std::vector<std::string>& hosts, int32_t size, int32_t base,
                                            const std::string& source) {
  const auto entries = static_cast<int32_t>(hosts.size());
  if (entries == 0 || (entries != size && size % entries != 0)) {
    fail_invalid(source + ": DIST_HOSTS names " + std::to_string(entries) + " hosts; " + std::to_string(size) +
                 " ranks need one host per rank or the same number of ranks on every host");
  }
  const int32_t per_host = size / entries;
  std::map<std::string, int32_t> next_port_index;
  std::vector<std::string> addresses;
  for (int32_t r = 0; r < size; ++r) {
    const std::string& host = hosts[static_cast<size_t>(entries == size ? r : r / per_host)];
    const int32_t index = next_port_index[host]++;
    check_port_room(base, index + 1, source);
    addresses.push_back(host_and_port(host, base + index));
  }
  return addresses;
}

// Where the addresses come from when no variable lists the hosts: DIST_RENDEZVOUS
// ("host:port", where rank 0 listens), else for torchrun across hosts the master
// at MASTER_ADDR and the first port the tasks would take (MASTER_PORT is
// torchrun's own store). Nothing for ranks known to share one host.
std::optional<std::string> rendezvous_address(const LauncherRank& launched, const ResolveOptions& options,
                                              int32_t base) {
  const std::string& source = launched.source;
  if (auto given = options.env.get("DIST_RENDEZVOUS")) {
    const size_t colon = given->rfind(':');
    if (colon == std::string::npos || colon == 0) {
      fail_invalid(source + ": DIST_RENDEZVOUS '" + *given + "' is not host:port (where rank 0 listens)");
    }
    parse_int32(given->substr(colon + 1), source + ": DIST_RENDEZVOUS's port", 1, 65535);
    return *given;
  }
  const bool one_host = launched.local_size && *launched.local_size == launched.size;
  auto master = options.env.get("MASTER_ADDR");
  if (launched.resolver != ResolverKind::kTorchrun || one_host || !master) return std::nullopt;
  check_port_room(base, 1, source);
  return host_and_port(*master, base);
}

// A rendezvous gathers the tasks that join the context: all of them must be.
void check_rendezvous_jobs(const JobCounts& jobs, const std::string& source) {
  for (const auto& job : jobs) {
    if (job.second > 0 && job.first != "chief" && job.first != "worker") {
      fail(Status::kUnsupported, source + ": job '" + job.first + "' cannot take part in a rendezvous (only chief "
                                          "and worker tasks join it); set DIST_HOSTS or TF_CONFIG");
    }
  }
}

}  // namespace

int32_t required_int(const Environment& env, const std::string& name, const std::string& source,
                     int32_t min) {
  auto value = env.get(name);
  if (!value) fail_invalid(source + ": " + name + " is not set");
  return parse_int32(*value, source + ": " + name, min);
}

ResolvedCluster resolve_launcher_rank(const LauncherRank& launched, const ResolveOptions& options) {
  const std::string& source = launched.source;
  if (launched.rank >= launched.size) {
    fail_invalid(source + ": rank " + std::to_string(launched.rank) + " is out of range for " +
                 std::to_string(launched.size) + " ranks");
  }
  int32_t base = port_base(options, source);
  std::vector<std::string> addresses;
  std::optional<std::string> rendezvous;
  if (auto hosts = options.env.get("DIST_HOSTS")) {
    addresses = addresses_on_hosts(expand_hostlist(*hosts, source + ": DIST_HOSTS"), launched.size, base, source);
  } else if ((rendezvous = rendezvous_address(launched, options, base))) {
    // The addresses are gathered when the context joins.
  } else {
    if (!launched.local_size) {
      fail(Status::kUnsupported, source + ": cannot tell whether the " + std::to_string(launched.size) +
                                     " ranks share one host (" + launched.local_size_variable +
                                     " is not set); set DIST_RENDEZVOUS to host:port on rank 0's host, "
                                     "DIST_HOSTS to the job's hosts, or TF_CONFIG to give every task's address");
    }
    if (*launched.local_size != launched.size) {
      fail(Status::kUnsupported,
           source + ": the ranks span several hosts (" + launched.local_size_variable + "=" +
               std::to_string(*launched.local_size) + " of " + std::to_string(launched.size) +
               " ranks) and the other hosts' addresses are not in the environment; set DIST_RENDEZVOUS to "
               "host:port on rank 0's host (as the README shows), DIST_HOSTS to the job's hosts, set TF_CONFIG, "
               "or launch with srun");
    }
    check_port_room(base, launched.size, source);
    std::string host = options.env.get("MASTER_ADDR").value_or("127.0.0.1");
    for (int32_t r = 0; r < launched.size; ++r) addresses.push_back(host_and_port(host, base + r));
  }

  JobCounts jobs = normalize_jobs(options.jobs, launched.size, source);
  ResolvedCluster cluster;
  cluster.resolver = launched.resolver;
  if (rendezvous) {
    check_rendezvous_jobs(jobs, source);
    cluster.rendezvous = RendezvousPoint{*rendezvous, launched.rank, launched.size, jobs, source};
  } else {
    cluster.spec = layout_jobs(jobs, addresses);
    cluster.spec.validate(source + ": cluster");
  }
  TaskName task = task_of_rank(jobs, launched.rank);
  cluster.task_type = task.type;
  cluster.task_id = task.id;
  apply_overrides(cluster, options);
  set_local_accelerators(cluster, options);
  return cluster;
}

}  // namespace dist
