/* The dist-info tool, run as a user runs it: its path comes from the DIST_INFO
 * environment variable (set by tests/CMakeLists.txt); stdout is read through
 * popen and stderr through a temporary file. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <distribute/c_api.h>

enum { kOutputSize = 1 << 16, kCommandSize = 4096 };

typedef struct {
  int exit_code; /* -1 when the tool did not exit normally */
  char out[kOutputSize];
  char err[kOutputSize];
} tool_run;

static tool_run run;

/* Appends `text` to `command` in single quotes, so the shell passes it through
 * unchanged: each ' becomes '\''. */
static void append_quoted(char* command, const char* text) {
  size_t n = strlen(command);
  const char* c;
  assert_true(n + 2 < kCommandSize);
  command[n++] = '\'';
  for (c = text; *c != '\0'; c++) {
    assert_true(n + 6 < kCommandSize);
    if (*c == '\'') {
      memcpy(command + n, "'\\''", 4);
      n += 4;
    } else {
      command[n++] = *c;
    }
  }
  command[n++] = '\'';
  command[n] = '\0';
}

static void append(char* command, const char* text) {
  assert_true(strlen(command) + strlen(text) < kCommandSize);
  strcat(command, text);
}

static size_t read_all(FILE* stream, char* buffer) {
  size_t used = 0, got;
  while ((got = fread(buffer + used, 1, kOutputSize - 1 - used, stream)) > 0) used += got;
  buffer[used] = '\0';
  return used;
}

/* Runs `dist-info <args>` (args are already shell words) with an optional
 * environment variable `name`=`value` set for the child only. */
static void run_tool(const char* name, const char* value, const char* args) {
  const char* tool = getenv("DIST_INFO");
  char command[kCommandSize] = "";
  char err_path[] = "/tmp/test_dist_info_tool.XXXXXX";
  FILE* stream;
  FILE* err_file;
  int status, fd;
  if (tool == NULL) fail_msg("DIST_INFO is not set; run this test through ctest");
  fd = mkstemp(err_path);
  assert_true(fd >= 0);
  close(fd);
  if (name != NULL) {
    char assignment[kCommandSize];
    snprintf(assignment, sizeof assignment, "%s=%s", name, value);
    append(command, "env ");
    append_quoted(command, assignment);
    append(command, " ");
  }
  append_quoted(command, tool);
  append(command, " ");
  append(command, args);
  append(command, " 2>");
  append_quoted(command, err_path);

  stream = popen(command, "r");
  assert_non_null(stream);
  read_all(stream, run.out);
  status = pclose(stream);
  run.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;

  err_file = fopen(err_path, "r");
  assert_non_null(err_file);
  read_all(err_file, run.err);
  fclose(err_file);
  unlink(err_path);
}

static void assert_contains(const char* text, const char* part) {
  if (strstr(text, part) == NULL) fail_msg("expected \"%s\" in:\n%s", part, text);
}

static void assert_succeeded(void) {
  if (run.exit_code != 0) fail_msg("exit code %d, stderr:\n%s", run.exit_code, run.err);
}

static void assert_failed_saying(const char* message) {
  if (run.exit_code <= 0) fail_msg("expected a failure, got exit code %d", run.exit_code);
  assert_contains(run.err, message);
  assert_string_equal(run.out, "");
}

/* ---- build ------------------------------------------------------------------ */

static void test_build_prints_a_summary(void** state) {
  char heading[64];
  (void)state;
  run_tool(NULL, NULL, "build");
  assert_succeeded();
  snprintf(heading, sizeof heading, "libdistribute %s (ABI %d)", dist_version_string(), DIST_ABI_VERSION);
  assert_contains(run.out, heading);
  assert_contains(run.out, "build type:");
  assert_contains(run.out, "compiler:");
  assert_contains(run.out, "sanitizers:");
  assert_contains(run.out, "features:    ucx");
  assert_contains(run.out, "components:");
  assert_contains(run.out, "  ucx ");
  assert_contains(run.out, "  hwloc ");
  assert_contains(run.out, "  nccl ");
}

/* NCCL is opened at run time: a build with NCCL still runs where the file is
 * missing, and says which file it tried and why the NCCL path is off. */
static void test_build_without_an_nccl_to_open(void** state) {
  (void)state;
  if (!(dist_build_features() & DIST_FEATURE_NCCL)) skip();
  run_tool("DIST_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", "build");
  assert_succeeded();
  assert_contains(run.out, "  nccl           not loaded");
  assert_contains(run.out, "nccl path off:   NCCL could not be opened (/nonexistent/libnccl.so.2");
  run_tool("DIST_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", "build --json");
  assert_succeeded();
  assert_contains(run.out, "\"nccl\":null");
  assert_contains(run.out, "\"nccl_library\":null");
  assert_contains(run.out, "\"nccl_unavailable\":\"NCCL could not be opened (/nonexistent/libnccl.so.2");
}

/* The tool prints the library's report unchanged. */
static void test_build_json_is_the_library_report(void** state) {
  char* report = NULL;
  size_t n;
  (void)state;
  run_tool(NULL, NULL, "build --json");
  assert_succeeded();
  assert_int_equal(dist_build_info(&report), DIST_OK);
  n = strlen(run.out);
  assert_true(n > 0 && run.out[n - 1] == '\n');
  run.out[n - 1] = '\0';
  assert_string_equal(run.out, report);
  dist_string_free(report);
}

/* ---- topology --------------------------------------------------------------- */

static int built_with_hwloc(void) { return (dist_build_features() & DIST_FEATURE_HWLOC) != 0; }

static void test_topology_prints_every_section(void** state) {
  static const char* const headings[] = {"machine:", "memory:", "pages:", "packages:", "NUMA nodes:", "cores:", "PUs:",
                                         "caches:", "GPUs:", "NICs:", "network interfaces"};
  char pus[64];
  size_t i;
  (void)state;
  run_tool(NULL, NULL, "topology");
  if (!built_with_hwloc()) {
    assert_failed_saying("hwloc");
    return;
  }
  assert_succeeded();
  for (i = 0; i < sizeof headings / sizeof headings[0]; i++) assert_contains(run.out, headings[i]);
  snprintf(pus, sizeof pus, "PUs:         %ld ", sysconf(_SC_NPROCESSORS_ONLN));
  assert_contains(run.out, pus);
}

static void test_topology_json(void** state) {
  static const char* const keys[] = {"\"hostname\":", "\"page_bytes\":", "\"packages\":", "\"numa_nodes\":", "\"cores\":",
                                     "\"caches\":",   "\"gpus\":",     "\"nics\":",       "\"interfaces\":"};
  char pus[64];
  size_t i;
  (void)state;
  run_tool(NULL, NULL, "topology --json");
  if (!built_with_hwloc()) {
    assert_failed_saying("hwloc");
    return;
  }
  assert_succeeded();
  assert_int_equal(run.out[0], '{');
  for (i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_contains(run.out, keys[i]);
  snprintf(pus, sizeof pus, "\"pus\": %ld,", sysconf(_SC_NPROCESSORS_ONLN));
  assert_contains(run.out, pus);
}

/* ---- errors ----------------------------------------------------------------- */

static void test_unknown_command(void** state) {
  (void)state;
  run_tool(NULL, NULL, "frobnicate");
  assert_failed_saying("unknown command 'frobnicate'");
  assert_contains(run.err, "usage: dist-info");
}

static void test_unknown_flags(void** state) {
  (void)state;
  run_tool(NULL, NULL, "build --frob");
  assert_failed_saying("unknown flag '--frob' for dist-info build");
  run_tool(NULL, NULL, "topology --json --frob");
  assert_failed_saying("unknown flag '--frob' for dist-info topology");
}

/* ---- cluster ---------------------------------------------------------------- */

static void test_cluster_from_tf_config(void** state) {
  /* The environment value holds a single quote, to exercise the quoting. */
  static const char* const tf_config =
      "{\"cluster\": {\"worker\": [\"host0:2222\", \"host1:2222\"], \"ps\": [\"ps0:2222\"]},"
      " \"task\": {\"type\": \"worker\", \"index\": 1}, \"rpc_layer\": \"grpc\", \"environment\": \"it's\"}";
  (void)state;
  run_tool("TF_CONFIG", tf_config, "cluster --json");
  assert_succeeded();
  assert_contains(run.out, "\"resolver\": \"tf_config\"");
  assert_contains(run.out, "\"task_type\": \"worker\"");
  assert_contains(run.out, "\"task_id\": 1");
  assert_contains(run.out, "\"rpc_layer\": \"grpc\"");
  assert_contains(run.out, "\"environment\": \"it's\"");
  assert_contains(run.out, "\"master\": \"grpc://host1:2222\"");
  assert_contains(run.out, "\"ps0:2222\"");
  assert_contains(run.out, "\"host0:2222\"");
}

static void test_cluster_with_a_bad_tf_config(void** state) {
  static const char* const tf_config =
      "{\"cluster\": {\"worker\": [\"a:1\", \"b:2\"]}, \"task\": {\"type\": \"worker\", \"index\": 3}}";
  (void)state;
  run_tool("TF_CONFIG", tf_config, "cluster --json");
  assert_failed_saying("task.index 3 is out of range for job 'worker' (2 tasks)");
  assert_contains(run.err, "TF_CONFIG");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_build_prints_a_summary),
      cmocka_unit_test(test_build_json_is_the_library_report),
      cmocka_unit_test(test_build_without_an_nccl_to_open),
      cmocka_unit_test(test_topology_prints_every_section),
      cmocka_unit_test(test_topology_json),
      cmocka_unit_test(test_unknown_command),
      cmocka_unit_test(test_unknown_flags),
      cmocka_unit_test(test_cluster_from_tf_config),
      cmocka_unit_test(test_cluster_with_a_bad_tf_config),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
