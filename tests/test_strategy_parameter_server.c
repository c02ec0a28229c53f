/* The PARAMETER_SERVER strategy through the C ABI, against real dist-server
 * processes (2 ps tasks) on loopback. This process is worker 0; worker 1 is
 * this same program started again with "--worker MODE CLUSTER_JSON ...".
 *
 * Checked against references computed here: placement (round robin, greedy,
 * partitioned, colocated; worker 1 computes the same), every dense update and
 * every server optimizer (and the workers' Adagrad, bit for bit the servers'),
 * integer assign_add from two workers summing exactly, synchronous rounds and
 * the staleness bound, sparse rows, checkpoints saved through strategy
 * variables and restored onto another number of servers, a ps task killed and
 * restarted from its checkpoint, and bad input. Every process started here is
 * killed by PID at the end of its test.
 *
 * One file past 500 lines: every case shares the dist-server fixture and the
 * re-started worker 1, whose modes this file's main dispatches. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "multiprocess/launch.h"
#include "optimizer_options.h"
#include "strategy_test_support.h"

static const char kToken[] = "ps-strategy-test-token";

enum { kMaxStarted = 16 };

/* Every process a test starts, so that the teardown kills what a failed check left. */
static pid_t started[kMaxStarted];
static int num_started;

/* The two shared servers (ports[0], ports[1]) and the worker addresses
 * (ports[2], ports[3]; nothing listens there, the cluster only names them). */
static struct launch ports;
static pid_t shared_servers[2];

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void remember(pid_t pid) {
  if (num_started < kMaxStarted) started[num_started++] = pid;
}

static void kill_pid(pid_t pid) {
  if (pid <= 0) return;
  if (kill(pid, SIGKILL) == 0) waitpid(pid, NULL, 0);
  for (int i = 0; i < num_started; ++i) {
    if (started[i] == pid) started[i] = 0;
  }
}

static void kill_started(void) {
  for (int i = 0; i < num_started; ++i) kill_pid(started[i]);
  num_started = 0;
}

/* Every log file the suite writes, removed when it ends. */
enum { kMaxLogs = 32 };
static char logs[kMaxLogs][256];
static int num_logs;

static void log_path(char* out, size_t size, const char* what, int port) {
  snprintf(out, size, "/tmp/dist-ps-strategy-%d-%s-%d.log", (int)getpid(), what, port);
  for (int i = 0; i < num_logs; ++i) {
    if (strcmp(logs[i], out) == 0) return;
  }
  if (num_logs < kMaxLogs) snprintf(logs[num_logs++], sizeof logs[0], "%s", out);
}

static bool file_contains(const char* path, const char* needle) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return false;
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return strstr(text, needle) != NULL;
}

/* Starts dist-server at 127.0.0.1:port (with a checkpoint root when given) and
 * waits until it serves. */
static pid_t start_server(int port, const char* checkpoint_dir) {
  const char* binary = getenv("DIST_SERVER");
  if (binary == NULL) fail_msg("DIST_SERVER is not set (run through ctest)");
  char address[64], log[256];
  snprintf(address, sizeof address, "127.0.0.1:%d", port);
  log_path(log, sizeof log, "ps", port);
  unlink(log);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("DIST_CLUSTER_TOKEN", kToken, 1);
    unsetenv("DIST_CLUSTER_TOKEN_FILE");
    unsetenv("DIST_CHECKPOINT_DIR");
    const char* args[] = {binary, "--address", address, checkpoint_dir ? "--checkpoint-dir" : NULL, checkpoint_dir, NULL};
    execv(binary, (char* const*)args);
    _exit(127);
  }
  remember(pid);
  const double deadline = now_seconds() + 20;
  while (!file_contains(log, "serving at")) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) fail_msg("dist-server on port %d exited (see %s)", port, log);
    if (now_seconds() > deadline) fail_msg("dist-server on port %d did not start (see %s)", port, log);
    sleep_ms(10);
  }
  return pid;
}

/* A TF_CONFIG document naming the given ps ports and the two workers, for task worker:index. */
static void cluster_json(char* out, size_t size, const int* ps_ports, int num_ps, int index) {
  int used = snprintf(out, size, "{\"cluster\": {\"ps\": [");
  for (int i = 0; i < num_ps; ++i) used += snprintf(out + used, size - (size_t)used, "%s\"127.0.0.1:%d\"", i ? ", " : "", ps_ports[i]);
  snprintf(out + used, size - (size_t)used,
           "], \"worker\": [\"127.0.0.1:%d\", \"127.0.0.1:%d\"]}, \"task\": {\"type\": \"worker\", \"index\": %d}}",
           ports.ports[2], ports.ports[3], index);
}

static dist_cluster_t* cluster_from(const char* json) {
  dist_cluster_t* cluster = NULL;
  assert_dist_ok(dist_cluster_from_json(json, &cluster));
  return cluster;
}

/* The cluster of the shared servers, as worker `index`. */
static dist_cluster_t* shared_cluster(int index) {
  char json[512];
  cluster_json(json, sizeof json, ports.ports, 2, index);
  return cluster_from(json);
}

static dist_status_t try_ps_strategy(const dist_cluster_t* cluster, int32_t placement, dist_strategy_t** strategy) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER | DIST_STRATEGY_OPT_TOKEN |
                       DIST_STRATEGY_OPT_PLACEMENT | DIST_STRATEGY_OPT_TIMEOUT_SECONDS;
  options.kind = DIST_STRATEGY_PARAMETER_SERVER;
  options.cluster = cluster;
  options.token = kToken;
  options.placement = placement;
  options.timeout_seconds = 20;
  return dist_strategy_create(NULL, &options, strategy);
}

static dist_strategy_t* ps_strategy(const dist_cluster_t* cluster, int32_t placement) {
  dist_strategy_t* strategy = NULL;
  assert_dist_ok(try_ps_strategy(cluster, placement, &strategy));
  return strategy;
}

/* Options of a named variable of the given dtype and shape. */
static dist_variable_options_t variable_options(const char* name, dist_dtype_t dtype, const int64_t* shape,
                                                int32_t rank) {
  dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
  options.field_mask = DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_SHAPE;
  options.name = name;
  options.dtype = dtype;
  options.shape = shape;
  options.rank = rank;
  return options;
}

static dist_variable_t* create_variable(dist_strategy_t* strategy, const dist_variable_options_t* options) {
  dist_variable_t* variable = NULL;
  assert_dist_ok(dist_variable_create(strategy, options, &variable));
  return variable;
}

static dist_variable_t* sharded(dist_strategy_t* strategy, const char* name, dist_dtype_t dtype, int64_t rows,
                                int64_t columns, int32_t shards) {
  const int64_t shape[2] = {rows, columns};
  dist_variable_options_t options = variable_options(name, dtype, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS;
  options.num_shards = shards;
  return create_variable(strategy, &options);
}

static void read_all(dist_variable_t* variable, void* out, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t buffer = buffer_of(out, count, dtype);
  assert_dist_ok(dist_variable_read(variable, NULL, &buffer));
}

/* "name:server,first,rows;..." for every shard, as worker 1 prints it. */
static void describe_shards(dist_variable_t* variable, char* out, size_t size) {
  const char* name = NULL;
  int32_t count = 0;
  assert_dist_ok(dist_variable_name(variable, &name));
  assert_dist_ok(dist_variable_num_shards(variable, &count));
  int used = snprintf(out, size, "%s:", name);
  for (int32_t i = 0; i < count; ++i) {
    int32_t server = -1;
    uint64_t first = 0, rows = 0;
    assert_dist_ok(dist_variable_shard(variable, i, &server, &first, &rows));
    used += snprintf(out + used, size - (size_t)used, "%d,%llu,%llu;", server, (unsigned long long)first,
                     (unsigned long long)rows);
  }
}

static void expect_shards(dist_variable_t* variable, const char* expected) {
  char got[512];
  describe_shards(variable, got, sizeof got);
  assert_string_equal(got, expected);
}

/* ---- worker 1: this program started again --------------------------------------- */

/* The placement test's variables, in its order, under `strategy` (round robin
 * or greedy: each its own names). */
static int place_test_variables(dist_strategy_t* strategy, bool greedy, dist_variable_t** out) {
  int n = 0;
  if (greedy) {
    out[n++] = sharded(strategy, "greedy.big", DIST_DTYPE_F32, 100, 1, 1); /* 400 B */
    out[n++] = sharded(strategy, "greedy.s1", DIST_DTYPE_F32, 10, 1, 1);   /* 40 B */
    out[n++] = sharded(strategy, "greedy.s2", DIST_DTYPE_F32, 50, 1, 1);   /* 200 B */
    out[n++] = sharded(strategy, "greedy.s3", DIST_DTYPE_F32, 100, 1, 2);  /* 200 B per shard */
    return n;
  }
  out[n++] = sharded(strategy, "place.a", DIST_DTYPE_F32, 4, 3, 1);
  out[n++] = sharded(strategy, "place.b", DIST_DTYPE_F32, 10, 2, 3);
  const int64_t shape[2] = {9, 4};
  dist_variable_options_t options = variable_options("place.c", DIST_DTYPE_F32, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_MAX_SHARD_BYTES;
  options.max_shard_bytes = 40; /* two rows of 16 bytes per shard at most */
  out[n++] = create_variable(strategy, &options);
  options = variable_options("place.d", DIST_DTYPE_F32, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_MIN_SHARD_BYTES | DIST_VARIABLE_OPT_MAX_SHARDS;
  options.min_shard_bytes = 50; /* 144 bytes: 2 shards */
  options.max_shards = 8;
  out[n++] = create_variable(strategy, &options);
  options = variable_options("place.e", DIST_DTYPE_F32, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS | DIST_VARIABLE_OPT_COLOCATE_WITH;
  options.num_shards = 4;
  options.colocate_with = out[1];
  out[n++] = create_variable(strategy, &options);
  return n;
}

static int worker_place(dist_strategy_t* strategy, bool greedy) {
  dist_variable_t* variables[8];
  int n = place_test_variables(strategy, greedy, variables);
  for (int i = 0; i < n; ++i) {
    char text[512];
    describe_shards(variables[i], text, sizeof text);
    printf("shards %s\n", text);
    dist_variable_destroy(variables[i]);
  }
  return 0;
}

/* Adds 1 to every element of "async.counter" `steps` times. */
static int worker_add(dist_strategy_t* strategy, int steps) {
  dist_variable_t* counter = sharded(strategy, "async.counter", DIST_DTYPE_I64, 12, 1, 3);
  int64_t ones[12];
  for (int i = 0; i < 12; ++i) ones[i] = 1;
  dist_buffer_t value = buffer_of(ones, 12, DIST_DTYPE_I64);
  for (int s = 0; s < steps; ++s) {
    if (dist_variable_assign_add(counter, NULL, &value) != DIST_OK) {
      fprintf(stderr, "assign_add: %s\n", dist_last_error());
      return 1;
    }
  }
  dist_variable_destroy(counter);
  return 0;
}

static dist_variable_t* sync_variable(dist_strategy_t* strategy, const char* name) {
  const int64_t shape[1] = {6};
  dist_variable_options_t options = variable_options(name, DIST_DTYPE_F64, shape, 1);
  static dist_optimizer_options_t sgd;
  sgd = optimizer_options(DIST_OPTIMIZER_SGD, 0.5);
  options.field_mask |= DIST_VARIABLE_OPT_OPTIMIZER | DIST_VARIABLE_OPT_NUM_SHARDS | DIST_VARIABLE_OPT_SYNC_GRADIENTS;
  options.optimizer = &sgd;
  options.num_shards = 2;
  options.sync_gradients = 1;
  return create_variable(strategy, &options);
}

/* Synchronous steps: read, push gradient (worker index + 1) * (step + 1) in
 * every element, and print what the next read (after the round) shows. */
static int sync_steps(dist_strategy_t* strategy, int worker, int steps) {
  dist_variable_t* w = sync_variable(strategy, "sync.w");
  double values[6], gradient[6];
  for (int s = 0; s < steps; ++s) {
    read_all(w, values, 6, DIST_DTYPE_F64);
    for (int i = 0; i < 6; ++i) gradient[i] = (double)((worker + 1) * (s + 1));
    dist_buffer_t g = buffer_of(gradient, 6, DIST_DTYPE_F64);
    if (dist_variable_apply_gradient(w, NULL, &g) != DIST_OK) {
      fprintf(stderr, "apply_gradient: %s\n", dist_last_error());
      return 1;
    }
  }
  read_all(w, values, 6, DIST_DTYPE_F64);
  printf("sync %.17g %.17g\n", values[0], values[5]);
  dist_variable_destroy(w);
  return 0;
}

static int worker_main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s --worker MODE CLUSTER_JSON [STEPS]\n", argv[0]);
    return 2;
  }
  dist_cluster_t* cluster = NULL;
  if (dist_cluster_from_json(argv[3], &cluster) != DIST_OK) {
    fprintf(stderr, "cluster: %s\n", dist_last_error());
    return 1;
  }
  dist_strategy_t* strategy = NULL;
  const int32_t placement = strcmp(argv[2], "place-greedy") == 0 ? DIST_PLACEMENT_GREEDY_BYTES : DIST_PLACEMENT_ROUND_ROBIN;
  if (try_ps_strategy(cluster, placement, &strategy) != DIST_OK) {
    fprintf(stderr, "strategy: %s\n", dist_last_error());
    return 1;
  }
  int32_t index = -1, workers = 0;
  dist_strategy_worker_index(strategy, &index, &workers);
  const int steps = argc > 4 ? atoi(argv[4]) : 0;
  int code = 2;
  if (strncmp(argv[2], "place", 5) == 0) code = worker_place(strategy, placement == DIST_PLACEMENT_GREEDY_BYTES);
  if (strcmp(argv[2], "add") == 0 && (code = worker_add(strategy, steps)) == 0) printf("added %d\n", steps);
  if (strcmp(argv[2], "sync") == 0) code = sync_steps(strategy, index, steps);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
  fflush(stdout);
  return code;
}

/* Starts worker 1 in `mode` against the shared servers; its output goes to `log`. */
static pid_t start_worker(const char* mode, int steps, char* log, size_t log_size) {
  char json[512], steps_text[32];
  cluster_json(json, sizeof json, ports.ports, 2, 1);
  snprintf(steps_text, sizeof steps_text, "%d", steps);
  log_path(log, log_size, mode, ports.ports[3]);
  unlink(log);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    const char* args[] = {"/proc/self/exe", "--worker", mode, json, steps_text, NULL};
    execv("/proc/self/exe", (char* const*)args);
    _exit(127);
  }
  remember(pid);
  return pid;
}

/* The worker's exit code (fails the test when it does not end within `seconds`). */
static int finish_worker(pid_t pid, double seconds, const char* log) {
  const double deadline = now_seconds() + seconds;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (now_seconds() > deadline) {
      kill_pid(pid);
      fail_msg("worker 1 did not finish in %.0f s (see %s)", seconds, log);
    }
    sleep_ms(10);
  }
  for (int i = 0; i < num_started; ++i) {
    if (started[i] == pid) started[i] = 0;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

static void read_file(const char* path, char* out, size_t size) {
  FILE* f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(out, 1, size - 1, f);
  fclose(f);
  out[n] = '\0';
}

/* ---- suite setup ------------------------------------------------------------------ */

static int start_shared_servers(void** state) {
  (void)state;
  launch_prepare(&ports, 4);
  shared_servers[0] = start_server(ports.ports[0], NULL);
  shared_servers[1] = start_server(ports.ports[1], NULL);
  return 0;
}

static int stop_shared_servers(void** state) {
  (void)state;
  kill_started();
  for (int i = 0; i < num_logs; ++i) unlink(logs[i]);
  return 0;
}

/* Kills what a test started but the shared servers. */
static int kill_test_processes(void** state) {
  (void)state;
  for (int i = 0; i < num_started; ++i) {
    if (started[i] != shared_servers[0] && started[i] != shared_servers[1]) kill_pid(started[i]);
  }
  return 0;
}

/* ---- placement -------------------------------------------------------------------- */

/* Worker 1 computed the same placement of these variables on its own. */
static void expect_same_on_worker(pid_t worker, const char* log, dist_variable_t** v, int n) {
  assert_int_equal(finish_worker(worker, 30, log), 0);
  char text[4096];
  read_file(log, text, sizeof text);
  for (int i = 0; i < n; ++i) {
    char line[600];
    char shards[512];
    describe_shards(v[i], shards, sizeof shards);
    snprintf(line, sizeof line, "shards %s\n", shards);
    if (strstr(text, line) == NULL) fail_msg("worker 1 placed differently: expected \"%s\" in:\n%s", line, text);
    dist_variable_destroy(v[i]);
  }
}

static void test_placement(void** state) {
  (void)state;
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  char log[256];
  pid_t worker = start_worker("place", 0, log, sizeof log);
  dist_variable_t* v[8];
  int n = place_test_variables(strategy, false, v);
  assert_int_equal(n, 5);
  /* Round robin over 2 servers across variables: a -> 0; b's 3 shards (4,3,3
   * rows) -> 1, 0, 1; c: 9 rows of 16 bytes, at most 2 rows (40 bytes) per
   * shard -> 5 shards (2,2,2,2,1) -> 0, 1, 0, 1, 0; d: 144 bytes / 50 -> 2
   * shards (5,4) -> 1, 0; e colocated with b: shard i on b's shard i mod 3,
   * moving no turn. */
  expect_shards(v[0], "place.a:0,0,4;");
  expect_shards(v[1], "place.b:1,0,4;0,4,3;1,7,3;");
  expect_shards(v[2], "place.c:0,0,2;1,2,2;0,4,2;1,6,2;0,8,1;");
  expect_shards(v[3], "place.d:1,0,5;0,5,4;");
  expect_shards(v[4], "place.e:1,0,3;0,3,2;1,5,2;1,7,2;");
  expect_same_on_worker(worker, log, v, n);
  dist_strategy_destroy(strategy);

  /* Greedy by bytes: each shard to the server with the fewest bytes so far
   * (ties: the lower index): 400 B -> 0; 40 B -> 1; 200 B -> 1 (40 < 400);
   * 2 x 200 B -> 1 (240 < 400), then 0 (400 < 440). */
  strategy = ps_strategy(cluster, DIST_PLACEMENT_GREEDY_BYTES);
  worker = start_worker("place-greedy", 0, log, sizeof log);
  n = place_test_variables(strategy, true, v);
  expect_shards(v[0], "greedy.big:0,0,100;");
  expect_shards(v[1], "greedy.s1:1,0,10;");
  expect_shards(v[2], "greedy.s2:1,0,50;");
  expect_shards(v[3], "greedy.s3:1,0,50;0,50,50;");
  /* The rows land where placed: what is assigned reads back whole. */
  float values[100];
  for (int i = 0; i < 100; ++i) values[i] = (float)i * 0.5f;
  dist_buffer_t buffer = buffer_of(values, 100, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_assign(v[3], NULL, &buffer));
  float back[100];
  read_all(v[3], back, 100, DIST_DTYPE_F32);
  assert_memory_equal(back, values, sizeof values);
  expect_same_on_worker(worker, log, v, n);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

/* ---- dense updates and the server optimizers ---------------------------------------- */

static void test_read_assign_add_sub(void** state) {
  (void)state;
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  const int64_t shape[1] = {7};
  int32_t initial[7] = {5, -3, 8, 0, 12, 7, -1};
  dist_variable_options_t options = variable_options("dense.i32", DIST_DTYPE_I32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_NUM_SHARDS;
  options.initial_value = initial;
  options.num_shards = 2;
  dist_variable_t* v = create_variable(strategy, &options);
  int32_t got[7], reference[7], value[7];
  read_all(v, got, 7, DIST_DTYPE_I32);
  assert_memory_equal(got, initial, sizeof got);
  memcpy(reference, initial, sizeof reference);
  dist_buffer_t buffer = buffer_of(value, 7, DIST_DTYPE_I32);
  for (int i = 0; i < 7; ++i) value[i] = 100 * i - 250;
  assert_dist_ok(dist_variable_assign(v, NULL, &buffer));
  for (int i = 0; i < 7; ++i) reference[i] = value[i];
  for (int i = 0; i < 7; ++i) value[i] = 3 * i + 1;
  assert_dist_ok(dist_variable_assign_add(v, NULL, &buffer));
  for (int i = 0; i < 7; ++i) reference[i] += value[i];
  for (int i = 0; i < 7; ++i) value[i] = i * i;
  assert_dist_ok(dist_variable_assign_sub(v, NULL, &buffer));
  for (int i = 0; i < 7; ++i) reference[i] -= value[i];
  read_all(v, got, 7, DIST_DTYPE_I32);
  assert_memory_equal(got, reference, sizeof got);
  assert_int_equal(reference[6], 600 - 250 + 19 - 36); /* the reference itself, by hand */

  int32_t copies = -1;
  assert_dist_ok(dist_variable_num_copies(v, &copies));
  assert_int_equal(copies, 0);
  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

/* Replica context: each of 2 local replicas' assign_add is applied (no aggregation). */
static dist_status_t add_in_replica(dist_replica_context_t* replica, void* user_data) {
  dist_variable_t* variable = user_data;
  float one[3] = {1.0f, 2.0f, 3.0f};
  dist_buffer_t buffer = buffer_of(one, 3, DIST_DTYPE_F32);
  dist_status_t status = dist_variable_assign_add(variable, replica, &buffer);
  if (status != DIST_OK) return status;
  float seen[3];
  dist_buffer_t out = buffer_of(seen, 3, DIST_DTYPE_F32);
  return dist_variable_read(variable, replica, &out);
}

static void test_replica_context_updates(void** state) {
  (void)state;
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER | DIST_STRATEGY_OPT_TOKEN |
                       DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
  options.kind = DIST_STRATEGY_PARAMETER_SERVER;
  options.cluster = cluster;
  options.token = kToken;
  options.num_cpu_devices = 2;
  dist_strategy_t* strategy = NULL;
  assert_dist_ok(dist_strategy_create(NULL, &options, &strategy));
  int32_t in_sync = 0, index = -1, workers = 0;
  assert_dist_ok(dist_strategy_num_replicas_in_sync(strategy, &in_sync));
  assert_int_equal(in_sync, 2); /* its own local replicas only */
  assert_dist_ok(dist_strategy_worker_index(strategy, &index, &workers));
  assert_int_equal(index, 0);
  assert_int_equal(workers, 2);
  const int64_t shape[1] = {3};
  dist_variable_options_t vo = variable_options("replica.v", DIST_DTYPE_F32, shape, 1);
  dist_variable_t* v = create_variable(strategy, &vo);
  assert_dist_ok(dist_strategy_run(strategy, add_in_replica, v));
  float got[3];
  read_all(v, got, 3, DIST_DTYPE_F32);
  assert_true(got[0] == 2.0f && got[1] == 4.0f && got[2] == 6.0f);
  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

enum { kElements = 10, kSteps = 3 };

/* Keras' formulas, in double, one element at a time. */
struct reference_optimizer {
  int32_t kind;
  double lr, momentum, beta_1, beta_2, epsilon, initial_accumulator;
  int nesterov;
  double slot1[kElements], slot2[kElements];
};

static void reference_init(struct reference_optimizer* o) {
  for (int i = 0; i < kElements; ++i) {
    o->slot1[i] = o->kind == DIST_OPTIMIZER_ADAGRAD ? o->initial_accumulator : 0.0;
    o->slot2[i] = 0.0;
  }
}

static void reference_step(struct reference_optimizer* o, double* w, const double* g, int t) {
  for (int i = 0; i < kElements; ++i) {
    switch (o->kind) {
      case DIST_OPTIMIZER_SGD: w[i] -= o->lr * g[i]; break;
      case DIST_OPTIMIZER_MOMENTUM:
        o->slot1[i] = o->momentum * o->slot1[i] - o->lr * g[i];
        w[i] += o->nesterov ? o->momentum * o->slot1[i] - o->lr * g[i] : o->slot1[i];
        break;
      case DIST_OPTIMIZER_ADAGRAD:
        o->slot1[i] += g[i] * g[i];
        w[i] -= o->lr * g[i] / (sqrt(o->slot1[i]) + o->epsilon);
        break;
      case DIST_OPTIMIZER_ADAM: {
        o->slot1[i] = o->beta_1 * o->slot1[i] + (1 - o->beta_1) * g[i];
        o->slot2[i] = o->beta_2 * o->slot2[i] + (1 - o->beta_2) * g[i] * g[i];
        const double alpha = o->lr * sqrt(1 - pow(o->beta_2, t)) / (1 - pow(o->beta_1, t));
        w[i] -= alpha * o->slot1[i] / (sqrt(o->slot2[i]) + o->epsilon);
        break;
      }
    }
  }
}

static dist_optimizer_options_t optimizer_options_of(const struct reference_optimizer* o) {
  dist_optimizer_options_t options = DIST_OPTIMIZER_OPTIONS_INIT;
  options.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE | DIST_OPTIMIZER_OPT_MOMENTUM |
                       DIST_OPTIMIZER_OPT_NESTEROV | DIST_OPTIMIZER_OPT_BETA_1 | DIST_OPTIMIZER_OPT_BETA_2 |
                       DIST_OPTIMIZER_OPT_EPSILON | DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE;
  options.kind = o->kind;
  options.learning_rate = o->lr;
  options.momentum = o->momentum;
  options.nesterov = o->nesterov;
  options.beta_1 = o->beta_1;
  options.beta_2 = o->beta_2;
  options.epsilon = o->epsilon;
  options.initial_accumulator_value = o->initial_accumulator;
  return options;
}

static void gradient_of_step(int step, double* g) {
  for (int i = 0; i < kElements; ++i) g[i] = 0.25 * (double)(i - 4) * (double)(step + 1) + 0.125 * (double)(step % 2);
}

static void initial_weights(double* w) {
  for (int i = 0; i < kElements; ++i) w[i] = 1.0 - 0.3 * (double)i;
}

/* The servers' optimizer of one kind on an f64 [5,2] variable in 2 shards and
 * an f32 copy, against the reference; returns the f64 result in out. */
static void check_server_optimizer(dist_strategy_t* strategy, struct reference_optimizer* o, const char* name,
                                   double* out) {
  dist_optimizer_options_t optimizer = optimizer_options_of(o);
  double w[kElements], reference[kElements], g[kElements];
  initial_weights(w);
  memcpy(reference, w, sizeof w);
  const int64_t shape[2] = {5, 2};
  char name64[64], name32[64];
  snprintf(name64, sizeof name64, "%s.f64", name);
  snprintf(name32, sizeof name32, "%s.f32", name);
  dist_variable_options_t options = variable_options(name64, DIST_DTYPE_F64, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_OPTIMIZER | DIST_VARIABLE_OPT_NUM_SHARDS;
  options.initial_value = w;
  options.optimizer = &optimizer;
  options.num_shards = 2;
  dist_variable_t* v64 = create_variable(strategy, &options);
  float w32[kElements], g32[kElements];
  for (int i = 0; i < kElements; ++i) w32[i] = (float)w[i];
  options.name = name32;
  options.dtype = DIST_DTYPE_F32;
  options.initial_value = w32;
  dist_variable_t* v32 = create_variable(strategy, &options);
  reference_init(o);
  for (int step = 0; step < kSteps; ++step) {
    gradient_of_step(step, g);
    for (int i = 0; i < kElements; ++i) g32[i] = (float)g[i];
    dist_buffer_t b64 = buffer_of(g, kElements, DIST_DTYPE_F64);
    dist_buffer_t b32 = buffer_of(g32, kElements, DIST_DTYPE_F32);
    assert_dist_ok(dist_variable_apply_gradient(v64, NULL, &b64));
    assert_dist_ok(dist_variable_apply_gradient(v32, NULL, &b32));
    reference_step(o, reference, g, step + 1);
  }
  read_all(v64, out, kElements, DIST_DTYPE_F64);
  read_all(v32, w32, kElements, DIST_DTYPE_F32);
  for (int i = 0; i < kElements; ++i) {
    if (fabs(out[i] - reference[i]) > 1e-12 * (1 + fabs(reference[i])) ||
        fabs((double)w32[i] - reference[i]) > 1e-5 * (1 + fabs(reference[i]))) {
      fail_msg("%s element %d: f64 %.17g, f32 %.9g, reference %.17g", name, i, out[i], (double)w32[i], reference[i]);
    }
    /* The update moved it: a no-op optimizer would not pass. */
    double start[kElements];
    initial_weights(start);
    assert_true(fabs(reference[i] - start[i]) > 1e-6 || i == 4);
  }
  dist_variable_destroy(v64);
  dist_variable_destroy(v32);
}

/* The workers' optimizer (dist_strategy_apply_gradients under ONE_DEVICE) on
 * the same steps. */
static void worker_optimizer_result(const struct reference_optimizer* o, double* out) {
  dist_strategy_t* strategy = make_strategy(DIST_STRATEGY_ONE_DEVICE, 1);
  double w[kElements], g[kElements];
  initial_weights(w);
  const int64_t shape[2] = {5, 2};
  dist_variable_options_t options = variable_options("worker.adagrad", DIST_DTYPE_F64, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_INITIAL_VALUE;
  options.initial_value = w;
  dist_variable_t* v = create_variable(strategy, &options);
  dist_optimizer_options_t optimizer_options = optimizer_options_of(o);
  dist_optimizer_t* optimizer = NULL;
  assert_dist_ok(dist_optimizer_create(&optimizer_options, &optimizer));
  for (int step = 0; step < kSteps; ++step) {
    gradient_of_step(step, g);
    dist_buffer_t b = buffer_of(g, kElements, DIST_DTYPE_F64);
    assert_dist_ok(dist_strategy_apply_gradients(strategy, &v, &b, 1, optimizer));
  }
  read_all(v, out, kElements, DIST_DTYPE_F64);
  dist_optimizer_destroy(optimizer);
  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
}

static void test_server_optimizers(void** state) {
  (void)state;
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  struct reference_optimizer kinds[] = {
      {.kind = DIST_OPTIMIZER_SGD, .lr = 0.1, .momentum = 0.9, .beta_1 = 0.9, .beta_2 = 0.999, .epsilon = 1e-7, .initial_accumulator = 0.1},
      {.kind = DIST_OPTIMIZER_MOMENTUM, .lr = 0.1, .momentum = 0.8, .beta_1 = 0.9, .beta_2 = 0.999, .epsilon = 1e-7, .initial_accumulator = 0.1},
      {.kind = DIST_OPTIMIZER_MOMENTUM, .lr = 0.05, .momentum = 0.9, .nesterov = 1, .beta_1 = 0.9, .beta_2 = 0.999, .epsilon = 1e-7, .initial_accumulator = 0.1},
      {.kind = DIST_OPTIMIZER_ADAGRAD, .lr = 0.2, .momentum = 0.9, .beta_1 = 0.9, .beta_2 = 0.999, .epsilon = 1e-7, .initial_accumulator = 0.3},
      {.kind = DIST_OPTIMIZER_ADAM, .lr = 0.01, .momentum = 0.9, .beta_1 = 0.8, .beta_2 = 0.99, .epsilon = 1e-6, .initial_accumulator = 0.1},
  };
  const char* names[] = {"opt.sgd", "opt.momentum", "opt.nesterov", "opt.adagrad", "opt.adam"};
  double server_adagrad[kElements];
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    double result[kElements];
    check_server_optimizer(strategy, &kinds[k], names[k], result);
    if (kinds[k].kind == DIST_OPTIMIZER_ADAGRAD) memcpy(server_adagrad, result, sizeof result);
  }
  /* ADAGRAD means the same on the workers: the same bits as the servers'. */
  double worker_adagrad[kElements];
  worker_optimizer_result(&kinds[3], worker_adagrad);
  assert_memory_equal(worker_adagrad, server_adagrad, sizeof worker_adagrad);

  /* Adagrad's defaults are Keras': initial accumulator 0.1, epsilon 1e-7. */
  const dist_optimizer_options_t defaults = optimizer_options(DIST_OPTIMIZER_ADAGRAD, 1.0);
  const int64_t scalar_shape[1] = {1};
  dist_variable_options_t options = variable_options("opt.adagrad.defaults", DIST_DTYPE_F64, scalar_shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_OPTIMIZER;
  options.optimizer = &defaults;
  dist_variable_t* v = create_variable(strategy, &options);
  double g = 0.5, w = 0;
  dist_buffer_t gb = buffer_of(&g, 1, DIST_DTYPE_F64);
  assert_dist_ok(dist_variable_apply_gradient(v, NULL, &gb));
  read_all(v, &w, 1, DIST_DTYPE_F64);
  assert_true(fabs(w - (-0.5 / (sqrt(0.1 + 0.25) + 1e-7))) < 1e-12);
  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

/* ---- several workers ---------------------------------------------------------------- */

static void test_async_integer_adds_from_two_workers(void** state) {
  (void)state;
  enum { kAdds = 150 };
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  char log[256];
  pid_t worker = start_worker("add", kAdds, log, sizeof log);
  assert_int_equal(worker_add(strategy, kAdds), 0); /* what worker 1 does, here at the same time */
  assert_int_equal(finish_worker(worker, 40, log), 0);
  assert_true(file_contains(log, "added 150"));
  dist_variable_t* counter = sharded(strategy, "async.counter", DIST_DTYPE_I64, 12, 1, 3);
  int64_t got[12];
  read_all(counter, got, 12, DIST_DTYPE_I64);
  for (int i = 0; i < 12; ++i) assert_int_equal(got[i], 2 * kAdds);
  dist_variable_destroy(counter);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

static void test_sync_rounds_two_workers(void** state) {
  (void)state;
  enum { kSyncSteps = 3 };
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  char log[256];
  pid_t worker = start_worker("sync", kSyncSteps, log, sizeof log);
  /* Worker 0 pushes (s + 1), worker 1 pushes 2 (s + 1); each round applies
   * their mean 1.5 (s + 1) with lr 0.5 once, whatever the arrival order. */
  dist_variable_t* w = sync_variable(strategy, "sync.w");
  double values[6], gradient[6];
  double reference = 0;
  for (int s = 0; s < kSyncSteps; ++s) {
    read_all(w, values, 6, DIST_DTYPE_F64);
    assert_true(values[0] == reference && values[5] == reference);
    for (int i = 0; i < 6; ++i) gradient[i] = (double)(s + 1);
    dist_buffer_t g = buffer_of(gradient, 6, DIST_DTYPE_F64);
    assert_dist_ok(dist_variable_apply_gradient(w, NULL, &g));
    reference -= 0.5 * 1.5 * (double)(s + 1);
  }
  read_all(w, values, 6, DIST_DTYPE_F64); /* waits for the last round */
  assert_true(values[0] == reference && values[5] == reference);
  assert_true(reference == -4.5);
  assert_int_equal(finish_worker(worker, 40, log), 0);
  char line[128];
  snprintf(line, sizeof line, "sync %.17g %.17g", reference, reference);
  if (!file_contains(log, line)) {
    char text[4096];
    read_file(log, text, sizeof text);
    fail_msg("worker 1 did not end at %g: %s", reference, text);
  }
  dist_variable_destroy(w);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

/* One worker alone: rounds of one gradient, and the staleness bound. */
static void test_sync_staleness(void** state) {
  (void)state;
  char json[512];
  cluster_json(json, sizeof json, ports.ports, 2, 0);
  /* A cluster of one worker: the default round is its one gradient. */
  char single[512];
  snprintf(single, sizeof single,
           "{\"cluster\": {\"ps\": [\"127.0.0.1:%d\", \"127.0.0.1:%d\"], \"worker\": [\"127.0.0.1:%d\"]}, "
           "\"task\": {\"type\": \"worker\", \"index\": 0}}",
           ports.ports[0], ports.ports[1], ports.ports[2]);
  dist_cluster_t* cluster = cluster_from(single);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  const dist_optimizer_options_t sgd = optimizer_options(DIST_OPTIMIZER_SGD, 1.0);
  const int64_t shape[1] = {4};
  for (int32_t staleness = 0; staleness <= 1; ++staleness) {
    char name[64];
    snprintf(name, sizeof name, "stale.%d", staleness);
    dist_variable_options_t options = variable_options(name, DIST_DTYPE_F64, shape, 1);
    options.field_mask |= DIST_VARIABLE_OPT_OPTIMIZER | DIST_VARIABLE_OPT_SYNC_GRADIENTS | DIST_VARIABLE_OPT_MAX_STALENESS |
                          DIST_VARIABLE_OPT_NUM_SHARDS;
    options.optimizer = &sgd;
    options.sync_gradients = 1;
    options.max_staleness = staleness;
    options.num_shards = 2;
    dist_variable_t* v = create_variable(strategy, &options);
    double values[4], ones[4] = {1, 1, 1, 1};
    dist_buffer_t buffer = buffer_of(ones, 4, DIST_DTYPE_F64);
    read_all(v, values, 4, DIST_DTYPE_F64);
    assert_dist_ok(dist_variable_apply_gradient(v, NULL, &buffer)); /* fresh: applied, -1 */
    read_all(v, values, 4, DIST_DTYPE_F64);
    assert_true(values[0] == -1.0 && values[3] == -1.0);
    /* Another update lands after this read: the next gradient is one update old. */
    assert_dist_ok(dist_variable_assign_add(v, NULL, &buffer)); /* 0 */
    assert_dist_ok(dist_variable_apply_gradient(v, NULL, &buffer));
    read_all(v, values, 4, DIST_DTYPE_F64);
    const double expected = staleness == 0 ? 0.0 : -1.0; /* dropped as stale / accepted */
    assert_true(values[0] == expected && values[3] == expected);
    dist_variable_destroy(v);
  }
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
  (void)json;
}

/* ---- sparse rows --------------------------------------------------------------------- */

static void test_sparse_rows(void** state) {
  (void)state;
  enum { kRows = 11, kColumns = 3 };
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  float table[kRows * kColumns];
  for (int i = 0; i < kRows * kColumns; ++i) table[i] = (float)i;
  const int64_t shape[2] = {kRows, kColumns};
  dist_optimizer_options_t adagrad = DIST_OPTIMIZER_OPTIONS_INIT;
  adagrad.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE |
                       DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE;
  adagrad.kind = DIST_OPTIMIZER_ADAGRAD;
  adagrad.learning_rate = 0.5;
  adagrad.initial_accumulator_value = 1.0;
  dist_variable_options_t options = variable_options("sparse.table", DIST_DTYPE_F32, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_NUM_SHARDS | DIST_VARIABLE_OPT_OPTIMIZER;
  options.initial_value = table;
  options.num_shards = 3; /* rows 0-3, 4-7, 8-10 */
  options.optimizer = &adagrad;
  dist_variable_t* v = create_variable(strategy, &options);

  /* Out of order, duplicates, across all shards. */
  const int64_t rows[] = {10, 0, 5, 10, 3, 8, 0};
  enum { kCount = sizeof rows / sizeof rows[0] };
  float out[kCount * kColumns];
  dist_buffer_t out_buffer = buffer_of(out, kCount * kColumns, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_read_rows(v, NULL, rows, kCount, &out_buffer));
  for (int i = 0; i < kCount; ++i) {
    for (int c = 0; c < kColumns; ++c) assert_true(out[i * kColumns + c] == table[rows[i] * kColumns + c]);
  }
  /* count 0 (rows NULL) and 1. */
  dist_buffer_t empty = buffer_of(NULL, 0, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_read_rows(v, NULL, NULL, 0, &empty));
  assert_dist_ok(dist_variable_add_rows(v, NULL, NULL, 0, &empty));
  assert_dist_ok(dist_variable_apply_rows(v, NULL, NULL, 0, &empty));
  const int64_t one_row = 7;
  float row7[kColumns];
  dist_buffer_t row_buffer = buffer_of(row7, kColumns, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_read_rows(v, NULL, &one_row, 1, &row_buffer));
  assert_true(row7[0] == 21.0f && row7[2] == 23.0f);

  /* Scatter-add: a row listed twice gets both. */
  float reference[kRows * kColumns];
  memcpy(reference, table, sizeof table);
  const int64_t add_rows[] = {2, 9, 2, 4, 10};
  enum { kAdd = sizeof add_rows / sizeof add_rows[0] };
  float deltas[kAdd * kColumns];
  for (int i = 0; i < kAdd * kColumns; ++i) deltas[i] = 0.5f * (float)(i + 1);
  dist_buffer_t delta_buffer = buffer_of(deltas, kAdd * kColumns, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_add_rows(v, NULL, add_rows, kAdd, &delta_buffer));
  for (int i = 0; i < kAdd; ++i) {
    for (int c = 0; c < kColumns; ++c) reference[add_rows[i] * kColumns + c] += deltas[i * kColumns + c];
  }
  float all[kRows * kColumns];
  read_all(v, all, kRows * kColumns, DIST_DTYPE_F32);
  assert_memory_equal(all, reference, sizeof all);

  /* Sparse Adagrad: duplicates summed first (one step per row), other rows and
   * their accumulators untouched. */
  const int64_t grad_rows[] = {1, 6, 1};
  float grads[3 * kColumns];
  for (int i = 0; i < 3 * kColumns; ++i) grads[i] = 0.25f * (float)(i + 1);
  dist_buffer_t grad_buffer = buffer_of(grads, 3 * kColumns, DIST_DTYPE_F32);
  assert_dist_ok(dist_variable_apply_rows(v, NULL, grad_rows, 3, &grad_buffer));
  for (int c = 0; c < kColumns; ++c) {
    const double g1 = (double)grads[c] + (double)grads[2 * kColumns + c];
    const double g6 = (double)grads[kColumns + c];
    reference[1 * kColumns + c] -= (float)(0.5 * g1 / (sqrt(1.0 + g1 * g1) + 1e-7));
    reference[6 * kColumns + c] -= (float)(0.5 * g6 / (sqrt(1.0 + g6 * g6) + 1e-7));
  }
  read_all(v, all, kRows * kColumns, DIST_DTYPE_F32);
  for (int i = 0; i < kRows * kColumns; ++i) {
    if (fabsf(all[i] - reference[i]) > 1e-5f * (1 + fabsf(reference[i]))) fail_msg("element %d: %g, reference %g", i, (double)all[i], (double)reference[i]);
  }
  /* Two steps would have moved row 1 differently: the check can tell. */
  assert_true(fabsf(all[kColumns] - table[kColumns]) > 0.1f);

  /* Bad rows, dtype and counts are refused before anything is sent. */
  const int64_t bad_rows[] = {3, 11};
  float two_rows[2 * kColumns];
  dist_buffer_t two = buffer_of(two_rows, 2 * kColumns, DIST_DTYPE_F32);
  assert_dist_error(dist_variable_read_rows(v, NULL, bad_rows, 2, &two), DIST_ERR_INVALID_ARGUMENT, "rows[1] = 11",
                    "11 rows");
  const int64_t negative[] = {-1, 0};
  assert_dist_error(dist_variable_add_rows(v, NULL, negative, 2, &two), DIST_ERR_INVALID_ARGUMENT, "rows[0] = -1");
  dist_buffer_t short_buffer = buffer_of(two_rows, 2 * kColumns - 1, DIST_DTYPE_F32);
  const int64_t good_rows[] = {0, 1};
  assert_dist_error(dist_variable_read_rows(v, NULL, good_rows, 2, &short_buffer), DIST_ERR_INVALID_ARGUMENT,
                    "5 elements", "need 6");
  double wrong_type[2 * kColumns];
  dist_buffer_t f64 = buffer_of(wrong_type, 2 * kColumns, DIST_DTYPE_F64);
  assert_dist_error(dist_variable_apply_rows(v, NULL, good_rows, 2, &f64), DIST_ERR_INVALID_ARGUMENT, "is f32",
                    "f64");
  assert_dist_error(dist_variable_read_rows(v, NULL, NULL, 2, &two), DIST_ERR_INVALID_ARGUMENT, "rows is NULL");
  read_all(v, all, kRows * kColumns, DIST_DTYPE_F32); /* nothing of that changed it */
  for (int i = 0; i < kRows * kColumns; ++i) assert_true(fabsf(all[i] - reference[i]) <= 1e-5f * (1 + fabsf(reference[i])));
  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

/* ---- checkpoints ---------------------------------------------------------------------- */

static void make_temp_dir(char* out, size_t size, const char* what) {
  snprintf(out, size, "/tmp/dist-ps-strategy-%d-%s-XXXXXX", (int)getpid(), what);
  assert_non_null(mkdtemp(out));
}

static void remove_tree(const char* path) {
  char command[512];
  snprintf(command, sizeof command, "rm -rf '%s'", path);
  assert_int_equal(system(command), 0);
}

static dist_checkpoint_options_t checkpoint_options(void) {
  dist_checkpoint_options_t options = DIST_CHECKPOINT_OPTIONS_INIT;
  options.field_mask = DIST_CHECKPOINT_OPT_TOKEN | DIST_CHECKPOINT_OPT_TIMEOUT_MS;
  options.token = kToken;
  options.timeout_ms = 20000;
  return options;
}

static void test_checkpoint_round_trip_and_resharding(void** state) {
  (void)state;
  char root[256];
  make_temp_dir(root, sizeof root, "ckpt");
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  enum { kR = 9, kC = 2 };
  double saved[kR * kC];
  for (int i = 0; i < kR * kC; ++i) saved[i] = 0.5 * (double)i - 3.0;
  const int64_t shape[2] = {kR, kC};
  dist_variable_options_t options = variable_options("ckpt.table", DIST_DTYPE_F64, shape, 2);
  options.field_mask |= DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_NUM_SHARDS;
  options.initial_value = saved;
  options.num_shards = 3;
  dist_variable_t* v = create_variable(strategy, &options);
  const int64_t scalar_shape[1] = {1};
  dist_variable_options_t step_options = variable_options("ckpt.step", DIST_DTYPE_I64, scalar_shape, 1);
  dist_variable_t* step = create_variable(strategy, &step_options);
  int64_t seven = 7;
  dist_buffer_t seven_buffer = buffer_of(&seven, 1, DIST_DTYPE_I64);
  assert_dist_ok(dist_variable_assign(step, NULL, &seven_buffer));

  /* The strategy's cluster is the one to save. */
  const dist_cluster_t* strategy_cluster = NULL;
  assert_dist_ok(dist_strategy_cluster(strategy, &strategy_cluster));
  assert_ptr_equal(strategy_cluster, cluster);
  dist_checkpoint_options_t ckpt = checkpoint_options();
  char* path = NULL;
  assert_dist_ok(dist_checkpoint_save(strategy_cluster, root, 3, &ckpt, &path));
  assert_non_null(strstr(path, "ckpt-3"));
  dist_string_free(path);

  /* Changed after the save, then restored. */
  double garbage[kR * kC];
  for (int i = 0; i < kR * kC; ++i) garbage[i] = 1000.0 + (double)i;
  dist_buffer_t garbage_buffer = buffer_of(garbage, kR * kC, DIST_DTYPE_F64);
  assert_dist_ok(dist_variable_assign(v, NULL, &garbage_buffer));
  assert_dist_ok(dist_checkpoint_restore(strategy_cluster, root, &ckpt, &path));
  dist_string_free(path);
  double got[kR * kC];
  read_all(v, got, kR * kC, DIST_DTYPE_F64);
  assert_memory_equal(got, saved, sizeof got);

  /* Onto one server, with another partitioning (2 shards, greedy). */
  struct launch lone_port;
  launch_prepare(&lone_port, 1);
  int one_port[1] = {lone_port.ports[0]};
  pid_t lone = start_server(one_port[0], NULL);
  char json[512];
  cluster_json(json, sizeof json, one_port, 1, 0);
  dist_cluster_t* small = cluster_from(json);
  dist_strategy_t* resharded = ps_strategy(small, DIST_PLACEMENT_GREEDY_BYTES);
  options.num_shards = 2;
  double zeros[kR * kC] = {0};
  options.initial_value = zeros;
  dist_variable_t* v2 = create_variable(resharded, &options);
  expect_shards(v2, "ckpt.table:0,0,5;0,5,4;");
  dist_variable_t* step2 = create_variable(resharded, &step_options);
  assert_dist_ok(dist_checkpoint_restore(small, root, &ckpt, &path));
  dist_string_free(path);
  read_all(v2, got, kR * kC, DIST_DTYPE_F64);
  assert_memory_equal(got, saved, sizeof got);
  int64_t step_value = 0;
  read_all(step2, &step_value, 1, DIST_DTYPE_I64);
  assert_int_equal(step_value, 7);
  dist_variable_destroy(v2);
  dist_variable_destroy(step2);
  dist_strategy_destroy(resharded);
  dist_cluster_destroy(small);
  kill_pid(lone);

  dist_variable_destroy(v);
  dist_variable_destroy(step);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
  remove_tree(root);
}

/* ---- a ps task killed and restarted --------------------------------------------------- */

static void test_ps_killed_and_restarted(void** state) {
  (void)state;
  char root[256];
  make_temp_dir(root, sizeof root, "restart");
  struct launch own;
  launch_prepare(&own, 2);
  pid_t servers[2];
  servers[0] = start_server(own.ports[0], root);
  servers[1] = start_server(own.ports[1], root);
  char json[512];
  cluster_json(json, sizeof json, own.ports, 2, 0);
  dist_cluster_t* cluster = cluster_from(json);
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER | DIST_STRATEGY_OPT_TOKEN_FILE |
                       DIST_STRATEGY_OPT_TIMEOUT_SECONDS;
  char token_file[300];
  snprintf(token_file, sizeof token_file, "%s/token", root);
  FILE* f = fopen(token_file, "w");
  assert_non_null(f);
  fputs(kToken, f);
  fclose(f);
  chmod(token_file, 0600);
  options.kind = DIST_STRATEGY_PARAMETER_SERVER;
  options.cluster = cluster;
  options.token_file = token_file;
  options.timeout_seconds = 10;
  dist_strategy_t* strategy = NULL;
  assert_dist_ok(dist_strategy_create(NULL, &options, &strategy));
  /* 8 rows in 2 shards: rows 0-3 on ps:0, rows 4-7 on ps:1. */
  dist_variable_t* v = sharded(strategy, "restart.w", DIST_DTYPE_I64, 8, 1, 2);
  expect_shards(v, "restart.w:0,0,4;1,4,4;");
  int64_t values[8], got[8];
  for (int i = 0; i < 8; ++i) values[i] = 10 * i;
  dist_buffer_t buffer = buffer_of(values, 8, DIST_DTYPE_I64);
  assert_dist_ok(dist_variable_assign(v, NULL, &buffer));
  dist_checkpoint_options_t ckpt = checkpoint_options();
  char* path = NULL;
  assert_dist_ok(dist_checkpoint_save(cluster, root, 1, &ckpt, &path));
  dist_string_free(path);
  /* Not checkpointed: kept by ps:0, lost by ps:1 when it dies. */
  int64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  dist_buffer_t ones_buffer = buffer_of(ones, 8, DIST_DTYPE_I64);
  assert_dist_ok(dist_variable_assign_add(v, NULL, &ones_buffer));

  kill_pid(servers[1]);
  dist_status_t status = dist_variable_read(v, NULL, &buffer);
  if (status != DIST_ERR_PEER_FAILED && status != DIST_ERR_UNAVAILABLE) {
    fail_msg("read with ps:1 down returned %s: %s", dist_status_string(status), dist_last_error());
  }
  assert_non_null(strstr(dist_last_error(), "ps:1"));
  status = dist_variable_assign_add(v, NULL, &ones_buffer);
  if (status != DIST_ERR_PEER_FAILED && status != DIST_ERR_UNAVAILABLE) {
    fail_msg("assign_add with ps:1 down returned %s: %s", dist_status_string(status), dist_last_error());
  }
  assert_non_null(strstr(dist_last_error(), "ps:1"));

  /* Back at the same address with its checkpoint root. */
  servers[1] = start_server(own.ports[1], root);
  for (int i = 0; i < 8; ++i) values[i] = -1;
  assert_dist_ok(dist_variable_read(v, NULL, &buffer));
  for (int i = 0; i < 8; ++i) got[i] = i < 4 ? 10 * i + 1 : 10 * i;
  assert_memory_equal(values, got, sizeof got);
  assert_dist_ok(dist_variable_assign_add(v, NULL, &ones_buffer));
  read_all(v, values, 8, DIST_DTYPE_I64);
  for (int i = 0; i < 8; ++i) assert_int_equal(values[i], got[i] + 1);

  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
  kill_pid(servers[0]);
  kill_pid(servers[1]);
  remove_tree(root);
}

/* ---- bad input -------------------------------------------------------------------------- */

static void test_bad_input(void** state) {
  (void)state;
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_t* strategy = ps_strategy(cluster, DIST_PLACEMENT_ROUND_ROBIN);
  const int64_t shape[1] = {4};
  dist_variable_t* v = NULL;

  dist_variable_options_t options = variable_options("bad.on_read", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_SYNCHRONIZATION;
  options.synchronization = DIST_SYNC_ON_READ;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "ON_READ");
  options = variable_options("bad.aggregation", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_AGGREGATION;
  options.aggregation = DIST_AGGREGATION_MEAN;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "aggregation");
  options = variable_options("bad.shards", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS | DIST_VARIABLE_OPT_MIN_SHARD_BYTES;
  options.num_shards = 2;
  options.min_shard_bytes = 4;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "one partitioner");
  options = variable_options("bad.max_shards", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_MAX_SHARDS;
  options.max_shards = 2;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "max_shards");
  options = variable_options("bad.row", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_MAX_SHARD_BYTES;
  options.max_shard_bytes = 3;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "one row is 4 bytes");
  options = variable_options("bad.sync", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE;
  options.replicas_to_aggregate = 1;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "sync_gradients");
  dist_optimizer_options_t sgd = DIST_OPTIMIZER_OPTIONS_INIT;
  options = variable_options("bad.sync", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_SYNC_GRADIENTS | DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE | DIST_VARIABLE_OPT_OPTIMIZER;
  options.sync_gradients = 1;
  options.replicas_to_aggregate = 3;
  options.optimizer = &sgd;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT,
                    "replicas_to_aggregate 3", "2 workers");
  dist_optimizer_options_t bad_rate = DIST_OPTIMIZER_OPTIONS_INIT;
  bad_rate.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE;
  bad_rate.kind = DIST_OPTIMIZER_ADAGRAD;
  bad_rate.initial_accumulator_value = -1;
  options = variable_options("bad.optimizer", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_OPTIMIZER;
  options.optimizer = &bad_rate;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "initial");
  assert_null(v);

  /* A variable without an optimizer takes no gradient; the name is taken. */
  options = variable_options("bad.plain", DIST_DTYPE_F32, shape, 1);
  dist_variable_t* plain = create_variable(strategy, &options);
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "bad.plain",
                    "already has a variable");
  float four[4] = {1, 2, 3, 4};
  dist_buffer_t four_buffer = buffer_of(four, 4, DIST_DTYPE_F32);
  assert_dist_error(dist_variable_apply_gradient(plain, NULL, &four_buffer), DIST_ERR_INVALID_ARGUMENT,
                    "without an optimizer");
  /* Wrong dtype and count. */
  double four64[4] = {0};
  dist_buffer_t four64_buffer = buffer_of(four64, 4, DIST_DTYPE_F64);
  assert_dist_error(dist_variable_assign(plain, NULL, &four64_buffer), DIST_ERR_INVALID_ARGUMENT, "f32", "f64");
  dist_buffer_t three = buffer_of(four, 3, DIST_DTYPE_F32);
  assert_dist_error(dist_variable_read(plain, NULL, &three), DIST_ERR_INVALID_ARGUMENT, "4 elements", "3");
  int32_t server = -1;
  uint64_t first = 0, rows = 0;
  assert_dist_error(dist_variable_shard(plain, 1, &server, &first, &rows), DIST_ERR_INVALID_ARGUMENT, "shard 1");
  assert_dist_error(dist_variable_shard(plain, 0, NULL, &first, &rows), DIST_ERR_INVALID_ARGUMENT, "server");
  /* Destroyed, the name can be created again and finds its values. */
  assert_dist_ok(dist_variable_assign(plain, NULL, &four_buffer));
  dist_variable_destroy(plain);
  plain = create_variable(strategy, &options);
  float back[4];
  read_all(plain, back, 4, DIST_DTYPE_F32);
  assert_memory_equal(back, four, sizeof back);
  /* Created again, it must ask for the layout its shards have on the servers. */
  dist_variable_destroy(plain);
  dist_variable_options_t resharded = options;
  resharded.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS;
  resharded.num_shards = 2;
  assert_dist_error(dist_variable_create(strategy, &resharded, &v), DIST_ERR_INVALID_ARGUMENT, "bad.plain",
                    "in 1 shards", "asks for 2");
  const int64_t other_shape[1] = {5};
  dist_variable_options_t reshaped = variable_options("bad.plain", DIST_DTYPE_F32, other_shape, 1);
  assert_dist_error(dist_variable_create(strategy, &reshaped, &v), DIST_ERR_INVALID_ARGUMENT, "another shape");
  assert_null(v);
  plain = create_variable(strategy, &options);

  /* Another strategy's variables: not on the servers, or not colocatable. */
  dist_strategy_t* one = make_strategy(DIST_STRATEGY_ONE_DEVICE, 1);
  options = variable_options("local", DIST_DTYPE_F32, shape, 1);
  dist_variable_t* local = create_variable(one, &options);
  assert_dist_error(dist_variable_apply_gradient(local, NULL, &four_buffer), DIST_ERR_INVALID_ARGUMENT,
                    "only variables of a PARAMETER_SERVER strategy", "OneDeviceStrategy");
  const int64_t row = 0;
  dist_buffer_t one_row = buffer_of(four, 1, DIST_DTYPE_F32);
  assert_dist_error(dist_variable_read_rows(local, NULL, &row, 1, &one_row), DIST_ERR_INVALID_ARGUMENT,
                    "PARAMETER_SERVER");
  int32_t count = -1;
  assert_dist_ok(dist_variable_num_shards(local, &count));
  assert_int_equal(count, 0);
  options = variable_options("bad.colocated", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_COLOCATE_WITH;
  options.colocate_with = local;
  assert_dist_error(dist_variable_create(strategy, &options, &v), DIST_ERR_INVALID_ARGUMENT, "colocate_with",
                    "same ParameterServerStrategy");
  /* PARAMETER_SERVER's options on another kind. */
  options = variable_options("local.sharded", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_NUM_SHARDS;
  options.num_shards = 2;
  assert_dist_error(dist_variable_create(one, &options, &v), DIST_ERR_INVALID_ARGUMENT, "PARAMETER_SERVER",
                    "OneDeviceStrategy");
  options = variable_options("local.optimizer", DIST_DTYPE_F32, shape, 1);
  options.field_mask |= DIST_VARIABLE_OPT_OPTIMIZER;
  options.optimizer = &sgd;
  assert_dist_error(dist_variable_create(one, &options, &v), DIST_ERR_INVALID_ARGUMENT, "PARAMETER_SERVER");
  dist_strategy_options_t so = DIST_STRATEGY_OPTIONS_INIT;
  so.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_PLACEMENT;
  so.kind = DIST_STRATEGY_MIRRORED;
  dist_strategy_t* s = NULL;
  assert_dist_error(dist_strategy_create(NULL, &so, &s), DIST_ERR_INVALID_ARGUMENT, "placement", "PARAMETER_SERVER");
  so.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER;
  so.cluster = cluster;
  assert_dist_error(dist_strategy_create(NULL, &so, &s), DIST_ERR_INVALID_ARGUMENT, "cluster", "PARAMETER_SERVER");
  /* A server variable given to the workers' apply_gradients. */
  dist_optimizer_t* optimizer = NULL;
  assert_dist_ok(dist_optimizer_create(NULL, &optimizer));
  assert_dist_error(dist_strategy_apply_gradients(strategy, &plain, &four_buffer, 1, optimizer),
                    DIST_ERR_INVALID_ARGUMENT, "parameter servers", "dist_variable_apply_gradient");
  dist_optimizer_destroy(optimizer);

  /* Strategy creation: no ps job, no cluster, no token, a bad placement. */
  so = (dist_strategy_options_t)DIST_STRATEGY_OPTIONS_INIT;
  so.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_TOKEN;
  so.kind = DIST_STRATEGY_PARAMETER_SERVER;
  so.token = kToken;
  assert_dist_error(dist_strategy_create(NULL, &so, &s), DIST_ERR_INVALID_ARGUMENT, "'ps' job");
  dist_cluster_t* no_ps = cluster_from("{\"cluster\": {\"worker\": [\"127.0.0.1:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}");
  so.field_mask |= DIST_STRATEGY_OPT_CLUSTER;
  so.cluster = no_ps;
  assert_dist_error(dist_strategy_create(NULL, &so, &s), DIST_ERR_INVALID_ARGUMENT, "ps");
  so.cluster = cluster;
  so.field_mask |= DIST_STRATEGY_OPT_PLACEMENT;
  so.placement = 7;
  assert_dist_error(dist_strategy_create(NULL, &so, &s), DIST_ERR_INVALID_ARGUMENT, "placement 7");
  so.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER;
  char* saved_token = getenv("DIST_CLUSTER_TOKEN") ? strdup(getenv("DIST_CLUSTER_TOKEN")) : NULL;
  char* saved_file = getenv("DIST_CLUSTER_TOKEN_FILE") ? strdup(getenv("DIST_CLUSTER_TOKEN_FILE")) : NULL;
  unsetenv("DIST_CLUSTER_TOKEN");
  unsetenv("DIST_CLUSTER_TOKEN_FILE");
  dist_status_t no_token = dist_strategy_create(NULL, &so, &s);
  if (saved_token) setenv("DIST_CLUSTER_TOKEN", saved_token, 1);
  if (saved_file) setenv("DIST_CLUSTER_TOKEN_FILE", saved_file, 1);
  free(saved_token);
  free(saved_file);
  assert_int_not_equal(no_token, DIST_OK);
  assert_non_null(strstr(dist_last_error(), "token"));
  assert_null(s);
  /* The wrong token: the server refuses the first call. */
  so.field_mask |= DIST_STRATEGY_OPT_TOKEN;
  so.token = "not-the-token";
  assert_dist_ok(dist_strategy_create(NULL, &so, &s));
  options = variable_options("bad.token", DIST_DTYPE_F32, shape, 1);
  assert_int_not_equal(dist_variable_create(s, &options, &v), DIST_OK);
  assert_null(v);
  dist_strategy_destroy(s);

  dist_variable_destroy(local);
  dist_strategy_destroy(one);
  dist_variable_destroy(plain);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(no_ps);
  dist_cluster_destroy(cluster);
}

/* With a context (one worker here), its cluster and rank are the strategy's;
 * options.cluster is then refused. */
static void test_strategy_over_a_context(void** state) {
  (void)state;
  char json[512];
  snprintf(json, sizeof json,
           "{\"cluster\": {\"ps\": [\"127.0.0.1:%d\", \"127.0.0.1:%d\"], \"chief\": [\"127.0.0.1:%d\"]}, "
           "\"task\": {\"type\": \"chief\", \"index\": 0}}",
           ports.ports[0], ports.ports[1], ports.ports[2]);
  dist_cluster_t* cluster = cluster_from(json);
  dist_context_options_t context_options = DIST_CONTEXT_OPTIONS_INIT;
  context_options.field_mask = DIST_CONTEXT_OPT_TOKEN;
  context_options.token = kToken;
  dist_context_t* context = NULL;
  assert_dist_ok(dist_context_create(cluster, &context_options, &context));
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_TOKEN | DIST_STRATEGY_OPT_CLUSTER;
  options.kind = DIST_STRATEGY_PARAMETER_SERVER;
  options.token = kToken;
  options.cluster = cluster;
  dist_strategy_t* strategy = NULL;
  assert_dist_error(dist_strategy_create(context, &options, &strategy), DIST_ERR_INVALID_ARGUMENT,
                    "cluster must be unset with a context");
  options.field_mask &= ~DIST_STRATEGY_OPT_CLUSTER;
  assert_dist_ok(dist_strategy_create(context, &options, &strategy));
  const dist_cluster_t* strategy_cluster = NULL;
  const char* task_type = NULL;
  int32_t index = -1, workers = 0, kind = -1;
  assert_dist_ok(dist_strategy_cluster(strategy, &strategy_cluster));
  assert_non_null(strategy_cluster);
  assert_dist_ok(dist_strategy_task_type(strategy, &task_type));
  assert_string_equal(task_type, "chief");
  assert_dist_ok(dist_strategy_worker_index(strategy, &index, &workers));
  assert_int_equal(index, 0);
  assert_int_equal(workers, 1);
  assert_dist_ok(dist_strategy_kind(strategy, &kind));
  assert_int_equal(kind, DIST_STRATEGY_PARAMETER_SERVER);
  dist_variable_t* v = sharded(strategy, "context.v", DIST_DTYPE_F64, 3, 2, 2);
  double values[6] = {1, 2, 3, 4, 5, 6}, back[6];
  dist_buffer_t buffer = buffer_of(values, 6, DIST_DTYPE_F64);
  assert_dist_ok(dist_variable_assign(v, NULL, &buffer));
  read_all(v, back, 6, DIST_DTYPE_F64);
  assert_memory_equal(back, values, sizeof back);
  /* The strategy's variables keep it alive: destroyed in either order. */
  dist_strategy_destroy(strategy);
  read_all(v, back, 6, DIST_DTYPE_F64);
  assert_memory_equal(back, values, sizeof back);
  dist_variable_destroy(v);
  dist_context_destroy(context);
  dist_cluster_destroy(cluster);
}

/* Option structs from an older binding are shorter: the fields past the ones
 * whose bits are set must never be read. Here they hold garbage. */
static void test_only_masked_fields_are_read(void** state) {
  (void)state;
  dist_cluster_t* cluster = shared_cluster(0);
  dist_strategy_options_t so;
  memset(&so, 0xA5, sizeof so);
  so.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER | DIST_STRATEGY_OPT_TOKEN;
  so.kind = DIST_STRATEGY_PARAMETER_SERVER;
  so.cluster = cluster;
  so.token = kToken;
  dist_strategy_t* strategy = NULL;
  assert_dist_ok(dist_strategy_create(NULL, &so, &strategy));
  dist_optimizer_options_t optimizer;
  memset(&optimizer, 0xA5, sizeof optimizer);
  optimizer.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_LEARNING_RATE;
  optimizer.kind = DIST_OPTIMIZER_ADAGRAD;
  optimizer.learning_rate = 1.0;
  dist_variable_options_t options;
  memset(&options, 0xA5, sizeof options);
  const int64_t shape[1] = {2};
  options.field_mask = DIST_VARIABLE_OPT_NAME | DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_SHAPE |
                       DIST_VARIABLE_OPT_OPTIMIZER;
  options.name = "masked";
  options.dtype = DIST_DTYPE_F64;
  options.shape = shape;
  options.rank = 1;
  options.optimizer = &optimizer;
  dist_variable_t* v = create_variable(strategy, &options);
  int32_t count = 0;
  assert_dist_ok(dist_variable_num_shards(v, &count));
  assert_int_equal(count, 1);
  double g[2] = {0.5, -2.0}, w[2];
  dist_buffer_t gb = buffer_of(g, 2, DIST_DTYPE_F64);
  assert_dist_ok(dist_variable_apply_gradient(v, NULL, &gb));
  read_all(v, w, 2, DIST_DTYPE_F64);
  for (int i = 0; i < 2; ++i) assert_true(fabs(w[i] + g[i] / (sqrt(0.1 + g[i] * g[i]) + 1e-7)) < 1e-12);
  dist_variable_destroy(v);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--worker") == 0) return worker_main(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_placement, kill_test_processes),
      cmocka_unit_test_teardown(test_read_assign_add_sub, kill_test_processes),
      cmocka_unit_test_teardown(test_replica_context_updates, kill_test_processes),
      cmocka_unit_test_teardown(test_server_optimizers, kill_test_processes),
      cmocka_unit_test_teardown(test_async_integer_adds_from_two_workers, kill_test_processes),
      cmocka_unit_test_teardown(test_sync_rounds_two_workers, kill_test_processes),
      cmocka_unit_test_teardown(test_sync_staleness, kill_test_processes),
      cmocka_unit_test_teardown(test_sparse_rows, kill_test_processes),
      cmocka_unit_test_teardown(test_checkpoint_round_trip_and_resharding, kill_test_processes),
      cmocka_unit_test_teardown(test_ps_killed_and_restarted, kill_test_processes),
      cmocka_unit_test_teardown(test_bad_input, kill_test_processes),
      cmocka_unit_test_teardown(test_strategy_over_a_context, kill_test_processes),
      cmocka_unit_test_teardown(test_only_masked_fields_are_read, kill_test_processes),
  };
  return cmocka_run_group_tests(tests, start_shared_servers, stop_shared_servers);
}
