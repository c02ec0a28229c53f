// A worker process for the parameter-server fault tests. It resolves the
// cluster from TF_CONFIG, places a variable "counter" (i64, `elements` long, in
// 2 shards) on the ps tasks and adds 1 to every element `steps` times
// (steps 0: until killed). With a checkpoint root it saves every `every`
// steps, and retries a step whose server failed (printing the error) until the
// server is back; STEP_MS paces the steps. Prints "step N" as it goes and
// "final <first element> <last element>".
//
//   ps_worker ELEMENTS STEPS [CHECKPOINT_ROOT EVERY [STEP_MS]]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cluster/resolver.h"
#include "ps/checkpoint_coordinator.h"
#include "ps/cluster_servers.h"
#include "variables/on_servers/placement.h"
#include "variables/on_servers/variable_shards.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: ps_worker ELEMENTS STEPS [CHECKPOINT_ROOT EVERY [STEP_MS]]\n");
    return 2;
  }
  const int64_t elements = std::atoll(argv[1]);
  const int64_t steps = std::atoll(argv[2]);
  const std::string root = argc >= 5 ? argv[3] : "";
  const int64_t every = argc >= 5 ? std::atoll(argv[4]) : 0;
  const int64_t step_ms = argc == 6 ? std::atoll(argv[5]) : 0;
  try {
    dist::ResolvedCluster cluster = dist::resolve_cluster(dist::ResolveOptions{});
    dist::ps::ClientOptions options;
    options.servers = dist::ps::cluster_servers(cluster.spec);
    const char* token = std::getenv("DIST_CLUSTER_TOKEN");
    if (token == nullptr) throw std::runtime_error("DIST_CLUSTER_TOKEN is not set");
    options.token = token;
    options.timeouts.connect = std::chrono::milliseconds(300);
    dist::ps::PsClient client(options);
    dist::ps::VariableSpec spec;
    spec.name = "counter";
    spec.dtype = dist::DType::I64;
    spec.shape = {elements};
    spec.rows = static_cast<uint64_t>(elements);
    dist::Placer placer(client.num_servers(), dist::PlacementPolicy::kRoundRobin);
    dist::PartitionerOptions two;
    two.kind = dist::PartitionerKind::kFixedShards;
    two.num_shards = 2;
    const dist::VariablePlacement& placement = placer.place("counter", spec.total_rows(), spec.row_bytes(), two);
    dist::VariableShards counter(client, spec, placement);
    counter.create(nullptr);
    std::vector<int64_t> ones(static_cast<size_t>(elements), 1);
    for (int64_t step = 1; steps == 0 || step <= steps;) {
      try {
        counter.assign_add(ones.data());
        if (every > 0 && step % every == 0) dist::ps::save_checkpoint(client, root, step);
        std::printf("step %lld\n", static_cast<long long>(step));
        std::fflush(stdout);
        ++step;
        std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
      } catch (const dist::Error& e) {
        if (root.empty() || (e.status() != dist::Status::kPeerFailed && e.status() != dist::Status::kUnavailable)) throw;
        std::printf("retrying step %lld after status %d: %s\n", static_cast<long long>(step),
                    static_cast<int>(e.status()), e.what());
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    std::vector<int64_t> values(static_cast<size_t>(elements));
    counter.read(values.data());
    std::printf("final %lld %lld\n", static_cast<long long>(values.front()), static_cast<long long>(values.back()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ps_worker: %s\n", e.what());
    return 1;
  }
}
