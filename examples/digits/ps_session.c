#include "ps_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digits.h"

static const char kUsage[] =
    "usage: %s [epochs] [--data FILE] [--checkpoint-dir DIR] [--step-delay-ms MS] [--retry-seconds S]\n"
    "Runs as a worker of a cluster with a \"ps\" job: dist-run -n 2 --ps 2 --ps-server -- %s\n";

/* One flag and its value; 0, or -1 when the flag is unknown or the value bad. */
static int parse_flag(const char* flag, const char* value, struct ps_args* args) {
  char* end = NULL;
  if (strcmp(flag, "--data") == 0) {
    args->data_path = value;
  } else if (strcmp(flag, "--checkpoint-dir") == 0) {
    args->checkpoint_dir = value;
  } else if (strcmp(flag, "--step-delay-ms") == 0) {
    args->step_delay_ms = (int)strtol(value, &end, 10);
    if (*end != '\0' || args->step_delay_ms < 0) return -1;
  } else if (strcmp(flag, "--retry-seconds") == 0) {
    args->retry_seconds = strtod(value, &end);
    if (*end != '\0' || !(args->retry_seconds > 0)) return -1;
  } else {
    return -1;
  }
  return 0;
}

int ps_args_parse(int argc, char** argv, int default_epochs, struct ps_args* args) {
  memset(args, 0, sizeof *args);
  args->epochs = default_epochs;
  args->data_path = DIGITS_DEFAULT_PATH;
  args->retry_seconds = 60;
  int ok = 1;
  for (int i = 1; ok && i < argc; ++i) {
    if (argv[i][0] == '-') {
      ok = i + 1 < argc && parse_flag(argv[i], argv[i + 1], args) == 0;
      ++i;
    } else {
      char* end = NULL;
      args->epochs = (int)strtol(argv[i], &end, 10);
      ok = *end == '\0' && args->epochs >= 1;
    }
  }
  if (ok) return 0;
  fprintf(stderr, kUsage, argv[0], argv[0]);
  return -1;
}

int ps_session_fail(const char* what, dist_status_t status) {
  fprintf(stderr, "%s failed: %s: %s\n", what, dist_status_string(status), dist_last_error());
  return 1;
}

int ps_session_open(struct ps_session* session, double retry_seconds) {
  memset(session, 0, sizeof *session);
  session->retry_seconds = retry_seconds;
  const char* step = "resolving the cluster";
  dist_status_t status = dist_cluster_resolve(NULL, &session->cluster);
  if (status == DIST_OK) {
    step = "joining the workers";
    status = dist_context_create(session->cluster, NULL, &session->context);
  }
  if (status == DIST_OK) {
    step = "creating the PARAMETER_SERVER strategy";
    dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
    options.field_mask = DIST_STRATEGY_OPT_KIND;
    options.kind = DIST_STRATEGY_PARAMETER_SERVER;
    status = dist_strategy_create(session->context, &options, &session->strategy);
  }
  if (status == DIST_OK) status = dist_strategy_worker_index(session->strategy, &session->worker, &session->workers);
  if (status == DIST_OK) return 0;
  ps_session_fail(step, status);
  ps_session_close(session);
  return -1;
}

void ps_session_close(struct ps_session* session) {
  dist_strategy_destroy(session->strategy);
  dist_context_destroy(session->context);
  dist_cluster_destroy(session->cluster);
  memset(session, 0, sizeof *session);
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int server_unreachable(dist_status_t status) {
  return status == DIST_ERR_PEER_FAILED || status == DIST_ERR_UNAVAILABLE || status == DIST_ERR_TIMEOUT;
}

dist_status_t ps_session_retry(const struct ps_session* session, const char* what, dist_status_t (*step)(void*),
                               void* user_data) {
  dist_status_t status = step(user_data);
  if (status == DIST_OK || !server_unreachable(status)) return status;
  const double first_failure = now_seconds();
  printf("worker %d: %s failed: %s: %s\n", (int)session->worker, what, dist_status_string(status), dist_last_error());
  printf("worker %d: waiting for the server (retrying every 0.5 s for up to %.0f s)\n", (int)session->worker,
         session->retry_seconds);
  fflush(stdout);
  int attempts = 1;
  while (server_unreachable(status) && now_seconds() - first_failure < session->retry_seconds) {
    const struct timespec pause = {0, 500 * 1000 * 1000};
    nanosleep(&pause, NULL);
    status = step(user_data);
    ++attempts;
  }
  if (status == DIST_OK) {
    printf("worker %d: %s succeeded after %d attempts: reconnected after %.1f s\n", (int)session->worker, what,
           attempts, now_seconds() - first_failure);
  } else {
    printf("worker %d: %s: giving up after %d attempts: %s: %s\n", (int)session->worker, what, attempts,
           dist_status_string(status), dist_last_error());
  }
  fflush(stdout);
  return status;
}

struct create_call {
  dist_strategy_t* strategy;
  const dist_variable_options_t* options;
  dist_variable_t** variable;
};

static dist_status_t create_variable(void* user_data) {
  struct create_call* call = user_data;
  return dist_variable_create(call->strategy, call->options, call->variable);
}

dist_status_t ps_session_create_variable(const struct ps_session* session, const dist_variable_options_t* options,
                                         dist_variable_t** variable) {
  struct create_call call = {session->strategy, options, variable};
  char what[160];
  snprintf(what, sizeof what, "creating variable '%s'", options->name);
  return ps_session_retry(session, what, create_variable, &call);
}

struct checkpoint_call {
  const struct ps_session* session;
  const char* root;
  int epoch;
  char* path;
};

static dist_status_t save_checkpoint(void* user_data) {
  struct checkpoint_call* call = user_data;
  dist_checkpoint_options_t options = DIST_CHECKPOINT_OPTIONS_INIT;
  options.field_mask = DIST_CHECKPOINT_OPT_TIMEOUT_MS;
  options.timeout_ms = 30000;
  return dist_checkpoint_save(call->session->cluster, call->root, call->epoch, &options, &call->path);
}

dist_status_t ps_session_checkpoint(const struct ps_session* session, const char* root, int epoch) {
  if (session->worker != 0 || root == NULL) return DIST_OK;
  struct checkpoint_call call = {session, root, epoch, NULL};
  const dist_status_t status = ps_session_retry(session, "saving the checkpoint", save_checkpoint, &call);
  if (status == DIST_OK) {
    printf("worker 0: epoch %d: saved checkpoint %s\n", epoch, call.path);
    fflush(stdout);
    dist_string_free(call.path);
  }
  return status;
}

dist_status_t ps_session_sum(const struct ps_session* session, double* values, uint64_t n) {
  dist_comm_t* world = NULL;
  dist_status_t status = dist_comm_world(session->context, &world);
  if (status != DIST_OK) return status;
  const dist_buffer_t buffer = {values, n, DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
  return dist_all_reduce(world, NULL, &buffer, DIST_OP_SUM, NULL); /* in place */
}
