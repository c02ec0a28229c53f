// Child processes of the C++ process tests (parameter servers, their
// workers, dist-run): started with their output in a log file and the cluster
// token in their environment, remembered so that a suite's teardown kills
// every one by PID, waited for by a line of their log, and stopped within a
// bound.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace child_process {

struct Process {
  pid_t pid = -1;
  std::string log;
};

// Every process this test program started and has not reaped.
inline std::vector<pid_t>& started() {
  static std::vector<pid_t> pids;
  return pids;
}

// For a cmocka teardown: kills and reaps what a failed check left running.
inline void kill_started() {
  for (pid_t pid : started()) {
    if (kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
  }
  started().clear();
}

// Starts args[0] with args, `token` as DIST_CLUSTER_TOKEN (no token file) and
// the "NAME=value" entries of env; stdout and stderr append to `log`.
inline Process spawn(const std::vector<std::string>& args, const std::vector<std::string>& env,
                     const std::string& log, const char* token) {
  Process p;
  p.log = log;
  p.pid = fork();
  if (p.pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("DIST_CLUSTER_TOKEN", token, 1);
    unsetenv("DIST_CLUSTER_TOKEN_FILE");
    for (const std::string& entry : env) {
      const size_t equals = entry.find('=');
      setenv(entry.substr(0, equals).c_str(), entry.substr(equals + 1).c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (p.pid > 0) started().push_back(p.pid);
  return p;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits until the log holds `needle`; false at the deadline.
inline bool wait_for_output(const Process& p, const std::string& needle, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_text(p.log).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Sends signal_first (if any), then waits for the exit: its status, or
// -signal; at the deadline it kills the process and returns -1000.
inline int finish(Process& p, double seconds, int signal_first = 0) {
  if (p.pid <= 0) return 0;
  if (signal_first) kill(p.pid, signal_first);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (waitpid(p.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      p.pid = -1;
      return -1000;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  p.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace child_process
