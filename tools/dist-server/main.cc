// dist-server: the standard parameter server. Started as a "ps" task (TF_CONFIG
// or any resolver; the address is the task's own) or with --address, it serves
// variable shards to the workers until SIGTERM/SIGINT or a client's stop
// request, logging what it holds. Built on the public C API.
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <distribute/c_api.h>

namespace {

constexpr const char* kUsage =
    "usage: dist-server [--address HOST:PORT] [--checkpoint-dir DIR] [--token-file FILE]\n"
    "                   [--io-timeout-ms MS] [--quiet]\n"
    "\n"
    "Serves parameter-server shards. Without --address it resolves the cluster\n"
    "(TF_CONFIG, Slurm, ...) and listens at this task's address; the task type must\n"
    "be 'ps'. The cluster token comes from --token-file, DIST_CLUSTER_TOKEN or\n"
    "DIST_CLUSTER_TOKEN_FILE. With --checkpoint-dir (default: $DIST_CHECKPOINT_DIR)\n"
    "it restores its shards from the latest checkpoint there as workers re-create\n"
    "them. Stops on SIGTERM or SIGINT, or when a client asks it to.\n";

std::mutex log_mutex;
std::string server_name = "dist-server";

void log_line(const char* message, void* user_data) {
  (void)user_data;
  std::lock_guard<std::mutex> guard(log_mutex);
  std::fprintf(stderr, "dist-server: %s\n", message);
  std::fflush(stderr);
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "dist-server: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

int library_error(const char* what) {
  std::fprintf(stderr, "%s: %s failed: %s\n", server_name.c_str(), what, dist_last_error());
  return 1;
}

struct Flags {
  std::string address, checkpoint_dir, token_file;
  int64_t io_timeout_ms = 0;
  bool quiet = false;
};

Flags parse_flags(int argc, char** argv) {
  Flags flags;
  if (const char* dir = std::getenv("DIST_CHECKPOINT_DIR")) flags.checkpoint_dir = dir;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--address") {
      flags.address = value();
    } else if (flag == "--checkpoint-dir") {
      flags.checkpoint_dir = value();
    } else if (flag == "--token-file") {
      flags.token_file = value();
    } else if (flag == "--io-timeout-ms") {
      const std::string text = value();
      char* end = nullptr;
      flags.io_timeout_ms = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || flags.io_timeout_ms <= 0) usage_error("--io-timeout-ms: '" + text + "' is not a positive number");
    } else if (flag == "--quiet") {
      flags.quiet = true;
    } else {
      usage_error("unknown option '" + flag + "'");
    }
  }
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv);

  // The signals are taken by sigtimedwait below; blocked before any server
  // thread starts, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  dist_cluster_t* cluster = nullptr;
  if (flags.address.empty()) {
    if (dist_cluster_resolve(nullptr, &cluster) != DIST_OK) return library_error("resolving the cluster");
    const char* type = nullptr;
    int32_t id = -1;
    dist_cluster_task_type(cluster, &type);
    dist_cluster_task_id(cluster, &id);
    if (type == nullptr || std::strcmp(type, "ps") != 0 || id < 0) {
      std::fprintf(stderr, "dist-server: this task is '%s:%d', not a 'ps' task; give --address or run it as a ps task\n",
                   type ? type : "none", id);
      dist_cluster_destroy(cluster);
      return 1;
    }
    server_name = "ps:" + std::to_string(id);
  }

  dist_server_options_t options = DIST_SERVER_OPTIONS_INIT;
  if (!flags.address.empty()) {
    options.field_mask |= DIST_SERVER_OPT_ADDRESS;
    options.address = flags.address.c_str();
  }
  if (!flags.checkpoint_dir.empty()) {
    options.field_mask |= DIST_SERVER_OPT_CHECKPOINT_DIR;
    options.checkpoint_dir = flags.checkpoint_dir.c_str();
  }
  if (!flags.token_file.empty()) {
    options.field_mask |= DIST_SERVER_OPT_TOKEN_FILE;
    options.token_file = flags.token_file.c_str();
  }
  if (flags.io_timeout_ms > 0) {
    options.field_mask |= DIST_SERVER_OPT_IO_TIMEOUT_MS;
    options.io_timeout_ms = flags.io_timeout_ms;
  }
  if (!flags.quiet) {
    options.field_mask |= DIST_SERVER_OPT_LOG;
    options.log = log_line;
  }
  dist_server_t* server = nullptr;
  dist_status_t status = dist_server_start(cluster, &options, &server);
  dist_cluster_destroy(cluster);
  if (status != DIST_OK) return library_error("starting the server");

  // Serve until a signal or a client's stop request.
  while (dist_server_join(server, 0) == DIST_ERR_TIMEOUT) {
    timespec slice{0, 200 * 1000 * 1000};
    int signal_number = sigtimedwait(&stop_signals, nullptr, &slice);
    if (signal_number > 0) {
      if (!flags.quiet) {
        std::string message = std::string("stopping on ") + (signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
        log_line(message.c_str(), nullptr);
      }
      dist_server_stop(server);
    }
  }
  dist_server_destroy(server);
  return 0;
}
