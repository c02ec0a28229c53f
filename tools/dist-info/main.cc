// dist-info: what libdistribute sees of the cluster, the build and the machine.
#include <cstdio>
#include <cstring>
#include <exception>

#include "commands.h"

namespace {

constexpr const char* kUsage =
    "usage: dist-info <command> [options]\n"
    "\n"
    "commands:\n"
    "  cluster [--resolver auto|tf_config|simple|slurm|mpi|torchrun]\n"
    "          [--task-type T] [--task-id N] [--rpc-layer R] [--environment E]\n"
    "          [--cluster-spec JSON] [--master ADDR]            (simple)\n"
    "          [--jobs ps=1,worker=3] [--port-base P] [--tasks-per-node K]\n"
    "          [--gpus-per-node G] [--gpus-per-task G] [--auto-set-gpu true|false]\n"
    "          [--num-gpus G] [--master-for TYPE:ID ...] [--json]\n"
    "      resolve this process's cluster and print it\n"
    "  expand-hostlist EXPR   one host per line, as `scontrol show hostnames`\n"
    "  build                  version, build features and linked components\n"
    "  topology               packages, NUMA nodes, cores, PUs, GPUs and NICs\n"
    "  timeline merge PREFIX [--output FILE]\n"
    "      the ranks' timelines (DIST_TIMELINE=PREFIX) as one trace, clocks aligned\n";

}  // namespace

int dist::info::report_error(const std::string& message) {
  std::fprintf(stderr, "dist-info: %s\n", message.c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const dist::info::Args args(argv + 2, argv + argc);
  try {
    if (command == "cluster") return dist::info::cluster_command(args);
    if (command == "expand-hostlist") return dist::info::expand_hostlist_command(args);
    if (command == "build") return dist::info::build_command(args);
    if (command == "topology") return dist::info::topology_command(args);
    if (command == "timeline") return dist::info::timeline_command(args);
  } catch (const std::exception& e) {
    return dist::info::report_error(e.what());
  }
  std::fprintf(stderr, "dist-info: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}
