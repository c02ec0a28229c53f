/* Starts the ranks of a multi-process test, each with its own TF_CONFIG and
 * the cluster token, and always reaps them: a rank still running at the
 * deadline is killed by PID. Ranks listen on loopback unless the test gives
 * them other addresses (the multi-host suites: one per emulated host). */
#ifndef DIST_TEST_LAUNCH_H
#define DIST_TEST_LAUNCH_H

#include <sys/types.h>

enum { kMaxRanks = 8 };

struct launch {
  int n;
  pid_t pids[kMaxRanks];
  int ports[kMaxRanks];
  char addresses[kMaxRanks][48]; /* where rank r listens: "127.0.0.1" unless set after launch_prepare */
  char output[kMaxRanks][256]; /* file holding rank r's stdout and stderr */
  int exit_codes[kMaxRanks];   /* -signal when killed by one */
};

/* Picks n free ports, all on loopback; does not start anything. */
void launch_prepare(struct launch* launch, int n);

/* Starts rank r: `worker args...` with TF_CONFIG and DIST_CLUSTER_TOKEN=token
 * (plus extra "NAME=value" entries, NULL-terminated, may be NULL). */
void launch_rank(struct launch* launch, int rank, const char* token, const char* const* extra_env,
                 const char* const* args);

/* Waits for every started rank until `seconds` pass, then kills the rest.
 * Returns 0 when all exited by themselves. */
int launch_wait(struct launch* launch, double seconds);

/* The captured output of rank r (static buffer, truncated). */
const char* launch_output(const struct launch* launch, int rank);

#endif /* DIST_TEST_LAUNCH_H */
