/* The dist-run launcher, run as a user runs it: its path comes from the DIST_RUN
 * environment variable (set by tests/CMakeLists.txt); the tasks are the small
 * shell scripts in tests/dist_run_programs/, run through /bin/sh. dist-run's
 * stdout and stderr go to files in a per-test directory, which the tasks also
 * use to say they are ready. Every run is bounded: a dist-run that overstays is
 * killed and the test fails.
 *
 * One file past 500 lines: each behaviour of the launcher (exit codes, signals,
 * output relay, tokens) is a case of its own over the one bounded-run harness. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <distribute/c_api.h>

enum { kOutputSize = 1 << 18, kPathSize = 1024, kMaxArgs = 32, kMaxTasks = 16 };

/* One dist-run process and what it printed. */
typedef struct {
  pid_t pid;          /* 0 when none is running */
  double started;     /* monotonic seconds */
  double seconds;     /* how long it ran */
  int exit_code;      /* -1 when it did not exit normally */
  char out[kOutputSize];
  char err[kOutputSize];
} launch_t;

static launch_t run;
static char work_dir[64];   /* this test's temporary directory */
static char out_path[kPathSize];
static char err_path[kPathSize];

/* ---- helpers ------------------------------------------------------------------ */

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_seconds(double seconds) {
  struct timespec t;
  t.tv_sec = (time_t)seconds;
  t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* tests/dist_run_programs/<name>: DIST_RUN_PROGRAMS (set by tests/CMakeLists.txt),
 * else beside this source file when it was compiled by its absolute path (a
 * compiler cache may have made __FILE__ relative). */
static const char* program_path(const char* name) {
  static char path[kPathSize];
  const char* directory = getenv("DIST_RUN_PROGRAMS");
  if (directory != NULL && directory[0] != '\0') {
    snprintf(path, sizeof path, "%s/%s", directory, name);
    return path;
  }
  const char* slash = strrchr(__FILE__, '/');
  if (__FILE__[0] != '/' || slash == NULL) {
    fail_msg("cannot locate the test programs from %s: set DIST_RUN_PROGRAMS", __FILE__);
  }
  snprintf(path, sizeof path, "%.*s/dist_run_programs/%s", (int)(slash - __FILE__), __FILE__, name);
  return path;
}

static void read_file(const char* path, char* buffer, size_t size) {
  FILE* file = fopen(path, "r");
  size_t used = 0, got;
  buffer[0] = '\0';
  if (file == NULL) return;
  while (used + 1 < size && (got = fread(buffer + used, 1, size - 1 - used, file)) > 0) used += got;
  buffer[used] = '\0';
  fclose(file);
}

static void assert_contains(const char* text, const char* part) {
  if (strstr(text, part) == NULL) fail_msg("expected \"%s\" in:\n%s", part, text);
}

static void assert_lacks(const char* text, const char* part) {
  if (strstr(text, part) != NULL) fail_msg("did not expect \"%s\" in:\n%s", part, text);
}

/* Starts `dist-run args...` (NULL-terminated) with the variable `env_name` (unless
 * NULL) set to `env_value` in its environment; stdout and stderr go to files. */
static void start_with_env(const char* env_name, const char* env_value, const char* const* args) {
  const char* tool = getenv("DIST_RUN");
  const char* argv[kMaxArgs + 2];
  size_t n = 0;
  pid_t pid;
  if (tool == NULL) fail_msg("DIST_RUN is not set; run this test through ctest");
  argv[n++] = tool;
  for (; *args != NULL; ++args) {
    assert_true(n < kMaxArgs);
    argv[n++] = *args;
  }
  argv[n] = NULL;

  run.started = now_seconds();
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int sig;
    /* Should this test die, dist-run goes too (and takes its tasks along). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    /* dist-run starts with default signal handling, whatever ctest left. */
    for (sig = 1; sig < 32; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    }
    if (env_name != NULL) setenv(env_name, env_value, 1);
    execv(tool, (char* const*)argv);
    _exit(127);
  }
  run.pid = pid;
}

static void start(const char* const* args) { start_with_env(NULL, NULL, args); }

/* Waits up to `limit` seconds for dist-run to exit, then reads its output. An
 * overstaying dist-run is killed and the test fails. */
static void finish(double limit) {
  int status = 0;
  pid_t got;
  while ((got = waitpid(run.pid, &status, WNOHANG)) == 0 && now_seconds() - run.started < limit) {
    sleep_seconds(0.01);
  }
  run.seconds = now_seconds() - run.started;
  if (got == 0) {
    kill(run.pid, SIGKILL);
    waitpid(run.pid, NULL, 0);
    run.pid = 0;
    read_file(err_path, run.err, sizeof run.err);
    fail_msg("dist-run still running after %.1f s; stderr:\n%s", limit, run.err);
  }
  assert_int_equal(got, run.pid);
  run.pid = 0;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  read_file(out_path, run.out, sizeof run.out);
  read_file(err_path, run.err, sizeof run.err);
}

static void run_to_end(const char* const* args, double limit) {
  start(args);
  finish(limit);
}

static void assert_exit_code(int expected) {
  if (run.exit_code != expected) {
    fail_msg("dist-run exited with %d, expected %d; stdout:\n%s\nstderr:\n%s", run.exit_code,
             expected, run.out, run.err);
  }
}

/* A file in this test's directory. */
static const char* work_file(const char* name) {
  static char path[kPathSize];
  snprintf(path, sizeof path, "%s/%s", work_dir, name);
  return path;
}

static int count_ready_tasks(void) {
  DIR* dir = opendir(work_dir);
  struct dirent* entry;
  int count = 0;
  assert_non_null(dir);
  while ((entry = readdir(dir)) != NULL) {
    size_t length = strlen(entry->d_name);
    if (length > 6 && strcmp(entry->d_name + length - 6, ".ready") == 0) ++count;
  }
  closedir(dir);
  return count;
}

static void wait_until_ready(int tasks) {
  double deadline = now_seconds() + 10;
  while (count_ready_tasks() < tasks) {
    if (now_seconds() > deadline) fail_msg("only %d of %d tasks became ready", count_ready_tasks(), tasks);
    sleep_seconds(0.02);
  }
}

/* The value after `key` on the output line of `task` ("[worker:0] KEY..."),
 * copied into `value`; fails if there is no such line. */
static void task_line(const char* output, const char* task, const char* key, char* value, size_t size) {
  char start[128];
  const char* line = output;
  snprintf(start, sizeof start, "[%s] %s", task, key);
  while (line != NULL && *line != '\0') {
    const char* end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    if (strncmp(line, start, strlen(start)) == 0) {
      size_t value_length = length - strlen(start);
      if (value_length >= size) fail_msg("line too long: %.*s", (int)length, line);
      memcpy(value, line + strlen(start), value_length);
      value[value_length] = '\0';
      return;
    }
    line = end ? end + 1 : NULL;
  }
  fail_msg("no line \"%s...\" in:\n%s", start, output);
}

/* The lines of `output` that start with `prefix`, in order (tasks' lines
 * interleave, each task's own stay in order). */
static const char* lines_of(const char* output, const char* prefix) {
  static char lines[kOutputSize];
  size_t used = 0;
  const char* line = output;
  lines[0] = '\0';
  while (*line != '\0') {
    const char* end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
    if (strncmp(line, prefix, strlen(prefix)) == 0) {
      assert_true(used + length < sizeof lines);
      memcpy(lines + used, line, length);
      used += length;
      lines[used] = '\0';
    }
    line += length;
  }
  return lines;
}

/* The pids the tasks printed ("[task] pid N" lines). */
static int printed_pids(pid_t* pids, int max) {
  int count = 0;
  const char* at = run.out;
  while ((at = strstr(at, "] pid ")) != NULL && count < max) {
    pids[count++] = (pid_t)strtol(at + 6, NULL, 10);
    at += 6;
  }
  return count;
}

/* Exited and reaped: dist-run reaps its tasks before it exits. */
static void assert_processes_gone(const pid_t* pids, int count) {
  int i;
  for (i = 0; i < count; ++i) {
    assert_true(pids[i] > 1);
    if (kill(pids[i], 0) == 0 || errno != ESRCH) fail_msg("task process %d is still alive", (int)pids[i]);
  }
}

/* Running, as opposed to gone or a zombie that whoever inherited it has not
 * reaped yet (processes dist-run did not start itself end up there). */
static int process_running(pid_t pid) {
  char path[64], stat[512];
  const char* state;
  if (kill(pid, 0) != 0) return 0;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  read_file(path, stat, sizeof stat);
  state = strrchr(stat, ')');
  return state != NULL && state[1] == ' ' && state[2] != 'Z' && state[2] != 'X';
}

static void wait_until_stopped(const pid_t* pids, int count, double limit) {
  double deadline = now_seconds() + limit;
  int i;
  for (i = 0; i < count; ++i) {
    while (process_running(pids[i])) {
      if (now_seconds() > deadline) fail_msg("process %d is still running", (int)pids[i]);
      sleep_seconds(0.02);
    }
  }
}

/* The cluster a task's TF_CONFIG resolves to (through the library, as the task
 * itself would), checked to be that task. */
static dist_cluster_t* task_cluster(const char* type, int32_t index) {
  char task[64], tf_config[4096], named[64];
  dist_cluster_t* cluster = NULL;
  const char* got_type = NULL;
  int32_t got_index = -2;
  dist_status_t status;
  snprintf(task, sizeof task, "%s:%d", type, (int)index);
  task_line(run.out, task, "TASK=", named, sizeof named);
  assert_string_equal(named, task);
  task_line(run.out, task, "TF_CONFIG=", tf_config, sizeof tf_config);
  status = dist_cluster_from_json(tf_config, &cluster);
  if (status != DIST_OK) fail_msg("%s: TF_CONFIG %s: %s", task, tf_config, dist_last_error());
  assert_int_equal(dist_cluster_task_type(cluster, &got_type), DIST_OK);
  assert_string_equal(got_type, type);
  assert_int_equal(dist_cluster_task_id(cluster, &got_index), DIST_OK);
  assert_int_equal(got_index, index);
  return cluster;
}

static int32_t tasks_in(const dist_cluster_t* cluster, const char* job) {
  int32_t n = -1;
  assert_int_equal(dist_cluster_num_tasks(cluster, job, &n), DIST_OK);
  return n;
}

static const char* address_in(const dist_cluster_t* cluster, const char* job, int32_t index) {
  const char* address = NULL;
  assert_int_equal(dist_cluster_task_address(cluster, job, index, &address), DIST_OK);
  return address;
}

/* Every task's view of the cluster is the first task's: same jobs, same addresses. */
static void assert_same_cluster(const dist_cluster_t* a, const dist_cluster_t* b) {
  size_t jobs_a = 0, jobs_b = 0, j;
  assert_int_equal(dist_cluster_num_jobs(a, &jobs_a), DIST_OK);
  assert_int_equal(dist_cluster_num_jobs(b, &jobs_b), DIST_OK);
  assert_int_equal(jobs_a, jobs_b);
  for (j = 0; j < jobs_a; ++j) {
    const char* job = NULL;
    int32_t i;
    assert_int_equal(dist_cluster_job_name(a, j, &job), DIST_OK);
    assert_int_equal(tasks_in(a, job), tasks_in(b, job));
    for (i = 0; i < tasks_in(a, job); ++i) {
      assert_string_equal(address_in(a, job, i), address_in(b, job, i));
    }
  }
}

/* Checks that every address of the cluster is 127.0.0.1:<port> with distinct
 * ports below the ephemeral range (20000-31999), and that there are `expected`
 * of them. */
static void assert_distinct_loopback_ports(const dist_cluster_t* cluster, int expected) {
  long ports[kMaxTasks];
  int count = 0, k;
  size_t jobs = 0, j;
  assert_int_equal(dist_cluster_num_jobs(cluster, &jobs), DIST_OK);
  for (j = 0; j < jobs; ++j) {
    const char* job = NULL;
    int32_t i;
    assert_int_equal(dist_cluster_job_name(cluster, j, &job), DIST_OK);
    for (i = 0; i < tasks_in(cluster, job); ++i) {
      const char* address = address_in(cluster, job, i);
      char* end = NULL;
      long port;
      if (strncmp(address, "127.0.0.1:", 10) != 0) fail_msg("address %s is not on loopback", address);
      port = strtol(address + 10, &end, 10);
      assert_true(*end == '\0');
      if (port < 20000 || port > 31999) fail_msg("port %ld is outside 20000-31999", port);
      for (k = 0; k < count; ++k) {
        if (ports[k] == port) fail_msg("port %ld is given to two tasks", port);
      }
      assert_true(count < kMaxTasks);
      ports[count++] = port;
    }
  }
  assert_int_equal(count, expected);
}

/* ---- fixtures ----------------------------------------------------------------- */

static int make_work_dir(void** state) {
  (void)state;
  snprintf(work_dir, sizeof work_dir, "/tmp/test_dist_run.XXXXXX");
  if (mkdtemp(work_dir) == NULL) return -1;
  snprintf(out_path, sizeof out_path, "%s.out", work_dir);
  snprintf(err_path, sizeof err_path, "%s.err", work_dir);
  memset(&run, 0, sizeof run);
  return 0;
}

/* Kills a dist-run a failed test left behind, and removes the files. */
static int remove_work_dir(void** state) {
  DIR* dir;
  struct dirent* entry;
  (void)state;
  if (run.pid > 0) {
    kill(run.pid, SIGKILL);
    waitpid(run.pid, NULL, 0);
    run.pid = 0;
  }
  dir = opendir(work_dir);
  if (dir != NULL) {
    while ((entry = readdir(dir)) != NULL) {
      if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
        unlink(work_file(entry->d_name));
      }
    }
    closedir(dir);
  }
  rmdir(work_dir);
  unlink(out_path);
  unlink(err_path);
  return 0;
}

/* ---- cluster layout ----------------------------------------------------------- */

static void test_three_workers_share_one_cluster(void** state) {
  const char* args[] = {"-n", "3", "/bin/sh", program_path("show_env.sh"), NULL};
  dist_cluster_t* clusters[3];
  int32_t i;
  (void)state;
  run_to_end(args, 20);
  assert_exit_code(0);
  for (i = 0; i < 3; ++i) {
    clusters[i] = task_cluster("worker", i);
    assert_int_equal(tasks_in(clusters[i], "worker"), 3);
  }
  for (i = 0; i < 3; ++i) {
    size_t jobs = 0;
    assert_int_equal(dist_cluster_num_jobs(clusters[i], &jobs), DIST_OK);
    assert_int_equal(jobs, 1);
    assert_same_cluster(clusters[0], clusters[i]);
  }
  assert_distinct_loopback_ports(clusters[0], 3);
  for (i = 0; i < 3; ++i) dist_cluster_destroy(clusters[i]);
  assert_lacks(run.out, "[worker:3]");
  assert_string_equal(run.err, "");
}

static void test_chief_ps_and_evaluator_jobs(void** state) {
  const char* args[] = {"-n",       "2",  "--ps", "2", "--chief", "--evaluator",
                        "/bin/sh", program_path("show_env.sh"), NULL};
  dist_cluster_t* chief;
  dist_cluster_t* others[5];
  size_t jobs = 0;
  int k;
  (void)state;
  run_to_end(args, 20);
  assert_exit_code(0);
  chief = task_cluster("chief", 0);
  others[0] = task_cluster("worker", 0);
  others[1] = task_cluster("worker", 1);
  others[2] = task_cluster("ps", 0);
  others[3] = task_cluster("ps", 1);
  others[4] = task_cluster("evaluator", 0);

  assert_int_equal(dist_cluster_num_jobs(chief, &jobs), DIST_OK);
  assert_int_equal(jobs, 3); /* chief, ps, worker: the evaluator is outside, as in TF */
  assert_int_equal(tasks_in(chief, "chief"), 1);
  assert_int_equal(tasks_in(chief, "worker"), 2);
  assert_int_equal(tasks_in(chief, "ps"), 2);
  assert_distinct_loopback_ports(chief, 5);
  for (k = 0; k < 5; ++k) {
    assert_same_cluster(chief, others[k]);
    dist_cluster_destroy(others[k]);
  }
  dist_cluster_destroy(chief);
}

/* ---- token -------------------------------------------------------------------- */

static void test_random_token_is_shared_and_never_printed(void** state) {
  const char* args[] = {"-n", "3", "/bin/sh", program_path("save_token.sh"), work_dir, NULL};
  char tokens[3][256], line[256];
  int i;
  size_t k;
  (void)state;
  /* A token in dist-run's own environment is replaced, not passed on. */
  start_with_env("DIST_CLUSTER_TOKEN_FILE", "/nonexistent/stale", args);
  finish(20);
  assert_exit_code(0);
  for (i = 0; i < 3; ++i) {
    char name[32];
    snprintf(name, sizeof name, "worker:%d", i);
    read_file(work_file(name), tokens[i], sizeof tokens[i]);
    assert_int_equal(strlen(tokens[i]), 64);
    for (k = 0; k < 64; ++k) {
      if (strchr("0123456789abcdef", tokens[i][k]) == NULL) fail_msg("token is not hex: %s", tokens[i]);
    }
    assert_string_equal(tokens[i], tokens[0]);
    task_line(run.out, name, "saved", line, sizeof line);
    task_line(run.out, name, "TOKEN_FILE=", line, sizeof line);
    assert_string_equal(line, ""); /* the shell's token file is not passed on */
  }
  assert_lacks(run.out, tokens[0]);
  assert_lacks(run.err, tokens[0]);

  /* Two jobs never share a token. */
  unlink(work_file("worker:0"));
  run_to_end(args, 20);
  assert_exit_code(0);
  read_file(work_file("worker:0"), tokens[1], sizeof tokens[1]);
  assert_int_equal(strlen(tokens[1]), 64);
  assert_string_not_equal(tokens[0], tokens[1]);
}

static void test_token_file_is_passed_by_path(void** state) {
  const char* token_file = work_file("token");
  char path[kPathSize], shown[kPathSize];
  const char* args[] = {"-n", "2", "--token-file", path, "/bin/sh", program_path("show_env.sh"), NULL};
  FILE* file;
  int i;
  (void)state;
  snprintf(path, sizeof path, "%s", token_file);
  file = fopen(path, "w");
  assert_non_null(file);
  fputs("a-secret-the-tasks-read-themselves\n", file);
  fclose(file);

  start_with_env("DIST_CLUSTER_TOKEN", "stale-token-from-the-shell", args);
  finish(20);
  assert_exit_code(0);
  for (i = 0; i < 2; ++i) {
    char task[32];
    snprintf(task, sizeof task, "worker:%d", i);
    task_line(run.out, task, "TOKEN_FILE=", shown, sizeof shown);
    assert_string_equal(shown, path);
    task_line(run.out, task, "TOKEN_SET=", shown, sizeof shown);
    assert_string_equal(shown, ""); /* the shell's DIST_CLUSTER_TOKEN is not passed on */
  }
}

/* ---- failures ----------------------------------------------------------------- */

static void test_failing_task_stops_the_others(void** state) {
  const char* args[] = {"-n", "3", "/bin/sh", program_path("fail_one.sh"), work_dir, "worker:1", "3", "2", NULL};
  pid_t pids[kMaxTasks];
  (void)state;
  run_to_end(args, 20);
  assert_exit_code(3);
  /* SIGTERM ends the sleepers at once: no waiting for the 5 s grace period. */
  if (run.seconds > 4.5) fail_msg("dist-run took %.1f s to stop the job", run.seconds);
  assert_contains(run.err, "dist-run: worker:1 exited with status 3\n");
  assert_contains(run.err, "[worker:1] failing now\n");
  assert_int_equal(printed_pids(pids, kMaxTasks), 2);
  assert_processes_gone(pids, 2);
}

static void test_task_killed_by_signal(void** state) {
  const char* args[] = {"-n", "2", "/bin/sh", program_path("fail_one.sh"), work_dir, "worker:0", "kill", "1", NULL};
  pid_t pids[kMaxTasks];
  (void)state;
  run_to_end(args, 20);
  assert_exit_code(128 + SIGKILL);
  assert_contains(run.err, "dist-run: worker:0 killed by signal 9");
  assert_int_equal(printed_pids(pids, kMaxTasks), 1);
  assert_processes_gone(pids, 1);
}

static void test_task_ignoring_sigterm_is_killed_after_the_grace_period(void** state) {
  const char* args[] = {"-n", "2", "--grace-period", "0.5", "/bin/sh", program_path("fail_one.sh"),
                        work_dir, "worker:1", "5", "1", "ignores_sigterm", NULL};
  pid_t pids[kMaxTasks];
  (void)state;
  run_to_end(args, 20);
  assert_exit_code(5);
  if (run.seconds < 0.5 || run.seconds > 4) fail_msg("dist-run stopped after %.1f s", run.seconds);
  assert_contains(run.err, "dist-run: worker:1 exited with status 5\n");
  assert_contains(run.err, "killing them");
  assert_int_equal(printed_pids(pids, kMaxTasks), 1);
  assert_processes_gone(pids, 1);
}

/* ---- signals and timeout -------------------------------------------------------- */

static void test_sigterm_stops_every_task(void** state) {
  const char* args[] = {"-n", "3", "/bin/sh", program_path("sleeper.sh"), work_dir, NULL};
  pid_t pids[kMaxTasks];
  (void)state;
  start(args);
  wait_until_ready(3);
  run.started = now_seconds();
  kill(run.pid, SIGTERM);
  finish(5);
  assert_exit_code(128 + SIGTERM);
  if (run.seconds > 4) fail_msg("dist-run took %.1f s to stop after SIGTERM", run.seconds);
  assert_contains(run.err, "received SIGTERM");
  assert_int_equal(printed_pids(pids, kMaxTasks), 3);
  assert_processes_gone(pids, 3);
}

static void test_sigint_is_forwarded_to_the_tasks(void** state) {
  const char* args[] = {"-n", "2", "--ps", "1", "/bin/sh", program_path("graceful.sh"), work_dir, NULL};
  (void)state;
  start(args);
  wait_until_ready(3);
  kill(run.pid, SIGINT);
  finish(10);
  /* The tasks leave cleanly, but the job was interrupted. */
  assert_exit_code(128 + SIGINT);
  assert_contains(run.out, "[worker:0] got INT\n");
  assert_contains(run.out, "[worker:1] got INT\n");
  assert_contains(run.out, "[ps:0] got INT\n");
  assert_lacks(run.err, "exited with status");
}

static void test_second_signal_kills(void** state) {
  const char* args[] = {"-n", "2", "--grace-period", "30", "/bin/sh", program_path("ignores_sigterm.sh"), work_dir, NULL};
  pid_t pids[kMaxTasks];
  int status;
  (void)state;
  start(args);
  wait_until_ready(2);
  kill(run.pid, SIGTERM);
  sleep_seconds(0.5);
  /* The tasks ignore SIGTERM, so dist-run is still waiting for them... */
  assert_int_equal(waitpid(run.pid, &status, WNOHANG), 0);
  /* ...until the second signal. */
  run.started = now_seconds();
  kill(run.pid, SIGTERM);
  finish(5);
  assert_exit_code(128 + SIGTERM);
  if (run.seconds > 3) fail_msg("dist-run took %.1f s after the second SIGTERM", run.seconds);
  assert_contains(run.err, "again; killing the tasks");
  assert_int_equal(printed_pids(pids, kMaxTasks), 2);
  assert_processes_gone(pids, 2);
}

/* A dist-run that is killed outright cannot stop its tasks: the kernel does it
 * (PR_SET_PDEATHSIG). */
static void test_tasks_die_with_dist_run(void** state) {
  const char* args[] = {"-n", "3", "/bin/sh", program_path("sleeper.sh"), work_dir, NULL};
  pid_t pids[kMaxTasks];
  double deadline;
  int status;
  (void)state;
  start(args);
  wait_until_ready(3);
  /* The pid lines are printed before the ready marks, but may still be on their
   * way through dist-run. */
  deadline = now_seconds() + 10;
  do {
    read_file(out_path, run.out, sizeof run.out);
    if (now_seconds() > deadline) fail_msg("the tasks' pids never arrived:\n%s", run.out);
    sleep_seconds(0.02);
  } while (printed_pids(pids, kMaxTasks) < 3);
  kill(run.pid, SIGKILL);
  waitpid(run.pid, &status, 0);
  run.pid = 0;
  wait_until_stopped(pids, 3, 5);
}

/* A subprocess a task leaves behind neither keeps the job open (it holds the
 * task's stdout) nor outlives dist-run. */
static void test_leftover_subprocess_is_stopped(void** state) {
  const char* args[] = {"-n", "1", "/bin/sh", program_path("background.sh"), NULL};
  pid_t pids[kMaxTasks];
  (void)state;
  run_to_end(args, 10);
  assert_exit_code(0);
  if (run.seconds > 4) fail_msg("dist-run took %.1f s", run.seconds);
  assert_contains(run.out, "[worker:0] done\n");
  assert_int_equal(printed_pids(pids, kMaxTasks), 1);
  wait_until_stopped(pids, 1, 5);
}

static void test_timeout_exits_124(void** state) {
  const char* args[] = {"-n", "2", "--timeout", "1", "/bin/sh", program_path("sleeper.sh"), work_dir, NULL};
  pid_t pids[kMaxTasks];
  (void)state;
  run_to_end(args, 10);
  assert_exit_code(124);
  if (run.seconds < 0.9 || run.seconds > 4) fail_msg("timed out after %.1f s", run.seconds);
  assert_contains(run.err, "dist-run: timed out after 1 s");
  assert_int_equal(printed_pids(pids, kMaxTasks), 2);
  assert_processes_gone(pids, 2);
}

/* ---- argument errors ------------------------------------------------------------ */

static void expect_usage_error(const char* const* args, const char* message) {
  run_to_end(args, 10);
  assert_exit_code(2);
  assert_contains(run.err, message);
  assert_contains(run.err, "usage: dist-run -n N");
  assert_string_equal(run.out, "");
}

static void test_argument_errors(void** state) {
  const char* no_workers[] = {"/bin/true", NULL};
  const char* zero_workers[] = {"-n", "0", "/bin/true", NULL};
  const char* bad_count[] = {"-n", "many", "/bin/true", NULL};
  const char* unknown_flag[] = {"-n", "1", "--bogus", "/bin/true", NULL};
  const char* no_program[] = {"-n", "1", NULL};
  const char* no_value[] = {"-n", NULL};
  const char* bad_timeout[] = {"-n", "1", "--timeout", "soon", "/bin/true", NULL};
  const char* missing_token_file[] = {"-n", "1", "--token-file", "/nonexistent/token", "/bin/true", NULL};
  (void)state;
  expect_usage_error(no_workers, "dist-run: the number of workers (-n N) is required");
  expect_usage_error(zero_workers, "dist-run: -n: '0' is out of range");
  expect_usage_error(bad_count, "dist-run: -n: 'many' is not an integer");
  expect_usage_error(unknown_flag, "dist-run: unknown option '--bogus'");
  expect_usage_error(no_program, "dist-run: no program to run");
  expect_usage_error(no_value, "dist-run: -n needs a value");
  expect_usage_error(bad_timeout, "dist-run: --timeout: 'soon' is not a positive number of seconds");
  expect_usage_error(missing_token_file,
                     "dist-run: --token-file '/nonexistent/token': No such file or directory");
}

static void test_program_that_cannot_run(void** state) {
  const char* missing[] = {"-n", "2", "/nonexistent/program", NULL};
  const char* not_in_path[] = {"-n", "1", "dist-run-no-such-program", "arg", NULL};
  const char* not_executable[] = {"-n", "1", __FILE__, NULL};
  char message[kPathSize + 64];
  (void)state;
  run_to_end(missing, 10);
  assert_exit_code(127);
  assert_contains(run.err, "dist-run: cannot run '/nonexistent/program': No such file or directory\n");

  run_to_end(not_in_path, 10);
  assert_exit_code(127);
  assert_contains(run.err, "dist-run: cannot run 'dist-run-no-such-program': No such file or directory\n");

  run_to_end(not_executable, 10);
  assert_exit_code(127);
  snprintf(message, sizeof message, "dist-run: cannot run '%s': Permission denied\n", __FILE__);
  assert_contains(run.err, message);
}

static void test_help(void** state) {
  const char* args[] = {"--help", NULL};
  (void)state;
  run_to_end(args, 10);
  assert_exit_code(0);
  assert_contains(run.out, "usage: dist-run -n N");
  assert_contains(run.out, "--token-file");
  assert_string_equal(run.err, "");
}

/* ---- output relay -------------------------------------------------------------- */

static void test_partial_lines_and_stderr(void** state) {
  const char* args[] = {"-n", "2", "/bin/sh", program_path("partial_lines.sh"), NULL};
  int i;
  (void)state;
  run_to_end(args, 20);
  assert_exit_code(0);
  for (i = 0; i < 2; ++i) {
    char prefix[32], expected[128];
    snprintf(prefix, sizeof prefix, "[worker:%d] ", i);
    snprintf(expected, sizeof expected, "%sout first\n%sout partial\n", prefix, prefix);
    assert_string_equal(lines_of(run.out, prefix), expected);
    snprintf(expected, sizeof expected, "%serr first\n%serr partial\n", prefix, prefix);
    assert_string_equal(lines_of(run.err, prefix), expected);
  }
  assert_lacks(run.out, "err ");
  assert_lacks(run.err, "out ");
}

/* Four tasks printing at once: every line arrives whole, with its own task's
 * prefix, and each task's lines in order. */
static void test_concurrent_lines_never_mix(void** state) {
  enum { kTasks = 4, kLines = 400 };
  const char* args[] = {"-n", "4", "/bin/sh", program_path("chatter.sh"), "400", NULL};
  int next[kTasks] = {0};
  const char* line;
  (void)state;
  run_to_end(args, 30);
  assert_exit_code(0);
  for (line = run.out; *line != '\0';) {
    const char* end = strchr(line, '\n');
    int task = -1, task_again = -1, number = -1, used = 0;
    assert_non_null(end);
    if (sscanf(line, "[worker:%d] worker:%d line %d%n", &task, &task_again, &number, &used) != 3 ||
        line + used != end || task != task_again || task < 0 || task >= kTasks) {
      fail_msg("mixed line: %.*s", (int)(end - line), line);
    }
    if (number != next[task]) fail_msg("worker:%d printed line %d after %d", task, number, next[task] - 1);
    ++next[task];
    line = end + 1;
  }
  for (int task = 0; task < kTasks; ++task) assert_int_equal(next[task], kLines);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_three_workers_share_one_cluster, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_chief_ps_and_evaluator_jobs, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_random_token_is_shared_and_never_printed, make_work_dir,
                                      remove_work_dir),
      cmocka_unit_test_setup_teardown(test_token_file_is_passed_by_path, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_failing_task_stops_the_others, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_task_killed_by_signal, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_task_ignoring_sigterm_is_killed_after_the_grace_period,
                                      make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_sigterm_stops_every_task, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_sigint_is_forwarded_to_the_tasks, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_second_signal_kills, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_tasks_die_with_dist_run, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_leftover_subprocess_is_stopped, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_timeout_exits_124, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_argument_errors, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_program_that_cannot_run, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_help, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_partial_lines_and_stderr, make_work_dir, remove_work_dir),
      cmocka_unit_test_setup_teardown(test_concurrent_lines_never_mix, make_work_dir, remove_work_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
