#define _GNU_SOURCE
#include "multiprocess/wrong_token.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_support.h"

static const char* kRightToken = "DIST_CLUSTER_TOKEN=wrong-token-test-right-0123456789";
static const char* kWrongToken = "DIST_CLUSTER_TOKEN=wrong-token-test-other-9876543210";
/* A connect deadline the refusal must come well before. */
static const char* kMinute = "DIST_TEST_CONNECT_MS=60000";
/* The wrong listener's: it must fail at this deadline, not before. */
enum { kListenerDeadlineS = 8 };
static const double kRefusedWithinS = 2.0;

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether `pid` sees a TCP socket listening on `port` (its own network
 * namespace's /proc/PID/net/tcp{,6}: the same code on loopback and on an
 * emulated host). */
static int is_listening(pid_t pid, int port) {
  const char* files[] = {"tcp", "tcp6"};
  int found = 0;
  for (size_t f = 0; f < 2 && !found; ++f) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/net/%s", (int)pid, files[f]);
    FILE* table = fopen(path, "r");
    if (table == NULL) continue;
    while (!found && fgets(line, sizeof line, table) != NULL) {
      unsigned local_port = 0, state = 0;
      /* "  sl  local_address rem_address   st ...": "0: 0100007F:5B9B 00000000:0000 0A" */
      if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &local_port, &state) == 2) {
        found = (int)local_port == port && state == 0x0A; /* TCP_LISTEN */
      }
    }
    fclose(table);
  }
  return found;
}

static void fail_with_output(const struct launch* launch, int rank, const char* why) {
  fail_msg("rank %d (%s:%d): %s; its output:\n%s", rank, launch->addresses[rank], launch->ports[rank], why,
           launch_output(launch, rank));
}

/* Waits until rank r listens at its port; fails if it exits first or takes a minute. */
static void wait_listening(struct launch* launch, int rank) {
  const double until = seconds_now() + 60;
  while (!is_listening(launch->pids[rank], launch->ports[rank])) {
    int status = 0;
    if (waitpid(launch->pids[rank], &status, WNOHANG) == launch->pids[rank]) {
      launch->pids[rank] = 0;
      fail_with_output(launch, rank, "exited before it listened");
    }
    if (seconds_now() > until) fail_with_output(launch, rank, "did not listen within 60 s");
    usleep(10 * 1000);
  }
}

/* Waits up to `seconds` for rank r to exit and records its exit code; returns
 * how long it took, or fails the test (the teardown kills it). */
static double wait_exit(struct launch* launch, int rank, double started, double seconds) {
  for (;;) {
    int status = 0;
    if (waitpid(launch->pids[rank], &status, WNOHANG) == launch->pids[rank]) {
      launch->exit_codes[rank] = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      launch->pids[rank] = 0;
      return seconds_now() - started;
    }
    if (seconds_now() - started > seconds) fail_with_output(launch, rank, "still running");
    usleep(10 * 1000);
  }
}

/* The line of `output` that holds `needle` (copied into line), or fails. */
static void line_with(const struct launch* launch, int rank, const char* needle, char* line, size_t size) {
  const char* output = launch_output(launch, rank);
  const char* found = strstr(output, needle);
  if (found == NULL) {
    char why[256];
    snprintf(why, sizeof why, "printed no \"%s\"", needle);
    fail_with_output(launch, rank, why);
  }
  while (found > output && found[-1] != '\n') --found;
  snprintf(line, size, "%.*s", (int)strcspn(found, "\n"), found);
}

/* How many times `text` holds "ADDRESS:PORT tried and failed authentication (REASON)". */
static int refusals_named(const char* text, const char* address, const char* reason) {
  char tail[160];
  snprintf(tail, sizeof tail, " tried and failed authentication (%s)", reason);
  int count = 0;
  const size_t length = strlen(address);
  for (const char* at = strstr(text, address); at != NULL; at = strstr(at + 1, address)) {
    const char* port = at + length;
    if (*port != ':') continue;
    const size_t digits = strspn(port + 1, "0123456789");
    if (digits > 0 && strncmp(port + 1 + digits, tail, strlen(tail)) == 0) ++count;
  }
  return count;
}

/* Starts rank r with `token` and waits for it to be refused at once: exit 3
 * (collective_worker's failed join), DIST_ERR_AUTH, naming rank 0. */
static void expect_refused(struct launch* launch, start_rank_fn start, int rank, const char* token) {
  const char* env[] = {token, kMinute, NULL};
  const double started = seconds_now();
  start(launch, rank, env);
  const double took = wait_exit(launch, rank, started, 60);
  char line[1024];
  line_with(launch, rank, "context after ", line, sizeof line);
  print_message("rank %d refused after %.2f s: %s\n", rank, took, line);
  if (launch->exit_codes[rank] != 3) fail_with_output(launch, rank, "did not fail to join (exit code 3)");
  char listener[96];
  snprintf(listener, sizeof listener, "worker:0 (%s:%d)", launch->addresses[0], launch->ports[0]);
  if (strstr(line, "DIST_ERR_AUTH") == NULL || strstr(line, "refused: the cluster token differs") == NULL ||
      strstr(line, listener) == NULL) {
    fail_msg("rank %d's error is not DIST_ERR_AUTH naming %s and the token: %s", rank, listener, line);
  }
  if (took > kRefusedWithinS) {
    fail_msg("rank %d was refused %.2f s after it started, not within %.0f s: %s", rank, took, kRefusedWithinS, line);
  }
}

void expect_wrong_connector_refused(struct launch* launch, start_rank_fn start, strangers_fn strangers) {
  assert_int_equal(launch->n, 2);
  const char* right[] = {kRightToken, kMinute, NULL};
  start(launch, 0, right);
  wait_listening(launch, 0);
  if (strangers != NULL) strangers(launch, 0);
  expect_refused(launch, start, 1, kWrongToken);

  /* Nothing changed on rank 0: the task it waits for joins, and the collectives are exact. */
  start(launch, 1, right);
  if (launch_wait(launch, 180) != 0) {
    for (int r = 0; r < 2; ++r) print_message("rank %d output:\n%s\n", r, launch_output(launch, r));
    fail_msg("the right rank 1 and rank 0 did not finish within 180 s");
  }
  for (int r = 0; r < 2; ++r) {
    if (launch->exit_codes[r] != 0) fail_with_output(launch, r, "did not succeed after the refused peer");
    char line[256];
    line_with(launch, r, "quick: ", line, sizeof line);
    if (strstr(line, " 0 failed") == NULL) fail_with_output(launch, r, "collectives failed");
  }
  /* Rank 0 said at once whom it refused. */
  char warning[1024];
  line_with(launch, 0, ": the cluster token differs", warning, sizeof warning);
  char from[96];
  snprintf(from, sizeof from, "bootstrap: refused a connection from %s:", launch->addresses[1]);
  if (strstr(warning, from) == NULL) {
    fail_msg("rank 0's warning does not name %s and the token: %s", launch->addresses[1], warning);
  }
}

void expect_wrong_listener_named(struct launch* launch, start_rank_fn start) {
  char deadline[48];
  snprintf(deadline, sizeof deadline, "DIST_TEST_CONNECT_MS=%d", kListenerDeadlineS * 1000);
  const char* wrong[] = {kWrongToken, deadline, NULL};
  const double listener_started = seconds_now();
  start(launch, 0, wrong);
  wait_listening(launch, 0);
  for (int r = 1; r < launch->n; ++r) expect_refused(launch, start, r, kRightToken);

  const double took = wait_exit(launch, 0, listener_started, kListenerDeadlineS + 2.0);
  char line[2048];
  line_with(launch, 0, "context after ", line, sizeof line);
  print_message("rank 0 failed after %.2f s: %s\n", took, line);
  if (launch->exit_codes[0] != 3 || strstr(line, "DIST_ERR_TIMEOUT") == NULL) {
    fail_with_output(launch, 0, "did not fail with DIST_ERR_TIMEOUT at its connect deadline");
  }
  if (took < kListenerDeadlineS - 1) fail_msg("rank 0 gave up %.2f s after it started, before its deadline", took);
  /* The deadline as it was set, not the seconds left when the bootstrap began. */
  char within[64];
  snprintf(within, sizeof within, "did not connect within %d s", kListenerDeadlineS);
  if (strstr(line, within) == NULL) fail_msg("rank 0's error does not say \"%s\": %s", within, line);
  for (int r = 1; r < launch->n; ++r) {
    char task[32];
    snprintf(task, sizeof task, "worker:%d (", r);
    if (strstr(line, task) == NULL) fail_msg("rank 0's error does not name worker:%d: %s", r, line);
  }
  /* One refusal per connector, each at its own address (on loopback all share one). */
  for (int r = 1; r < launch->n; ++r) {
    int expected = 0;
    for (int k = 1; k < launch->n; ++k) expected += strcmp(launch->addresses[k], launch->addresses[r]) == 0;
    const int named = refusals_named(line, launch->addresses[r], "the cluster token differs");
    if (named != expected) {
      fail_msg("rank 0's error names %d connections from %s as failing authentication, expected %d: %s", named,
               launch->addresses[r], expected, line);
    }
  }
}
