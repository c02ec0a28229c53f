#include "local_launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "port_reservation.h"

namespace dist::bench {

namespace {

std::string random_token() {
  unsigned char bytes[32];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    fail(Status::kSystem, "dist-bench: no randomness for the cluster token");
  }
  std::string hex;
  for (unsigned char b : bytes) {
    static const char* const kDigits = "0123456789abcdef";
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

}  // namespace

int launch_local_ranks(int ranks, int argc, char** argv) {
  std::string workers;
  {
    std::unique_ptr<tools::PortReservation> ports;
    try {
      ports = std::make_unique<tools::PortReservation>("127.0.0.1", static_cast<size_t>(ranks));
    } catch (const tools::PortError& e) {
      fail(Status::kSystem, std::string("dist-bench: ") + e.what());
    }
    for (int port : ports->ports()) workers += (workers.empty() ? "\"" : ",\"") + tools::format_address("127.0.0.1", port) + "\"";
  }  // the ports are released here, right before the ranks start
  const std::string token = "DIST_CLUSTER_TOKEN=" + random_token();

  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    std::string tf_config = "TF_CONFIG={\"cluster\": {\"worker\": [" + workers +
                            "]}, \"task\": {\"type\": \"worker\", \"index\": " + std::to_string(r) + "}}";
    pid_t pid = fork();
    if (pid < 0) fail(Status::kSystem, "dist-bench: fork failed");
    if (pid == 0) {
      if (r != 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
      }
      putenv(const_cast<char*>(tf_config.c_str()));
      putenv(const_cast<char*>(token.c_str()));
      std::vector<char*> args(argv, argv + argc);
      args.push_back(nullptr);
      execv("/proc/self/exe", args.data());
      std::perror("dist-bench: execv");
      _exit(127);
    }
    pids.push_back(pid);
  }
  // The first rank to fail ends the run; the others are killed by PID.
  int exit_code = 0;
  size_t running = pids.size();
  while (running > 0) {
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) break;
    --running;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && exit_code == 0) {
      exit_code = code;
      for (pid_t pid : pids) {
        if (pid != done) kill(pid, SIGKILL);
      }
    }
  }
  return exit_code;
}

}  // namespace dist::bench
