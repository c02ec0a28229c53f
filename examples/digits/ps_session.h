/* What the parameter-server examples share: joining the cluster as a worker
 * under a PARAMETER_SERVER strategy, their command line, retrying a step while
 * a parameter server is down, and the chief's checkpoint per epoch. */
#ifndef DIGITS_PS_SESSION_H
#define DIGITS_PS_SESSION_H

#include <stdint.h>

#include <distribute/c_api.h>

struct ps_args {
  int epochs;                 /* positional [epochs]; default given by the example */
  const char* data_path;      /* --data FILE; default DIGITS_DEFAULT_PATH */
  const char* checkpoint_dir; /* --checkpoint-dir DIR: worker 0 saves ckpt-<epoch> there */
  int step_delay_ms;          /* --step-delay-ms MS: pause after each step (demos) */
  double retry_seconds;       /* --retry-seconds S: how long a server may stay down; default 60 */
};

/* Parses "[epochs] [--data FILE] [--checkpoint-dir DIR] [--step-delay-ms MS]
 * [--retry-seconds S]". Returns 0, or -1 after printing the usage. */
int ps_args_parse(int argc, char** argv, int default_epochs, struct ps_args* args);

struct ps_session {
  dist_cluster_t* cluster;   /* from TF_CONFIG (dist-run sets it): workers and "ps" tasks */
  dist_context_t* context;   /* the workers (and chief) only; the servers are not members */
  dist_strategy_t* strategy; /* PARAMETER_SERVER over the cluster's "ps" job */
  int32_t worker, workers;   /* this worker's index and the worker count */
  double retry_seconds;
};

/* Joins the cluster and creates the strategy. Returns 0, or -1 after printing
 * the library's message (nothing is left to close). */
int ps_session_open(struct ps_session* session, double retry_seconds);
void ps_session_close(struct ps_session* session);

/* Runs step(user_data) until it succeeds. When it fails because a parameter
 * server is unreachable (DIST_ERR_PEER_FAILED, DIST_ERR_UNAVAILABLE,
 * DIST_ERR_TIMEOUT) it prints the library's message (which names the server),
 * waits and tries again, for up to retry_seconds; once a retry succeeds it says
 * how long the server was away. Any other error is returned at once. */
dist_status_t ps_session_retry(const struct ps_session* session, const char* what, dist_status_t (*step)(void*),
                               void* user_data);

/* dist_variable_create under the session's strategy, retried as above (a
 * server may be down when a worker starts or re-creates its variables). */
dist_status_t ps_session_create_variable(const struct ps_session* session, const dist_variable_options_t* options,
                                         dist_variable_t** variable);

/* Worker 0: saves every server's shards as checkpoint `epoch` under root (with
 * retries as above) and prints where. Other workers: nothing. */
dist_status_t ps_session_checkpoint(const struct ps_session* session, const char* root, int epoch);

/* Sums values[0, n) over every worker (a collective over the workers: it also
 * waits until each has got here). */
dist_status_t ps_session_sum(const struct ps_session* session, double* values, uint64_t n);

/* Prints the status and message of a failed call and returns 1 (for main). */
int ps_session_fail(const char* what, dist_status_t status);

#endif
