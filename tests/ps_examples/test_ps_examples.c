/* The parameter-server examples as a user runs them: examples/parameter_server
 * under `dist-run -n 2 --ps 2 --ps-server` reaches the ONE_DEVICE accuracy
 * (run here as the reference) and leaves one complete checkpoint per epoch;
 * the embedding example learns; scripts/ps_recovery_demo survives a ps task
 * killed mid-training and fails when its accuracy check cannot be met; bad
 * command lines and a cluster without parameter servers are refused.
 * Every command runs in its own process group, bounded in time; the group is
 * killed by its id at the deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kOutputBytes = 1 << 20 };

static char output[kOutputBytes];

static const char* path_from(const char* variable) {
  const char* path = getenv(variable);
  if (path == NULL) fail_msg("%s is not set (run the suite through ctest)", variable);
  return path;
}

/* Runs argv (environment: the suite's, plus `extra` "NAME=value" or "NAME="
 * to unset, NULL-terminated) for at most `seconds`; `output` receives its
 * stdout and stderr. Returns the exit status, or -signal. */
static int run(const char* const* argv, const char* const* extra, double seconds) {
  char log[64];
  snprintf(log, sizeof log, "/tmp/dist-ps-examples-%d.log", (int)getpid());
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0); /* its own group: the deadline kills dist-run's or the demo's children too */
    const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const char* const* e = extra; e != NULL && *e != NULL; ++e) {
      char name[128];
      const char* equals = strchr(*e, '=');
      snprintf(name, sizeof name, "%.*s", (int)(equals - *e), *e);
      if (equals[1] == '\0') {
        unsetenv(name);
      } else {
        setenv(name, equals + 1, 1);
      }
    }
    execv(argv[0], (char* const*)argv);
    _exit(127);
  }
  setpgid(pid, pid);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9 > seconds) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    const struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  kill(-pid, SIGKILL); /* anything of the group still left */
  FILE* f = fopen(log, "r");
  const size_t n = f != NULL ? fread(output, 1, sizeof output - 1, f) : 0;
  output[n] = '\0';
  if (f != NULL) fclose(f);
  unlink(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

/* A loopback port in 20000..31999 bound (not listening) by this process, so
 * connecting to it is refused; *fd holds it until closed. */
static int hold_free_port(int* fd) {
  for (int port = 20000 + (int)(getpid() % 12000), tries = 0; tries < 12000; ++tries, port = port == 31999 ? 20000 : port + 1) {
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(*fd >= 0);
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(*fd, (struct sockaddr*)&address, sizeof address) == 0) return port;
    close(*fd);
  }
  fail_msg("no free loopback port in 20000..31999");
  return -1;
}

/* The test accuracy on the line "<label>: final loss ... test accuracy X". */
static double final_accuracy(const char* label) {
  char needle[96];
  snprintf(needle, sizeof needle, "%s: final loss", label);
  const char* line = strstr(output, needle);
  if (line == NULL) fail_msg("no '%s' line in:\n%s", needle, output);
  const char* at = strstr(line, "test accuracy ");
  assert_non_null(at);
  return atof(at + strlen("test accuracy "));
}

static int count_of(const char* needle) {
  int count = 0;
  for (const char* p = strstr(output, needle); p != NULL; p = strstr(p + 1, needle)) ++count;
  return count;
}

static void test_parameter_server_reaches_one_device_accuracy(void** state) {
  (void)state;
  const char* one_device[] = {path_from("DIST_ONE_DEVICE_EXAMPLE"), "20", NULL};
  assert_int_equal(run(one_device, NULL, 60), 0);
  const double reference = final_accuracy("one_device");

  char root[] = "/tmp/dist-ps-examples-ckpt-XXXXXX";
  assert_non_null(mkdtemp(root));
  const char* ps[] = {path_from("DIST_RUN"), "-n", "2", "--ps", "2", "--ps-server", "--timeout", "90", "--",
                      path_from("DIST_PS_EXAMPLE"), "20", "--checkpoint-dir", root, NULL};
  const int status = run(ps, NULL, 120);
  if (status != 0) fail_msg("dist-run exited %d:\n%s", status, output);
  const double accuracy = final_accuracy("[worker:0] parameter_server");
  /* The tolerance the demo states: 7 of the 360 test digits. */
  if (fabs(accuracy - reference) > 0.02) fail_msg("PS %.4f vs ONE_DEVICE %.4f:\n%s", accuracy, reference, output);
  /* Both workers trained every epoch; the first kernel is split over both servers. */
  assert_int_equal(count_of("[worker:0] epoch "), 20);
  assert_int_equal(count_of("[worker:1] epoch "), 20);
  assert_non_null(strstr(output, "dense/kernel    rows  0-31 on ps:0  rows 32-63 on ps:1"));
  assert_int_equal(count_of("saved checkpoint"), 20);
  /* One complete checkpoint per epoch, each a shard per server and a manifest; LATEST names the last. */
  for (int epoch = 1; epoch <= 20; ++epoch) {
    char file[256];
    struct stat info;
    for (int shard = 0; shard < 2; ++shard) {
      snprintf(file, sizeof file, "%s/ckpt-%d/shard-%05d-of-00002.ckpt", root, epoch, shard);
      if (stat(file, &info) != 0 || info.st_size == 0) fail_msg("%s is missing or empty", file);
    }
    snprintf(file, sizeof file, "%s/ckpt-%d/manifest.json", root, epoch);
    assert_int_equal(stat(file, &info), 0);
  }
  char latest[300], text[64] = {0};
  snprintf(latest, sizeof latest, "%s/LATEST", root);
  FILE* f = fopen(latest, "r");
  assert_non_null(f);
  assert_true(fgets(text, sizeof text, f) != NULL);
  fclose(f);
  assert_non_null(strstr(text, "ckpt-20"));
  char remove[300];
  snprintf(remove, sizeof remove, "rm -rf '%s'", root);
  assert_int_equal(system(remove), 0);
}

static void test_embedding_example_learns_by_rows(void** state) {
  (void)state;
  const char* ps[] = {path_from("DIST_RUN"), "-n", "2", "--ps", "2", "--ps-server", "--timeout", "90", "--",
                      path_from("DIST_PS_EMBEDDING_EXAMPLE"), "5", NULL};
  const int status = run(ps, NULL, 120);
  if (status != 0) fail_msg("dist-run exited %d:\n%s", status, output);
  const double accuracy = final_accuracy("[worker:0] parameter_server_embedding");
  if (accuracy < 0.85) fail_msg("embedding test accuracy %.4f < 0.85:\n%s", accuracy, output);
  /* Each server holds half of the table; a step touches part of it only. */
  assert_non_null(strstr(output, "rows 0-543 on ps:0  rows 544-1087 on ps:1"));
  const char* average = strstr(output, "[worker:1] worker 1: a step pulled and pushed ");
  assert_non_null(average);
  const int rows = atoi(average + strlen("[worker:1] worker 1: a step pulled and pushed "));
  assert_true(rows > 0 && rows < 1088);
}

static void test_recovery_demo(void** state) {
  (void)state;
  const char* demo[] = {path_from("DIST_PS_RECOVERY_DEMO"), "--build", path_from("DIST_BUILD_DIR"), "--epochs", "6",
                        "--kill-after-epoch", "2", "--timeout", "100", NULL};
  const int status = run(demo, NULL, 130);
  if (status != 0) fail_msg("ps_recovery_demo exited %d:\n%s", status, output);
  assert_non_null(strstr(output, "killed ps:1 (pid "));
  /* The workers were told which server failed, waited, and reconnected. */
  assert_true(strstr(output, "failed: DIST_ERR_PEER_FAILED: ") != NULL ||
              strstr(output, "failed: DIST_ERR_UNAVAILABLE: ") != NULL);
  assert_non_null(strstr(output, "parameter server ps:1 ("));
  assert_true(count_of(": reconnected after ") >= 1);
  /* The restarted server restored its shards of checkpoint 2 (or a later one). */
  const char* restore = strstr(output, "will restore shards from ");
  assert_non_null(restore);
  const char* step = strstr(restore, "(step ");
  assert_non_null(step);
  assert_true(atoi(step + strlen("(step ")) >= 2);
  assert_non_null(strstr(output, "restored dense/kernel[rows 32..64 of 64]"));
  assert_non_null(strstr(output, "[worker:0] epoch  6 "));
  assert_non_null(strstr(output, "recovery demo passed"));
}

/* The demo's checks can fail: an accuracy no run reaches is reported. */
static void test_recovery_demo_reports_a_missed_accuracy(void** state) {
  (void)state;
  const char* demo[] = {path_from("DIST_PS_RECOVERY_DEMO"), "--build", path_from("DIST_BUILD_DIR"), "--epochs", "3",
                        "--kill-after-epoch", "1", "--min-test-accuracy", "1.01", "--timeout", "100", NULL};
  const int status = run(demo, NULL, 130);
  if (status != 1) fail_msg("ps_recovery_demo exited %d:\n%s", status, output);
  assert_non_null(strstr(output, "FAILED: final test accuracy"));
  assert_null(strstr(output, "recovery demo passed"));
}

static void test_bad_command_lines_and_clusters(void** state) {
  (void)state;
  const char* bad_epochs[] = {path_from("DIST_PS_EXAMPLE"), "zero", NULL};
  assert_int_equal(run(bad_epochs, NULL, 20), 2);
  assert_non_null(strstr(output, "usage: "));
  const char* missing_value[] = {path_from("DIST_PS_EMBEDDING_EXAMPLE"), "3", "--checkpoint-dir", NULL};
  assert_int_equal(run(missing_value, NULL, 20), 2);
  assert_non_null(strstr(output, "usage: "));
  const char* bad_delay[] = {path_from("DIST_PS_EXAMPLE"), "--step-delay-ms", "-5", NULL};
  assert_int_equal(run(bad_delay, NULL, 20), 2);
  /* A cluster without a "ps" job: the strategy says what is missing. */
  const char* no_ps[] = {path_from("DIST_PS_EXAMPLE"), "1", NULL};
  const char* alone[] = {"TF_CONFIG={\"cluster\": {\"worker\": [\"127.0.0.1:20001\"]}, "
                         "\"task\": {\"type\": \"worker\", \"index\": 0}}",
                         "DIST_CLUSTER_TOKEN=t", NULL};
  assert_int_equal(run(no_ps, alone, 30), 1);
  assert_non_null(strstr(output, "PARAMETER_SERVER"));
  assert_non_null(strstr(output, "ps"));
  /* A ps job whose server never comes: the worker waits --retry-seconds, then names the server. */
  int held = -1;
  const int port = hold_free_port(&held);
  char config[256], named[64];
  snprintf(config, sizeof config,
           "TF_CONFIG={\"cluster\": {\"worker\": [\"127.0.0.1:20001\"], \"ps\": [\"127.0.0.1:%d\"]}, "
           "\"task\": {\"type\": \"worker\", \"index\": 0}}",
           port);
  snprintf(named, sizeof named, "parameter server ps:0 (127.0.0.1:%d)", port);
  const char* down[] = {path_from("DIST_PS_EXAMPLE"), "1", "--retry-seconds", "1", NULL};
  const char* nobody[] = {config, "DIST_CLUSTER_TOKEN=t", NULL};
  const int status = run(down, nobody, 60);
  close(held);
  if (status != 1) fail_msg("exited %d:\n%s", status, output);
  assert_non_null(strstr(output, "waiting for the server"));
  assert_non_null(strstr(output, "giving up after"));
  assert_non_null(strstr(output, named));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parameter_server_reaches_one_device_accuracy),
      cmocka_unit_test(test_embedding_example_learns_by_rows),
      cmocka_unit_test(test_recovery_demo),
      cmocka_unit_test(test_recovery_demo_reports_a_missed_accuracy),
      cmocka_unit_test(test_bad_command_lines_and_clusters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
