// dist-bench: checks and times libdistribute's collectives and prints CSV that
// bench/run sets beside Gloo's and Open MPI's figures.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "base/status.h"
#include <distribute/c_api.h>
#include "collective.h"
#include "local_launch.h"
#include "measure.h"
#include "options.h"
#include "verify.h"

namespace {

// --algo NAME goes to the library as DIST_ALLREDUCE_ALGO, read by every
// communicator a context creates; the library's table of algorithms judges the
// name when a rank joins its cluster.
void force_algorithm(const dist::bench::Options& options) {
  if (options.algorithm != "auto") setenv("DIST_ALLREDUCE_ALGO", options.algorithm.c_str(), 1);
}

// Before starting ranks of its own, one check by a one-process context, so
// that a bad name is said once rather than by every rank.
void check_algorithm(const dist::bench::Options& options) {
  if (options.algorithm == "auto") return;
  dist_cluster_t* alone = nullptr;
  dist::bench::check_status(dist_cluster_from_json("{}", &alone), "a one-process cluster");
  dist_context_t* context = nullptr;
  const dist_status_t status = dist_context_create(alone, nullptr, &context);
  const std::string message = status == DIST_OK ? "" : dist_last_error();
  dist_context_destroy(context);
  dist_cluster_destroy(alone);
  if (status != DIST_OK) dist::fail_invalid("--algo: " + message);
}

int run_as_rank(const dist::bench::Options& options) {
  dist_cluster_t* cluster = nullptr;
  dist::bench::check_status(dist_cluster_resolve(nullptr, &cluster), "resolving the cluster");
  std::unique_ptr<dist_cluster_t, decltype(&dist_cluster_destroy)> cluster_guard(cluster, &dist_cluster_destroy);
  dist_context_t* context = nullptr;
  const std::string joining =
      options.algorithm == "auto" ? "joining the cluster" : "joining the cluster with --algo " + options.algorithm;
  dist::bench::check_status(dist_context_create(cluster, nullptr, &context), joining);
  std::unique_ptr<dist_context_t, decltype(&dist_context_destroy)> context_guard(context, &dist_context_destroy);
  dist_comm_t* world = nullptr;
  dist::bench::check_status(dist_comm_world(context, &world), "comm_world");
  return dist::bench::run_benchmark(world, options);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(dist::bench::kUsage, stdout);
      return 0;
    }
  }
  try {
    dist::bench::Options options = dist::bench::parse_options(argc, argv);
    force_algorithm(options);
    if (options.launch_ranks > 0) {
      check_algorithm(options);
      // The ranks get the same arguments without -n.
      std::vector<char*> args;
      for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "-n") == 0) {
          ++i;
          continue;
        }
        args.push_back(argv[i]);
      }
      return dist::bench::launch_local_ranks(options.launch_ranks, static_cast<int>(args.size()), args.data());
    }
    return run_as_rank(options);
  } catch (const dist::Error& e) {
    std::fprintf(stderr, "dist-bench: %s\n", e.what());
    return e.status() == dist::Status::kInvalidArgument ? 2 : 1;
  } catch (const dist::bench::CheckReported&) {
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "dist-bench: out of memory\n");
    return 1;
  }
}
