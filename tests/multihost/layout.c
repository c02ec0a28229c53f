#define _GNU_SOURCE
#include "multihost/layout.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "multihost/hosts.h"
#include "test_support.h"

static const char* kToken = "multihost-test-token-0123456789abcdef";

/* The running layout: static, so that the cleanup hook (also called from a
 * signal handler) always finds it. */
static struct launch current;
static const struct layout* current_layout;

int layout_hosts(const struct layout* layout) {
  int hosts = 0;
  for (int r = 0; r < layout->ranks; ++r) hosts = layout->host_of[r] + 1 > hosts ? layout->host_of[r] + 1 : hosts;
  return hosts;
}

int layout_local_size(const struct layout* layout, int host) {
  int size = 0;
  for (int r = 0; r < layout->ranks; ++r) size += layout->host_of[r] == host;
  return size;
}

dist_comm_path_t layout_expected_path(const struct layout* layout) {
  const int hosts = layout_hosts(layout);
  if (layout->ranks == 1) return DIST_COMM_PATH_SELF;
  if (hosts == 1) return DIST_COMM_PATH_SHARED_MEMORY;
  int shared = 0; /* some host runs several ranks */
  for (int h = 0; h < hosts; ++h) shared |= layout_local_size(layout, h) > 1;
#ifdef DIST_COMM_PATH_HIERARCHICAL
  if (shared) return DIST_COMM_PATH_HIERARCHICAL;
#endif
  (void)shared;
  return DIST_COMM_PATH_POINT_TO_POINT;
}

void layout_hosts_text(const struct layout* layout, char* text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (int r = 0; r < layout->ranks && used < size; ++r) {
    used += (size_t)snprintf(text + used, size - used, "%s%d", r ? "," : "", layout->host_of[r]);
  }
}

/* SIGKILLs and reaps every rank still running (async-signal-safe enough for
 * the hosts' signal handler: kill, waitpid and sleeps). */
static void kill_ranks(void) {
  if (current.n > 0) launch_wait(&current, 0);
}

struct launch* layout_prepare(const struct layout* layout) {
  if (layout->ranks < 1 || layout->ranks > kMaxRanks) fail_msg("layout %s: %d ranks", layout->name, layout->ranks);
  layout_teardown(NULL);
  hosts_on_cleanup(kill_ranks);
  hosts_up(layout_hosts(layout));
  current_layout = layout;
  launch_prepare(&current, layout->ranks);
  for (int r = 0; r < layout->ranks; ++r) {
    hosts_address(layout->host_of[r], current.addresses[r], sizeof current.addresses[r]);
  }
  return &current;
}

void layout_start_rank(int rank, const char* program, const char* const* args, const char* const* extra_env) {
  char host[16];
  snprintf(host, sizeof host, "%d", current_layout->host_of[rank]);
  const char* argv[kMaxRanks + 32] = {hosts_script(), "exec", hosts_run(), host, "--", program};
  size_t count = 6;
  for (const char* const* a = args; a != NULL && *a != NULL && count + 1 < sizeof argv / sizeof argv[0]; ++a) {
    argv[count++] = *a;
  }
  argv[count] = NULL;
  launch_rank(&current, rank, kToken, extra_env, argv);
}

struct launch* layout_start(const struct layout* layout, const char* program, const char* const* args,
                            const char* const* extra_env) {
  return layout_start_ranks(layout, program, args, extra_env, NULL);
}

struct launch* layout_start_ranks(const struct layout* layout, const char* program, const char* const* args,
                                  const char* const* extra_env, const char* const* const* rank_env) {
  layout_prepare(layout);
  for (int r = 0; r < layout->ranks; ++r) {
    const char* env[64];
    size_t entries = 0;
    for (const char* const* e = extra_env; e != NULL && *e != NULL && entries + 1 < 64; ++e) env[entries++] = *e;
    for (const char* const* e = rank_env ? rank_env[r] : NULL; e != NULL && *e != NULL && entries + 1 < 64; ++e) {
      env[entries++] = *e;
    }
    env[entries] = NULL;
    layout_start_rank(r, program, args, env);
  }
  return &current;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Every rank's exit code and output, then fails the test with `why`. */
static void fail_with_outputs(const char* why) {
  for (int r = 0; r < current.n; ++r) {
    print_message("rank %d on host %d exited %d; output:\n%s\n", r, current_layout->host_of[r], current.exit_codes[r],
                  launch_output(&current, r));
  }
  fail_msg("layout %s: %s", current_layout->name, why);
}

static int has_exited(int rank) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  /* WNOWAIT: leaves the rank to launch_wait, which records its exit code. */
  return current.pids[rank] <= 0 ||
         (waitid(P_PID, (id_t)current.pids[rank], &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0);
}

void layout_wait_for(const char* text, double seconds) {
  const double deadline = seconds_now() + seconds;
  for (;;) {
    int waiting = 0;
    for (int r = 0; r < current.n; ++r) {
      if (strstr(launch_output(&current, r), text) != NULL) continue;
      if (has_exited(r)) {
        char why[128];
        launch_wait(&current, 0);
        snprintf(why, sizeof why, "rank %d exited before printing \"%s\"", r, text);
        fail_with_outputs(why);
      }
      waiting = 1;
    }
    if (!waiting) return;
    if (seconds_now() > deadline) {
      char why[128];
      launch_wait(&current, 0);
      snprintf(why, sizeof why, "not every rank printed \"%s\" within %.0f s", text, seconds);
      fail_with_outputs(why);
    }
    usleep(20 * 1000);
  }
}

void layout_finish(double seconds) {
  if (launch_wait(&current, seconds) != 0) {
    char why[128];
    snprintf(why, sizeof why, "ranks still running after %.0f s were killed", seconds);
    fail_with_outputs(why);
  }
}

void layout_expect_success(const char* what) {
  for (int r = 0; r < current.n; ++r) {
    if (current.exit_codes[r] != 0) {
      char why[160];
      snprintf(why, sizeof why, "%s: rank %d exited %d", what, r, current.exit_codes[r]);
      fail_with_outputs(why);
    }
  }
}

void layout_output(int rank, char* text, size_t size) { snprintf(text, size, "%s", launch_output(&current, rank)); }

int layout_teardown(void** state) {
  (void)state;
  kill_ranks();
  for (int r = 0; r < current.n; ++r) unlink(current.output[r]);
  memset(&current, 0, sizeof current);
  hosts_down();
  return 0;
}
