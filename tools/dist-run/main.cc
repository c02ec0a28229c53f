// dist-run: starts a tf.distribute-style job on this machine, one process per
// task, each with its TF_CONFIG, and runs it to the end.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cluster_layout.h"
#include "cluster_token.h"
#include "messages.h"
#include "options.h"
#include "port_reservation.h"
#include "signal_channel.h"
#include "supervisor.h"
#include "task_environment.h"
#include "task_process.h"

namespace {

using namespace dist::run;

// Descriptors 0-2 must be taken before any pipe is made; otherwise a pipe could
// land on 1 or 2 and its close-on-exec flag would survive dup2 onto itself.
void keep_standard_descriptors_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) continue;
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0 && null_fd > 2) ::close(null_fd);
  }
}

// dist-server next to this dist-run (build tree or install), else from PATH.
std::string standard_server_path() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string path(self, static_cast<size_t>(n));
    std::string directory = path.substr(0, path.rfind('/'));
    for (const char* candidate : {"/dist-server", "/../dist-server/dist-server"}) {
      if (::access((directory + candidate).c_str(), X_OK) == 0) return directory + candidate;
    }
  }
  return "dist-server";
}

int run_job(const Options& options) {
  const ClusterToken token = make_cluster_token(options.token_file);
  SignalChannel signals;

  ClusterLayout layout(options);
  std::unique_ptr<dist::tools::PortReservation> reserved;
  try {
    reserved = std::make_unique<dist::tools::PortReservation>(options.host, layout.num_addressed_tasks());
  } catch (const dist::tools::PortError& e) {
    throw LaunchError(e.unknown_host() ? kExitUsage : kExitSetup, std::string("--host: ") + e.what(),
                      e.unknown_host());
  }
  dist::tools::PortReservation& ports = *reserved;
  std::vector<std::string> addresses;
  for (int port : ports.ports()) addresses.push_back(dist::tools::format_address(options.host, port));
  layout.assign_addresses(addresses);

  std::vector<Environment> environments;
  for (const Task& task : layout.tasks()) {
    environments.push_back(task_environment(layout.tf_config_for(task), task.name(), token));
  }

  Supervisor supervisor(signals, options.timeout_seconds, options.grace_seconds);
  ports.release();
  for (size_t i = 0; i < layout.tasks().size(); ++i) {
    const bool server = options.ps_server && layout.tasks()[i].type == "ps";
    supervisor.add(layout.tasks()[i],
                   spawn_process(server ? std::vector<std::string>{standard_server_path()} : options.command,
                                 environments[i], signals.original_mask()),
                   server);
  }
  return supervisor.run();
}

}  // namespace

int main(int argc, char** argv) {
  keep_standard_descriptors_open();
  try {
    const Options options = parse_options(argc, argv);
    if (options.help) {
      std::fputs(kSynopsis, stdout);
      std::fputs(kDetails, stdout);
      return 0;
    }
    return run_job(options);
  } catch (const LaunchError& e) {
    print_message(e.what());
    if (e.show_usage()) {
      write_all(STDERR_FILENO, std::string(kSynopsis) + "Run 'dist-run --help' for the options.\n");
    }
    return e.exit_code();
  } catch (const std::exception& e) {
    print_message(e.what());
    return kExitSetup;
  }
}
