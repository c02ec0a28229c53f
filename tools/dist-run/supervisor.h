// Runs the job once its tasks are started: relays their output, watches them
// exit, forwards the user's signals, and stops everything when one task fails,
// the timeout passes or the user asks. No task outlives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <vector>

#include "cluster_layout.h"
#include "output_relay.h"
#include "signal_channel.h"
#include "task_process.h"

namespace dist::run {

class Supervisor {
 public:
  using Clock = std::chrono::steady_clock;

  Supervisor(SignalChannel& signals, std::optional<double> timeout_seconds, double grace_seconds);
  // Kills (SIGKILL) and reaps every task not yet reaped: the path taken when
  // starting the job fails halfway.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // A service task (a parameter server) serves the others: once every other
  // task has exited successfully, the services are stopped and the job succeeds.
  void add(const Task& task, const SpawnedProcess& process, bool service = false);

  // Returns when every task has exited and been reaped: 0 when all exited 0,
  // else the failing task's status (128+N for signal N), 124 after the timeout,
  // or 128+N when the user's signal N stopped the job.
  int run();

 private:
  struct RunningTask {
    Task task;
    pid_t pid;
    OutputRelay out;
    OutputRelay err;
    // The exit is seen with WNOWAIT and the task reaped only at the end: until
    // then its pid, which is also its process group's id, cannot be reused, so
    // signalling the group is always safe.
    bool service = false;
    bool exited = false;
    bool reaped = false;
  };

  void collect_exits();
  void on_task_exit(RunningTask& task, const siginfo_t& info);
  void on_user_signal(int signal_number);
  void begin_stop(int exit_code, int signal_number);
  void signal_running_tasks(int signal_number);
  void check_deadlines();
  int poll_timeout_ms() const;
  // Waits for readable output (or a signal) and handles it.
  void poll_once(int timeout_ms);
  bool all_exited() const;
  void stop_services_when_done();
  void drain_and_reap();

  SignalChannel& signals_;
  std::vector<RunningTask> tasks_;
  std::optional<double> timeout_seconds_;
  Clock::duration grace_;
  std::optional<Clock::time_point> job_deadline_;
  std::optional<Clock::time_point> kill_deadline_;
  bool stopping_ = false;
  int exit_code_ = 0;
  int user_signals_ = 0;
};

}  // namespace dist::run
