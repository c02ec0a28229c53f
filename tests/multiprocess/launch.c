#define _GNU_SOURCE
#include "launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A port below Linux's ephemeral range (32768-60999 by default): ports picked
 * there can be taken again by any outgoing connection or UCX listener between
 * this check and the rank's bind. */
static int free_port(void) {
  static unsigned seed = 0;
  if (seed == 0) seed = (unsigned)getpid() ^ (unsigned)time(NULL);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    int port = 20000 + (int)(rand_r(&seed) % 12000);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int bound = fd >= 0 && bind(fd, (struct sockaddr*)&address, sizeof address) == 0;
    if (fd >= 0) close(fd);
    if (bound) return port;
  }
  fprintf(stderr, "free_port: no free port in 20000-31999\n");
  exit(2);
}

void launch_prepare(struct launch* launch, int n) {
  memset(launch, 0, sizeof *launch);
  launch->n = n;
  for (int r = 0; r < n; ++r) {
    int port;
    int unique;
    do {
      port = free_port();
      unique = 1;
      for (int k = 0; k < r; ++k) unique = unique && launch->ports[k] != port;
    } while (!unique);
    launch->ports[r] = port;
    snprintf(launch->addresses[r], sizeof launch->addresses[r], "127.0.0.1");
    snprintf(launch->output[r], sizeof launch->output[r], "/tmp/dist-test-%d-rank%d.log", (int)getpid(), r);
    unlink(launch->output[r]); /* an earlier launch's output is not this one's */
  }
}

void launch_rank(struct launch* launch, int rank, const char* token, const char* const* extra_env,
                 const char* const* args) {
  char tf_config[2048];
  int used = snprintf(tf_config, sizeof tf_config, "TF_CONFIG={\"cluster\": {\"worker\": [");
  for (int r = 0; r < launch->n; ++r) {
    used += snprintf(tf_config + used, sizeof tf_config - (size_t)used, "%s\"%s:%d\"", r ? ", " : "",
                     launch->addresses[r], launch->ports[r]);
  }
  snprintf(tf_config + used, sizeof tf_config - (size_t)used, "]}, \"task\": {\"type\": \"worker\", \"index\": %d}}",
           rank);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    int fd = open(launch->output[rank], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    putenv(tf_config);
    char token_variable[512];
    snprintf(token_variable, sizeof token_variable, "DIST_CLUSTER_TOKEN=%s", token);
    putenv(token_variable);
    unsetenv("DIST_CLUSTER_TOKEN_FILE");
    for (const char* const* e = extra_env; e && *e; ++e) putenv((char*)*e);
    execv(args[0], (char* const*)args);
    perror("execv");
    _exit(127);
  }
  launch->pids[rank] = pid;
}

int launch_wait(struct launch* launch, double seconds) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  int remaining = 0;
  for (int r = 0; r < launch->n; ++r) remaining += launch->pids[r] > 0;
  int killed = 0;
  while (remaining > 0) {
    for (int r = 0; r < launch->n; ++r) {
      if (launch->pids[r] <= 0) continue;
      int status = 0;
      if (waitpid(launch->pids[r], &status, WNOHANG) == launch->pids[r]) {
        launch->exit_codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        launch->pids[r] = 0;
        --remaining;
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    double elapsed = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
    if (remaining > 0 && elapsed > seconds && !killed) {
      for (int r = 0; r < launch->n; ++r) {
        if (launch->pids[r] > 0) kill(launch->pids[r], SIGKILL);
      }
      killed = 1;
    }
    if (remaining > 0) usleep(10 * 1000);
  }
  return killed ? -1 : 0;
}

const char* launch_output(const struct launch* launch, int rank) {
  static char text[65536];
  text[0] = '\0';
  FILE* f = fopen(launch->output[rank], "r");
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
  }
  return text;
}
