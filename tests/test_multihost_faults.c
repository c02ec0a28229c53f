/* Faults across emulated hosts, in the middle of a loop of 16 MiB
 * all-reduces with a 5 s deadline: a host's link cut (a partition: both sides
 * survive and must see the other lost), one rank SIGKILLed, every rank of a
 * host killed at once. Every survivor's call must fail with
 * DIST_ERR_PEER_FAILED or DIST_ERR_TIMEOUT within the deadline plus 2 s of the
 * fault, its message naming a lost task and that task's host; a later call
 * fails too; dist_context_destroy returns and the rank exits normally (no
 * signal, no abort). Skips (77), saying why, where emulated hosts cannot be
 * made (not root). */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "multihost/hosts.h"
#include "multihost/layout.h"
#include "test_support.h"

enum { kDeadlineMs = 5000 };
/* A bound on everything after the fault: the deadline, the later call's
 * deadline, dist_context_destroy, exit; past it the ranks are killed. */
static const double kFinishSeconds = 60;

enum fault_kind { kCutLink, kKillRank, kKillHost };

struct fault {
  const struct layout* layout;
  enum fault_kind kind;
  int target;   /* the host whose link is cut or whose ranks are killed; the rank killed */
  int delay_ms; /* after every rank is looping: lands in the middle of a call */
};

static const struct layout k2x1 = {"2x1", 2, {0, 1}};
static const struct layout k2x2 = {"2x2", 4, {0, 0, 1, 1}};
static const struct layout k3plus1 = {"3+1", 4, {0, 0, 0, 1}};
static const struct layout k3x1 = {"3x1", 3, {0, 1, 2}};
static const struct layout k4x1 = {"4x1", 4, {0, 1, 2, 3}};

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The first line UCX printed itself ("[time] [host:pid:thread] file.c:N UCX
 * LEVEL ..." or an assertion), not through the library's log, which prefixes
 * every line with "libdistribute["; NULL when there is none. */
static const char* line_from_ucx_itself(const char* output) {
  for (const char* line = output; line != NULL && *line != '\0';) {
    const char* end = strchr(line, '\n');
    const size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
    const int native = line[0] == '[' && length > 1 && line[1] >= '0' && line[1] <= '9';
    for (size_t i = 0; native && i + 3 <= length; ++i) {
      if (strncmp(line + i, "UCX", 3) == 0) return line;
      if (i + 9 <= length && strncmp(line + i, "Assertion", 9) == 0) return line;
    }
    line = end != NULL ? end + 1 : NULL;
  }
  return NULL;
}

/* Whether `rank` is lost to `survivor` after the fault. */
static int is_lost(const struct fault* fault, int survivor, int rank) {
  const int* host_of = fault->layout->host_of;
  switch (fault->kind) {
    case kKillRank: return rank == fault->target;
    case kKillHost: return host_of[rank] == fault->target;
    default: return (host_of[rank] == fault->target) != (host_of[survivor] == fault->target);
  }
}

static int survives(const struct fault* fault, int rank) {
  return fault->kind == kCutLink || !is_lost(fault, rank, rank);
}

/* The task a survivor's message names ("worker:K"), among those it lost; -1 if none. */
static int named_lost_task(const struct fault* fault, int survivor, const char* message) {
  for (int k = 0; k < fault->layout->ranks; ++k) {
    char task[32];
    snprintf(task, sizeof task, "worker:%d", k);
    if (is_lost(fault, survivor, k) && strstr(message, task) != NULL) return k;
  }
  return -1;
}

static void run_fault(const struct fault* fault) {
  const char* worker = getenv("DIST_MULTIHOST_WORKER");
  if (worker == NULL) fail_msg("DIST_MULTIHOST_WORKER is not set (run through ctest)");
  char deadline[16];
  snprintf(deadline, sizeof deadline, "%d", kDeadlineMs);
  const char* args[] = {"fault", deadline, NULL};
  const struct layout* layout = fault->layout;
  struct launch* launch = layout_start(layout, worker, args, NULL);
  layout_wait_for("looping", 90);
  usleep((useconds_t)fault->delay_ms * 1000);
  const double fault_start = seconds_now();
  if (fault->kind == kCutLink) hosts_link(fault->target, 0);
  else if (fault->kind == kKillHost) hosts_kill(fault->target);
  else if (launch->pids[fault->target] > 0) kill(launch->pids[fault->target], SIGKILL); /* never pid 0: our group */
  const double fault_done = seconds_now();
  layout_finish(kFinishSeconds);

  /* Every survivor's outcome first, so that a failure shows them all. */
  int named[kMaxRanks] = {0};
  double after[kMaxRanks] = {0};
  char messages[kMaxRanks][1024];
  for (int r = 0; r < layout->ranks; ++r) {
    char output[65536];
    layout_output(r, output, sizeof output);
    const char* failed = strstr(output, "failed DIST_");
    double at = 0;
    messages[r][0] = '\0';
    if (failed != NULL) sscanf(failed, "failed %*s at %lf after %*d calls: %1023[^\n]", &at, messages[r]);
    after[r] = failed != NULL ? at - fault_done : -1000;
    named[r] = named_lost_task(fault, r, messages[r]);
    if (!survives(fault, r)) {
      print_message("rank %d on host %d exited %d (lost)\n", r, layout->host_of[r], launch->exit_codes[r]);
    } else {
      print_message("rank %d on host %d exited %d; failed %.2f s after the fault: %s\n", r, layout->host_of[r],
                    launch->exit_codes[r], after[r], messages[r]);
    }
  }
  for (int r = 0; r < layout->ranks; ++r) {
    char output[65536];
    layout_output(r, output, sizeof output);
    if (!survives(fault, r)) {
      if (launch->exit_codes[r] != -SIGKILL) fail_msg("rank %d exited %d, not killed:\n%s", r, launch->exit_codes[r], output);
      continue;
    }
    if (launch->exit_codes[r] != 0) fail_msg("survivor %d exited %d:\n%s", r, launch->exit_codes[r], output);
    if (after[r] == -1000) fail_msg("survivor %d printed no failure:\n%s", r, output);
    if (after[r] < fault_start - fault_done) fail_msg("survivor %d failed before the fault:\n%s", r, output);
    if (after[r] > kDeadlineMs / 1000.0 + 2) {
      fail_msg("survivor %d failed %.2f s after the fault, past the deadline + 2 s:\n%s", r, after[r], output);
    }
    if (strstr(output, "destroyed") == NULL) fail_msg("survivor %d: dist_context_destroy did not return:\n%s", r, output);
    if (named[r] < 0) fail_msg("survivor %d's message names no task it lost: %s", r, messages[r]);
    const char* ucx_line = line_from_ucx_itself(output);
    if (ucx_line != NULL) fail_msg("survivor %d: UCX wrote to stderr itself, not through the library's log:\n%s", r, output);
  }
  /* Last, so that a library naming tasks without their hosts fails only here. */
  for (int r = 0; r < layout->ranks; ++r) {
    if (!survives(fault, r)) continue;
    char hostname[64];
    hosts_hostname(layout->host_of[named[r]], hostname, sizeof hostname);
    if (strstr(messages[r], hostname) == NULL) {
      fail_msg("survivor %d's message names worker:%d but not its host %s: %s", r, named[r], hostname, messages[r]);
    }
  }
}

static void test_fault(void** state) { run_fault(*state); }

static const struct fault kLinkCut2x1 = {&k2x1, kCutLink, 1, 300};
static const struct fault kLinkCut2x2 = {&k2x2, kCutLink, 0, 450};
static const struct fault kLinkCut4x1 = {&k4x1, kCutLink, 2, 200};
static const struct fault kRankKilled3x1 = {&k3x1, kKillRank, 1, 250};
/* The victim shares its host with a survivor. */
static const struct fault kRankKilled2x2 = {&k2x2, kKillRank, 1, 350};
static const struct fault kHostKilled2x2 = {&k2x2, kKillHost, 1, 400};
/* Three ranks at once; the survivor is alone on its host. */
static const struct fault kHostKilled3plus1 = {&k3plus1, kKillHost, 0, 150};

#define FAULT_TEST(name, fault) {name, test_fault, NULL, layout_teardown, (void*)&(fault)}

int main(void) {
  const struct CMUnitTest tests[] = {
      FAULT_TEST("link cut, 2x1", kLinkCut2x1),
      FAULT_TEST("link cut, 2x2", kLinkCut2x2),
      FAULT_TEST("link cut, 4x1", kLinkCut4x1),
      FAULT_TEST("rank killed, 3x1", kRankKilled3x1),
      FAULT_TEST("rank killed, 2x2", kRankKilled2x2),
      FAULT_TEST("host killed, 2x2", kHostKilled2x2),
      FAULT_TEST("host killed, 3+1", kHostKilled3plus1),
  };
  return hosts_run_suite("multihost_faults", tests);
}
