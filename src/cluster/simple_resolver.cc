// SimpleClusterResolver: a cluster spec handed over directly (JSON), with the
// task, rpc layer, environment, master and accelerators given as options.
// Accelerators are only what num_gpus says (TF's default is {}).
#include "base/status.h"
#include "cluster/resolver.h"

namespace dist {

ResolvedCluster resolve_simple(const ResolveOptions& options) {
  if (!options.cluster_spec_json) {
    fail_invalid("options: the SIMPLE resolver needs cluster_spec_json (DIST_CLUSTER_OPT_CLUSTER_SPEC)");
  }
  ResolvedCluster cluster;
  cluster.resolver = ResolverKind::kSimple;
  cluster.master_rule = MasterRule::kSimple;
  Json doc = parse_json(*options.cluster_spec_json, "cluster_spec_json");
  cluster.spec = ClusterSpec::from_json(doc, "cluster_spec_json");
  cluster.default_master = options.master;
  apply_overrides(cluster, options);
  // As TF's num_accelerators argument: none unless given, never counted.
  if (options.num_gpus) set_local_accelerators(cluster, options);
  return cluster;
}

}  // namespace dist
