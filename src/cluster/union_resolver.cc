// UnionClusterResolver: merges the specs of several resolved clusters. Task type,
// id, rpc layer, environment and accelerators come from the first member
// (unless overridden); master() without a task is the first member's own. A job that is a list in every member is concatenated; if
// any member gives it as a map, the members are merged by index and an index
// given twice is an error.
#include "base/status.h"
#include "cluster/resolver.h"

namespace dist {

namespace {

ClusterSpec merge_specs(const std::vector<const ResolvedCluster*>& members) {
  std::map<std::string, bool> all_lists;  // job -> given as a list by every member
  for (const ResolvedCluster* member : members) {
    for (const auto& [job, tasks] : member->spec.jobs()) {
      bool dense = ClusterSpec::is_dense(tasks);
      auto [it, inserted] = all_lists.emplace(job, dense);
      if (!inserted) it->second = it->second && dense;
    }
  }
  std::map<std::string, ClusterSpec::Tasks> merged;
  for (size_t m = 0; m < members.size(); ++m) {
    for (const auto& [job, tasks] : members[m]->spec.jobs()) {
      ClusterSpec::Tasks& into = merged[job];
      if (all_lists[job]) {
        int32_t next = static_cast<int32_t>(into.size());
        for (const auto& task : tasks) into[next++] = task.second;
        continue;
      }
      for (const auto& [index, address] : tasks) {
        if (!into.emplace(index, address).second) {
          fail_invalid("union: members[" + std::to_string(m) + "] gives " + job + ":" +
                       std::to_string(index) + ", which an earlier member already gives");
        }
      }
    }
  }
  ClusterSpec spec;
  for (auto& [job, tasks] : merged) spec.set_job(job, std::move(tasks));
  spec.validate("union: cluster");
  return spec;
}

}  // namespace

ResolvedCluster resolve_union(const ResolveOptions& options) {
  if (options.members.empty()) {
    fail_invalid("options: the UNION resolver needs at least one member (DIST_CLUSTER_OPT_MEMBERS)");
  }
  for (size_t i = 0; i < options.members.size(); ++i) {
    if (options.members[i] == nullptr) fail_invalid("options: members[" + std::to_string(i) + "] is NULL");
    if (options.members[i]->rendezvous) {
      fail(Status::kUnsupported, "union: members[" + std::to_string(i) + "]'s addresses come from a rendezvous at " +
                                     options.members[i]->rendezvous->address +
                                     " when the context joins; only clusters with known addresses merge");
    }
  }
  const ResolvedCluster& first = *options.members.front();
  ResolvedCluster cluster = first;
  cluster.resolver = ResolverKind::kUnion;
  cluster.master_rule = MasterRule::kUnion;
  cluster.first_member = std::make_shared<const ResolvedCluster>(first);
  cluster.own_rpc_layer = options.rpc_layer;
  cluster.spec = merge_specs(options.members);
  apply_overrides(cluster, options);
  if (options.num_gpus) set_local_accelerators(cluster, options);
  return cluster;
}

}  // namespace dist
