#define _GNU_SOURCE
#include "multihost/hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_support.h"

/* Everything the signal handler needs is ready before it can run: it
 * allocates nothing and calls only async-signal-safe functions. */
static char run_name[32];
static char script_path[4096];
static pid_t owner_pid;
static void (*cleanup_hook)(void);
static int handlers_installed;

const char* hosts_script(void) {
  const char* script = getenv("DIST_EMULATED_HOSTS");
  if (script == NULL) fail_msg("DIST_EMULATED_HOSTS is not set (run through ctest)");
  return script;
}

static double monotonic_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_briefly(void) {
  const struct timespec pause = {0, 10 * 1000 * 1000};
  nanosleep(&pause, NULL);
}

/* Waits up to `seconds` for pid, then SIGKILLs and reaps it. Its exit status,
 * or -1 when it was killed here or by a signal. Async-signal-safe. */
static int reap_within(pid_t pid, double seconds) {
  const double deadline = monotonic_seconds() + seconds;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (done < 0 && errno != EINTR) return -1;
    if (monotonic_seconds() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    sleep_briefly();
  }
}

/* Runs the script with args (args[0] is the script) within `seconds`; its
 * standard output, trimmed, into output (may be NULL); its standard error
 * goes to the test's. Returns its exit status, -1 when it did not finish. */
static int run_script(const char* const* args, char* output, size_t size, double seconds) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) fail_msg("pipe: %s", strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) fail_msg("fork: %s", strerror(errno));
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    dup2(pipe_fds[1], 1);
    execv(args[0], (char* const*)args);
    _exit(127);
  }
  close(pipe_fds[1]);
  size_t used = 0;
  char sink[256];
  const double deadline = monotonic_seconds() + seconds;
  for (;;) {
    struct pollfd readable = {pipe_fds[0], POLLIN, 0};
    const double left = deadline - monotonic_seconds();
    if (left <= 0 || poll(&readable, 1, (int)(left * 1000) + 1) <= 0) break;
    char* into = output != NULL && used + 1 < size ? output + used : sink;
    const size_t room = output != NULL && used + 1 < size ? size - 1 - used : sizeof sink;
    const ssize_t got = read(pipe_fds[0], into, room);
    if (got <= 0) break; /* end of output: the script and what it started closed it */
    if (into != sink) used += (size_t)got;
  }
  close(pipe_fds[0]);
  if (output != NULL) {
    output[used] = '\0';
    while (used > 0 && (output[used - 1] == '\n' || output[used - 1] == ' ')) output[--used] = '\0';
  }
  return reap_within(pid, deadline - monotonic_seconds() > 1 ? deadline - monotonic_seconds() : 1);
}

const char* hosts_unavailable(void) {
  static char reason[1024];
  const char* args[] = {hosts_script(), "check", NULL};
  const int status = run_script(args, reason, sizeof reason, 60);
  if (status == 0) return NULL;
  if (status != 77) {
    size_t used = strlen(reason);
    snprintf(reason + used, sizeof reason - used, " (emulated-hosts check exited %d)", status);
  }
  return reason;
}

int hosts_run_group(const char* name, const struct CMUnitTest* tests, size_t count) {
  const char* reason = hosts_unavailable();
  if (reason != NULL) {
    printf("skipped: %s\n", reason);
    return 77;
  }
  return _cmocka_run_group_tests(name, tests, count, NULL, NULL);
}

/* Removes the current run; async-signal-safe (it runs in signal handlers). */
static void remove_run(void) {
  if (run_name[0] == '\0' || getpid() != owner_pid) return;
  if (cleanup_hook != NULL) cleanup_hook();
  const pid_t pid = fork();
  if (pid == 0) {
    char* const args[] = {script_path, (char*)"down", run_name, NULL};
    execv(script_path, args);
    _exit(127);
  }
  if (pid > 0) reap_within(pid, 60);
  run_name[0] = '\0';
}

static void remove_run_and_die(int signal_number) {
  remove_run();
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

static void install_handlers(void) {
  if (handlers_installed) return;
  handlers_installed = 1;
  atexit(remove_run);
  const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; ++i) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = remove_run_and_die;
    sigfillset(&action.sa_mask);
    sigaction(fatal[i], &action, NULL);
  }
}

void hosts_on_cleanup(void (*hook)(void)) { cleanup_hook = hook; }

static int next_socket_buffer; /* for the next hosts_up; 0: the kernel's default */

void hosts_limit_socket_buffers(int bytes) { next_socket_buffer = bytes; }

void hosts_up(int count) {
  const int socket_buffer = next_socket_buffer;
  next_socket_buffer = 0;
  if (run_name[0] != '\0') fail_msg("hosts_up: run %s is still up", run_name);
  snprintf(script_path, sizeof script_path, "%s", hosts_script());
  owner_pid = getpid();
  install_handlers();
  char count_text[16], owner_text[16], buffer_text[16];
  snprintf(count_text, sizeof count_text, "%d", count);
  snprintf(owner_text, sizeof owner_text, "%d", (int)owner_pid);
  snprintf(buffer_text, sizeof buffer_text, "%d", socket_buffer);
  const char* args[] = {script_path, "up", count_text, "--owner", owner_text,
                        socket_buffer > 0 ? "--socket-buffer" : NULL, buffer_text, NULL};
  char output[256];
  /* Signals wait until the name is known, so that none leaves a run behind. */
  sigset_t fatal, previous;
  sigfillset(&fatal);
  sigprocmask(SIG_BLOCK, &fatal, &previous);
  const int status = run_script(args, output, sizeof output, 120);
  if (status == 0 && strncmp(output, "dh", 2) == 0 && strlen(output) < sizeof run_name) {
    snprintf(run_name, sizeof run_name, "%s", output);
  }
  sigprocmask(SIG_SETMASK, &previous, NULL);
  if (run_name[0] == '\0') fail_msg("emulated-hosts up %d exited %d: %s", count, status, output);
}

void hosts_down(void) { remove_run(); }

const char* hosts_run(void) {
  if (run_name[0] == '\0') fail_msg("no emulated hosts are up");
  return run_name;
}

/* `emulated-hosts COMMAND RUN HOST [argument]`, which must succeed. */
static void host_command(const char* command, int host, const char* argument, char* output, size_t size) {
  char host_text[16];
  snprintf(host_text, sizeof host_text, "%d", host);
  const char* args[] = {script_path, command, hosts_run(), host_text, argument, NULL};
  const int status = run_script(args, output, size, 60);
  if (status != 0) fail_msg("emulated-hosts %s %s %d %s exited %d", command, run_name, host, argument ? argument : "", status);
}

void hosts_address(int host, char* address, size_t size) { host_command("address", host, NULL, address, size); }

void hosts_hostname(int host, char* hostname, size_t size) { host_command("hostname", host, NULL, hostname, size); }

void hosts_link(int host, int up) { host_command("link", host, up ? "up" : "down", NULL, 0); }

void hosts_kill(int host) { host_command("kill", host, NULL, NULL, 0); }
