#include "supervisor.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string.h>
#include <string>

#include "messages.h"

namespace dist::run {

namespace {

// How long output may still arrive after the last task exited, from
// subprocesses that held on to its pipes and outside its process group.
constexpr auto kDrainTime = std::chrono::seconds(1);

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

bool succeeded(const siginfo_t& info) { return info.si_code == CLD_EXITED && info.si_status == 0; }

// The shell's convention: the exit status, or 128+N for signal N.
int exit_code_of(const siginfo_t& info) {
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

std::string describe_exit(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
  std::string text = "killed by signal " + std::to_string(info.si_status) + " (" +
                     ::strsignal(info.si_status) + ")";
  if (info.si_code == CLD_DUMPED) text += ", core dumped";
  return text;
}

// The task's group, so helpers it started (a shell's children) get the signal
// too; the task alone if the group is somehow gone.
void signal_task(pid_t pid, int signal_number) {
  if (::kill(-pid, signal_number) != 0) ::kill(pid, signal_number);
}

}  // namespace

Supervisor::Supervisor(SignalChannel& signals, std::optional<double> timeout_seconds,
                       double grace_seconds)
    : signals_(signals),
      timeout_seconds_(timeout_seconds),
      grace_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds))) {}

Supervisor::~Supervisor() {
  for (RunningTask& task : tasks_) {
    if (task.reaped) continue;
    signal_task(task.pid, SIGKILL);
    while (::waitpid(task.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

void Supervisor::add(const Task& task, const SpawnedProcess& process, bool service) {
  const std::string prefix = "[" + task.name() + "] ";
  tasks_.push_back(RunningTask{task, process.pid, OutputRelay(process.stdout_fd, STDOUT_FILENO, prefix),
                               OutputRelay(process.stderr_fd, STDERR_FILENO, prefix), service});
}

void Supervisor::stop_services_when_done() {
  if (stopping_) return;
  bool any_service = false;
  for (const RunningTask& task : tasks_) {
    if (!task.service && !task.exited) return;
    any_service = any_service || (task.service && !task.exited);
  }
  if (any_service) begin_stop(0, SIGTERM);
}

int Supervisor::run() {
  if (timeout_seconds_) {
    job_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(*timeout_seconds_));
  }
  // A task may have exited before the loop began; its SIGCHLD is still pending
  // in the channel, but looking costs nothing.
  collect_exits();
  while (!all_exited()) {
    poll_once(poll_timeout_ms());
    check_deadlines();
  }
  drain_and_reap();
  return exit_code_;
}

bool Supervisor::all_exited() const {
  for (const RunningTask& task : tasks_) {
    if (!task.exited) return false;
  }
  return true;
}

int Supervisor::poll_timeout_ms() const {
  std::optional<Clock::time_point> next = kill_deadline_;
  if (job_deadline_ && !stopping_ && (!next || *job_deadline_ < *next)) next = job_deadline_;
  if (!next) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

void Supervisor::poll_once(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<OutputRelay*> relays;
  fds.push_back(pollfd{signals_.fd(), POLLIN, 0});
  for (RunningTask& task : tasks_) {
    for (OutputRelay* relay : {&task.out, &task.err}) {
      if (!relay->open()) continue;
      fds.push_back(pollfd{relay->source(), POLLIN, 0});
      relays.push_back(relay);
    }
  }
  int ready = ::poll(fds.data(), fds.size(), timeout_ms);
  if (ready < 0) {
    if (errno == EINTR) return;
    fail_system("poll", errno);
  }
  // Output first: a task's last words come before dist-run's line about its exit.
  for (size_t i = 0; i < relays.size(); ++i) {
    if (fds[i + 1].revents != 0) relays[i]->pump();
  }
  if (fds[0].revents == 0) return;
  for (int signal_number : signals_.take()) {
    if (signal_number == SIGCHLD) {
      collect_exits();
    } else {
      on_user_signal(signal_number);
    }
  }
}

void Supervisor::collect_exits() {
  for (RunningTask& task : tasks_) {
    if (task.exited) continue;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(task.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) continue;
    if (info.si_pid != task.pid) continue;  // still running
    task.exited = true;
    on_task_exit(task, info);
  }
  stop_services_when_done();
}

void Supervisor::on_task_exit(RunningTask& task, const siginfo_t& info) {
  if (succeeded(info) || stopping_) return;
  // Its remaining output first, so the failure line follows the task's own
  // last lines (a traceback, say).
  task.out.pump();
  task.err.pump();
  print_message(task.task.name() + " " + describe_exit(info));
  begin_stop(exit_code_of(info), SIGTERM);
}

void Supervisor::on_user_signal(int signal_number) {
  ++user_signals_;
  if (user_signals_ > 1) {
    print_message(std::string("received ") + signal_name(signal_number) + " again; killing the tasks");
    signal_running_tasks(SIGKILL);
    return;
  }
  print_message(std::string("received ") + signal_name(signal_number) +
                "; forwarding it to the tasks (send it again to kill them)");
  begin_stop(128 + signal_number, signal_number);
}

void Supervisor::begin_stop(int exit_code, int signal_number) {
  // The first reason to stop decides the exit code; the tasks then dying of the
  // signal sent to them is not news.
  if (!stopping_) {
    stopping_ = true;
    exit_code_ = exit_code;
  }
  signal_running_tasks(signal_number);
  const auto deadline = Clock::now() + grace_;
  if (!kill_deadline_ || deadline < *kill_deadline_) kill_deadline_ = deadline;
}

void Supervisor::signal_running_tasks(int signal_number) {
  for (RunningTask& task : tasks_) {
    if (!task.exited) signal_task(task.pid, signal_number);
  }
}

void Supervisor::check_deadlines() {
  const auto now = Clock::now();
  if (job_deadline_ && !stopping_ && now >= *job_deadline_) {
    print_message("timed out after " + seconds_text(*timeout_seconds_) + "; stopping the tasks");
    begin_stop(kExitTimeout, SIGTERM);
  }
  if (kill_deadline_ && now >= *kill_deadline_) {
    kill_deadline_.reset();
    if (all_exited()) return;
    print_message("tasks still running " +
                  seconds_text(std::chrono::duration<double>(grace_).count()) +
                  " after being asked to stop; killing them");
    signal_running_tasks(SIGKILL);
  }
}

void Supervisor::drain_and_reap() {
  // The tasks are gone; whatever their groups still hold goes now, which also
  // lets their pipes reach EOF.
  for (RunningTask& task : tasks_) signal_task(task.pid, SIGKILL);
  const auto drain_deadline = Clock::now() + kDrainTime;
  while (true) {
    bool any_open = false;
    for (RunningTask& task : tasks_) any_open = any_open || task.out.open() || task.err.open();
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(drain_deadline - Clock::now()).count();
    if (!any_open || left <= 0) break;
    poll_once(static_cast<int>(left));
  }
  for (RunningTask& task : tasks_) {
    task.out.close();
    task.err.close();
    while (::waitpid(task.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    task.reaped = true;
  }
}

}  // namespace dist::run
