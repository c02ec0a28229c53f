/* The dist-bench tool, run as a user runs it: its path comes from the DIST_BENCH
 * environment variable (set by tests/CMakeLists.txt). Each run starts two local
 * ranks with `-n 2` (dist-bench checks every result before timing it), in a
 * process group of its own, with stdout and stderr going to files; a run that
 * overstays its limit is killed by that group and the test fails. The checks
 * here are on what dist-bench prints: the CSV's shape and sizes, and the
 * messages for bad flags. */
#define _POSIX_C_SOURCE 200809L

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
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum { kOutputSize = 1 << 16, kMaxArgs = 32, kMaxRows = 16, kFields = 8 };

/* A run longer than this is a hang (a normal one takes about a second). */
static const double kRunLimitSeconds = 60.0;

static const char* const kHeader = "impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps";

/* What dist_comm_algorithm may name (include/c_api.h). */
static const char* const kAlgorithms[] = {
    "shm_direct", "shm_read_write", "shm_split", "shm_split_single_copy", "shm_single_copy", "shm", "ring", "rabenseifner",
    "recursive_doubling", "reduce_binomial", "broadcast_binomial", "broadcast_scatter_allgather",
    "allgather_ring", "reduce_scatter_ring", "alltoall_pairwise", "barrier_dissemination", "self", NULL};

typedef struct {
  int exit_code; /* -1 when it did not exit normally */
  char out[kOutputSize];
  char err[kOutputSize];
} tool_run;

static tool_run run;

/* ---- running the tool ------------------------------------------------------------ */

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void read_whole(const char* path, char* buffer) {
  FILE* file = fopen(path, "r");
  size_t used = 0, got;
  buffer[0] = '\0';
  if (file == NULL) return;
  while (used + 1 < kOutputSize && (got = fread(buffer + used, 1, kOutputSize - 1 - used, file)) > 0) used += got;
  buffer[used] = '\0';
  fclose(file);
}

/* Runs dist-bench once with the arguments; fills `run`. */
static void run_once(char* const* argv) {
  char out_path[] = "/tmp/test_dist_bench_tool.out.XXXXXX";
  char err_path[] = "/tmp/test_dist_bench_tool.err.XXXXXX";
  int out_fd, err_fd, status = 0;
  pid_t pid, got;
  double started;
  out_fd = mkstemp(out_path);
  err_fd = mkstemp(err_path);
  assert_true(out_fd >= 0 && err_fd >= 0);

  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Its own process group, so the ranks it starts can be ended with it. */
    setpgid(0, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  setpgid(pid, pid); /* also here: no race with a kill before the child ran */
  close(out_fd);
  close(err_fd);
  started = now_seconds();
  while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_seconds() - started < kRunLimitSeconds) {
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  if (got == 0) {
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
  read_whole(out_path, run.out);
  read_whole(err_path, run.err);
  unlink(out_path);
  unlink(err_path);
  if (got == 0) fail_msg("dist-bench %s ran over %.0f s and was killed; stderr:\n%s", argv[1], kRunLimitSeconds, run.err);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A rank that found its port taken between dist-bench's reservation and its
 * own listen (other test suites on this machine pick ports too) joined
 * another cluster or none: that launch says nothing about dist-bench. */
static int lost_its_port(void) {
  return run.exit_code != 0 && (strstr(run.err, "the cluster token differs") != NULL ||
                                strstr(run.err, "ddress already in use") != NULL);
}

/* Runs dist-bench with the NULL-terminated arguments; fills `run`. */
static void run_tool(const char* first, ...) {
  const char* tool = getenv("DIST_BENCH");
  char* argv[kMaxArgs];
  int argc = 0;
  va_list args;
  if (tool == NULL) fail_msg("DIST_BENCH is not set; run this test through ctest");
  argv[argc++] = (char*)tool;
  va_start(args, first);
  for (const char* a = first; a != NULL; a = va_arg(args, const char*)) {
    assert_true(argc + 1 < kMaxArgs);
    argv[argc++] = (char*)a;
  }
  va_end(args);
  argv[argc] = NULL;
  run_once(argv);
  for (int retry = 0; retry < 2 && lost_its_port(); retry++) run_once(argv);
}

static void assert_succeeded(void) {
  if (run.exit_code != 0) fail_msg("exit code %d, stderr:\n%s", run.exit_code, run.err);
}

static void assert_failed_naming(const char* flag) {
  if (run.exit_code <= 0) fail_msg("expected a failure naming %s, got exit code %d", flag, run.exit_code);
  if (strstr(run.err, flag) == NULL) fail_msg("expected \"%s\" in stderr:\n%s", flag, run.err);
  assert_string_equal(run.out, "");
}

/* ---- reading the CSV ------------------------------------------------------------- */

typedef struct {
  char fields[kFields][96];
} csv_row;

/* Splits `text` into lines: the header, then the rows (into `rows` unless it
 * is NULL). Returns the row count. */
static int parse_csv(const char* text, csv_row* rows) {
  const char* line = strchr(text, '\n');
  int count = 0;
  if (line == NULL || (size_t)(line - text) != strlen(kHeader) || strncmp(text, kHeader, strlen(kHeader)) != 0) {
    fail_msg("the CSV does not begin with the header \"%s\":\n%s", kHeader, text);
  }
  for (line = line + 1; *line != '\0'; count++) {
    const char* end = strchr(line, '\n');
    int field = 0;
    if (end == NULL) fail_msg("the last CSV line has no newline:\n%s", text);
    if (count == kMaxRows) fail_msg("more than %d rows:\n%s", kMaxRows, text);
    if (rows == NULL) { /* counting only */
      line = end + 1;
      continue;
    }
    memset(&rows[count], 0, sizeof rows[count]);
    for (const char* start = line; start <= end; field++) {
      const char* stop = memchr(start, ',', (size_t)(end - start));
      size_t n;
      if (stop == NULL) stop = end;
      n = (size_t)(stop - start);
      if (field >= kFields || n >= sizeof rows[count].fields[0]) fail_msg("a bad row in:\n%s", text);
      memcpy(rows[count].fields[field], start, n);
      start = stop + 1;
    }
    if (field != kFields) fail_msg("a row with %d fields, not %d:\n%s", field, kFields, text);
    line = end + 1;
  }
  return count;
}

static double number(const char* text) {
  char* end = NULL;
  double value;
  errno = 0;
  value = strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0) fail_msg("'%s' is not a number", text);
  return value;
}

static int is_one_algorithm(const char* name, size_t length) {
  for (int i = 0; kAlgorithms[i] != NULL; i++) {
    if (strlen(kAlgorithms[i]) == length && strncmp(name, kAlgorithms[i], length) == 0) return 1;
  }
  return 0;
}

/* An algorithm's name, or several joined by '+' (the timed calls ran more
 * than one: a choice the library learns). */
static int is_algorithm(const char* name) {
  for (;;) {
    const char* plus = strchr(name, '+');
    const size_t length = plus == NULL ? strlen(name) : (size_t)(plus - name);
    if (!is_one_algorithm(name, length)) return 0;
    if (plus == NULL) return 1;
    name = plus + 1;
  }
}

/* The bytes a row reports for a requested size, as bench/README.md defines
 * them: whole elements, at least one; for the collectives whose size spans
 * every rank, whole blocks of at least one element per rank. */
static unsigned long long expected_bytes(const char* op, unsigned long long size, unsigned long long element,
                                         unsigned long long ranks) {
  unsigned long long elements = size / element;
  if (strcmp(op, "barrier") == 0) return 0;
  if (strcmp(op, "all_reduce") == 0 || strcmp(op, "reduce") == 0 || strcmp(op, "broadcast") == 0) {
    return (elements > 0 ? elements : 1) * element;
  }
  return (elements / ranks > 0 ? elements / ranks : 1) * ranks * element;
}

/* Checks one run's CSV: a row per size (one for barrier), impl distribute,
 * 2 ranks, the sizes, positive timings and bandwidths (zero for barrier, which
 * moves no data), and the variant: `variant` if given, else an algorithm name. */
static void check_csv(const char* op, unsigned long long element, const char* variant) {
  static const unsigned long long kSizes[] = {8, 4100};
  csv_row rows[kMaxRows];
  const int moves_data = strcmp(op, "barrier") != 0;
  const int want_rows = moves_data ? 2 : 1;
  const int count = parse_csv(run.out, rows);
  if (count != want_rows) fail_msg("%s: %d rows, expected %d:\n%s", op, count, want_rows, run.out);
  for (int r = 0; r < count; r++) {
    const csv_row* row = &rows[r];
    assert_string_equal(row->fields[0], "distribute");
    if (variant != NULL) {
      assert_string_equal(row->fields[1], variant);
    } else if (!is_algorithm(row->fields[1])) {
      fail_msg("%s: variant '%s' is not an algorithm name", op, row->fields[1]);
    }
    assert_string_equal(row->fields[2], "2");
    assert_true(number(row->fields[3]) == (double)expected_bytes(op, kSizes[r], element, 2));
    assert_true(number(row->fields[4]) >= 1);
    assert_true(number(row->fields[5]) > 0);
    if (moves_data) {
      assert_true(number(row->fields[6]) > 0);
      assert_true(number(row->fields[7]) > 0);
    } else {
      assert_true(number(row->fields[6]) == 0 && number(row->fields[7]) == 0);
    }
  }
}

static void run_csv(const char* op, const char* dtype) {
  run_tool("-n", "2", "--op", op, "--dtype", dtype, "--sizes", "8,4100", "--seconds", "0.02", "--csv", NULL);
  assert_succeeded();
}

/* ---- every collective ------------------------------------------------------------- */

static const char* const kOps[] = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all",
                                   NULL};

typedef struct {
  const char* name;
  unsigned long long size;
} dtype_case;

static void every_op_with(const dtype_case* dtype) {
  for (int i = 0; kOps[i] != NULL; i++) {
    run_csv(kOps[i], dtype->name);
    check_csv(kOps[i], dtype->size, NULL);
  }
}

static void test_every_op_f32(void** state) {
  static const dtype_case f32 = {"f32", 4};
  (void)state;
  every_op_with(&f32);
}

/* The 16-bit floats (reduced in f32 by the library) and the 1-byte integers. */
static void test_every_op_bf16(void** state) {
  static const dtype_case bf16 = {"bf16", 2};
  (void)state;
  every_op_with(&bf16);
}

static void test_every_op_i8(void** state) {
  static const dtype_case i8 = {"i8", 1};
  (void)state;
  every_op_with(&i8);
}

/* all_reduce, the one bench/compare compares, in every dtype of the C API. */
static void test_all_reduce_every_dtype(void** state) {
  static const dtype_case dtypes[] = {{"u8", 1},  {"i32", 4}, {"u32", 4}, {"i64", 8},
                                      {"u64", 8}, {"f16", 2}, {"f64", 8}};
  (void)state;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
    run_csv("all_reduce", dtypes[i].name);
    check_csv("all_reduce", dtypes[i].size, NULL);
  }
}

static void test_barrier_is_one_row(void** state) {
  (void)state;
  run_csv("barrier", "f32");
  check_csv("barrier", 4, NULL);
}

/* bench/compare's command line: the older flag names, a forced algorithm, a label. */
static void test_bench_run_flags(void** state) {
  (void)state;
  run_tool("-n", "2", "--csv", "--collective", "all_reduce", "--algorithm", "ring", "--variant", "allreduce/ring",
           "--sizes", "8,4100", "--seconds", "0.02", NULL);
  assert_succeeded();
  check_csv("all_reduce", 4, "allreduce/ring");
  /* Forced ring without a label: the variant is the algorithm forced. */
  run_tool("-n", "2", "--csv", "--algo", "ring", "--sizes", "8,4100", "--seconds", "0.02", NULL);
  assert_succeeded();
  check_csv("all_reduce", 4, "ring");
  /* The shared-memory all-reduces forced by name (through DIST_ALLREDUCE_ALGO):
   * on one host's segment every row names the one forced, else the
   * point-to-point choice by size. */
  run_tool("-n", "2", "--csv", "--algo", "shm_split", "--sizes", "8,4100", "--seconds", "0.02", NULL);
  assert_succeeded();
  check_csv("all_reduce", 4, NULL);
  if (strstr(run.out, "shm_direct") != NULL) fail_msg("--algo shm_split ran shm_direct:\n%s", run.out);
  run_tool("-n", "2", "--csv", "--algo", "shm_direct", "--sizes", "8,4100", "--seconds", "0.02", NULL);
  assert_succeeded();
  check_csv("all_reduce", 4, NULL);
  if (strstr(run.out, "shm_split") != NULL) fail_msg("--algo shm_direct ran shm_split:\n%s", run.out);  /* In place, checked like any other run, also on both sides of the 256 KiB
   * where the shared-memory all-reduce starts writing into the peers' results. */
  run_tool("-n", "2", "--csv", "--in-place", "--sizes", "8,4100", "--seconds", "0.02", NULL);
  assert_succeeded();
  check_csv("all_reduce", 4, NULL);
  run_tool("-n", "2", "--csv", "--in-place", "--sizes", "262140,262144,1048576", "--seconds", "0.02", NULL);
  assert_succeeded();
}

/* The table for people: a title, the column names with algorithm, a row per size. */
static void test_table_names_the_algorithm(void** state) {
  char* line;
  int rows = 0;
  (void)state;
  run_tool("-n", "2", "--op", "all_gather", "--dtype", "u32", "--sizes", "8,4100", "--seconds", "0.02", NULL);
  assert_succeeded();
  if (strncmp(run.out, "# all_gather, u32, 2 ranks\n", 27) != 0) fail_msg("unexpected title:\n%s", run.out);
  line = strchr(run.out, '\n') + 1;
  if (strstr(line, "median_us") == NULL || strstr(line, "algorithm\n") == NULL) fail_msg("no column names:\n%s", run.out);
  for (line = strchr(line, '\n') + 1; *line != '\0'; line = strchr(line, '\n') + 1) {
    char* end = strchr(line, '\n');
    char* name;
    assert_non_null(end);
    *end = '\0';
    name = strrchr(line, ' ');
    assert_non_null(name);
    if (!is_algorithm(name + 1)) fail_msg("row '%s' ends in no algorithm name", line);
    *end = '\n';
    rows++;
  }
  assert_int_equal(rows, 2);
}

/* --stats: after each size, a line per collective, path and algorithm with the
 * library's counters; the timed collective's line names the algorithm its
 * table row names, counts at least the timed calls and carries their bytes. */
static void test_stats_lines(void** state) {
  const char* line;
  int sizes_seen = 0;
  (void)state;
  run_tool("-n", "2", "--op", "broadcast", "--sizes", "64,4096", "--seconds", "0.02", "--csv", "--stats", NULL);
  assert_succeeded();
  for (line = run.err; (line = strstr(line, "stats size=")) != NULL; line++) {
    unsigned long long size = 0, calls = 0, failed = 1, bytes = 0;
    char collective[32], path[32], algorithm[64];
    double mean_us = -1;
    if (sscanf(line, "stats size=%llu %31s %31s %63s calls=%llu failed=%llu bytes=%llu mean_us=%lf", &size, collective,
               path, algorithm, &calls, &failed, &bytes, &mean_us) != 8) {
      fail_msg("a stats line of another shape: %.120s", line);
    }
    if (strcmp(collective, "broadcast") != 0) continue;
    if (!is_algorithm(algorithm)) fail_msg("stats line names no algorithm: %.120s", line);
    if (failed != 0 || calls < 2 || bytes != calls * size || !(mean_us > 0)) fail_msg("stats line: %.120s", line);
    sizes_seen++;
  }
  assert_int_equal(sizes_seen, 2);
  /* The CSV on stdout keeps its shape. */
  if (strncmp(run.out, kHeader, strlen(kHeader)) != 0) fail_msg("--stats changed stdout:\n%s", run.out);
}

/* A row names what its timed calls ran, as the counters saw it, not what a
 * call into a separate result would run: in place from 64 KiB the
 * shared-memory all-reduce takes other algorithms than out of place. */
static void test_row_names_what_ran(void** state) {
  csv_row rows[kMaxRows];
  const char* line;
  char most[64] = "";
  unsigned long long most_bytes = 0;
  (void)state;
  run_tool("-n", "2", "--csv", "--in-place", "--stats", "--sizes", "1048576", "--seconds", "0.05", NULL);
  assert_succeeded();
  assert_int_equal(parse_csv(run.out, rows), 1);
  for (line = run.err; (line = strstr(line, "stats size=")) != NULL; line++) {
    unsigned long long size = 0, calls = 0, failed = 0, bytes = 0;
    char collective[32], path[32], algorithm[64];
    double mean_us = 0;
    if (sscanf(line, "stats size=%llu %31s %31s %63s calls=%llu failed=%llu bytes=%llu mean_us=%lf", &size, collective,
               path, algorithm, &calls, &failed, &bytes, &mean_us) != 8) {
      fail_msg("a stats line of another shape: %.120s", line);
    }
    if (strcmp(collective, "all_reduce") == 0 && bytes > most_bytes) {
      most_bytes = bytes;
      snprintf(most, sizeof most, "%s", algorithm);
    }
  }
  if (most_bytes == 0) fail_msg("no all_reduce stats line:\n%s", run.err);
  /* The row may add algorithms that carried a tenth or more: it starts with the one that carried most. */
  if (strncmp(rows[0].fields[1], most, strlen(most)) != 0 ||
      (rows[0].fields[1][strlen(most)] != '\0' && rows[0].fields[1][strlen(most)] != '+')) {
    fail_msg("the row names '%s' but the counters say %s carried most of the bytes:\n%s", rows[0].fields[1], most,
             run.err);
  }
}

/* ---- the check catches wrong results --------------------------------------------------- */

/* With a shim preloaded that flips a bit of element 3 of each result on one rank
 * (tests/dist_bench_support/corrupt_results.c), every collective fails its check
 * before a timing row is printed, naming collective, dtype, size and element. */
static void test_wrong_results_are_caught(void** state) {
  static const struct {
    const char* op;
    const char* dtype;
    const char* rank; /* the rank whose result is wrong: reduce's result is the root's */
    const char* message;
  } cases[] = {
      {"all_reduce", "f32", "1", "all_reduce f32 at 64 bytes: wrong result, element 3 of 16 on rank 1 is "},
      {"all_reduce", "bf16", "0", "all_reduce bf16 at 64 bytes: wrong result, element 3 of 32 on rank 0 is "},
      {"reduce", "i32", "0", "reduce i32 at 64 bytes: wrong result, element 3 of 16 on rank 0 is "},
      {"broadcast", "u8", "1", "broadcast u8 at 64 bytes: wrong result, element 3 of 64 on rank 1 is "},
      {"all_gather", "f64", "1", "all_gather f64 at 64 bytes: wrong result, element 3 of 8 on rank 1 is "},
      {"reduce_scatter", "f16", "1", "reduce_scatter f16 at 64 bytes: wrong result, element 3 of 16 on rank 1 is "},
      {"all_to_all", "i64", "0", "all_to_all i64 at 64 bytes: wrong result, element 3 of 8 on rank 0 is "},
  };
  const char* shim = getenv("DIST_BENCH_CORRUPT");
  (void)state;
  if (shim == NULL) fail_msg("DIST_BENCH_CORRUPT is not set; run this test through ctest");
  assert_int_equal(setenv("LD_PRELOAD", shim, 1), 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(setenv("DIST_TEST_CORRUPT_RANK", cases[i].rank, 1), 0);
    run_tool("-n", "2", "--op", cases[i].op, "--dtype", cases[i].dtype, "--sizes", "64", "--seconds", "0.02", "--csv",
             NULL);
    if (run.exit_code <= 0 || strstr(run.err, cases[i].message) == NULL) {
      unsetenv("LD_PRELOAD");
      fail_msg("%s %s: exit code %d, expected a failure saying \"%s\"; stderr:\n%s", cases[i].op, cases[i].dtype,
               run.exit_code, cases[i].message, run.err);
    }
    /* Rank 0 may be ended before its header leaves its buffer. */
    if (run.out[0] != '\0' && parse_csv(run.out, NULL) != 0) fail_msg("%s: rows printed for a wrong result:\n%s", cases[i].op, run.out);
  }
  unsetenv("LD_PRELOAD");
  unsetenv("DIST_TEST_CORRUPT_RANK");
}

/* Host buffers on huge pages: every collective checked as on ordinary pages,
 * at sizes that take the single copies between processes (1 MiB, and an odd
 * one), and rank 0 says how much of the buffers the kernel put on them; where
 * the kernel has them off, a failure naming the flag. */
static void test_huge_pages(void** state) {
  (void)state;
  for (int i = 0; kOps[i] != NULL; i++) {
    run_tool("-n", "2", "--op", kOps[i], "--huge-pages", "--sizes", "8,4100", "--seconds", "0.02", "--csv", NULL);
    if (run.exit_code != 0 && strstr(run.err, "transparent huge pages off") != NULL) {
      assert_failed_naming("--huge-pages");
      return;
    }
    assert_succeeded();
    check_csv(kOps[i], 4, NULL);
    if (strstr(run.err, "MiB of the buffers on huge pages") == NULL) fail_msg("no huge-page line on stderr:\n%s", run.err);
    run_tool("-n", "2", "--op", kOps[i], "--huge-pages", "--sizes", "1048576,3000004", "--seconds", "0.02", "--csv",
             NULL);
    assert_succeeded();
  }
  run_tool("-n", "2", "--in-place", "--huge-pages", "--sizes", "1048576,3000004", "--seconds", "0.02", "--csv", NULL);
  assert_succeeded();
}

/* ---- bad flags ----------------------------------------------------------------------- */

static void test_bad_flags_are_named(void** state) {
  (void)state;
  run_tool("--dtype", "q", NULL);
  assert_failed_naming("--dtype");
  run_tool("--op", "nope", NULL);
  assert_failed_naming("--op");
  run_tool("--sizes", "x", NULL);
  assert_failed_naming("--sizes");
  run_tool("--sizes", "8,,16", NULL);
  assert_failed_naming("--sizes");
  run_tool("--sizes", "0", NULL);
  assert_failed_naming("--sizes");
  run_tool("--algo", "fastest", NULL);
  assert_failed_naming("--algo");
  run_tool("--collective", "gather", NULL);
  assert_failed_naming("--collective");
  /* The algorithm choice is the all-reduce's. */
  run_tool("--op", "broadcast", "--algo", "ring", NULL);
  assert_failed_naming("--algo");
  run_tool("--seconds", "-1", NULL);
  assert_failed_naming("--seconds");
  run_tool("-n", "0", NULL);
  assert_failed_naming("-n");
  run_tool("--variant", "a,b", NULL);
  assert_failed_naming("--variant");
  /* Only all_reduce is timed in place. */
  run_tool("--op", "broadcast", "--in-place", NULL);
  assert_failed_naming("--in-place");
  run_tool("--dtype", NULL);
  assert_failed_naming("--dtype");
  run_tool("--fast", NULL);
  assert_failed_naming("--fast");
  run_tool("--memory", "gpu", NULL);
  assert_failed_naming("--memory");
  run_tool("--huge-pages", "--memory", "cuda", NULL);
  assert_failed_naming("--huge-pages");
}

/* Device buffers: where the build has no CUDA or no device is usable, a clear
 * failure naming the flag; where one is, checked rows as for host memory, each
 * rank on a GPU of its own where there are enough: rank 0 says on stderr which
 * path the library took, and without --variant the rows name it ("nccl", or
 * "staged/" and the host algorithm). */
static void test_cuda_memory(void** state) {
  (void)state;
  run_tool("-n", "2", "--memory", "cuda", "--sizes", "4K,1M", "--seconds", "0.05", "--csv", NULL);
  if (run.exit_code != 0) {
    assert_failed_naming("--memory cuda");
    return;
  }
  csv_row rows[kMaxRows];
  const int count = parse_csv(run.out, rows);
  if (count != 2) fail_msg("%d rows, expected 2:\n%s", count, run.out);
  const int nccl = strstr(run.err, "calls on CUDA memory took the nccl path") != NULL;
  if (!nccl && strstr(run.err, "calls on CUDA memory took the staged path") == NULL) {
    fail_msg("no line naming the device path on stderr:\n%s", run.err);
  }
  for (int r = 0; r < count; r++) {
    const char* variant = rows[r].fields[1];
    if (nccl ? strcmp(variant, "nccl") != 0 : strncmp(variant, "staged/", 7) != 0 || !is_algorithm(variant + 7)) {
      fail_msg("variant '%s' does not name the %s path", variant, nccl ? "nccl" : "staged");
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_flags_are_named),
      cmocka_unit_test(test_cuda_memory),
      cmocka_unit_test(test_huge_pages),
      cmocka_unit_test(test_every_op_f32),
      cmocka_unit_test(test_every_op_bf16),
      cmocka_unit_test(test_every_op_i8),
      cmocka_unit_test(test_all_reduce_every_dtype),
      cmocka_unit_test(test_barrier_is_one_row),
      cmocka_unit_test(test_bench_run_flags),
      cmocka_unit_test(test_table_names_the_algorithm),
      cmocka_unit_test(test_row_names_what_ran),
      cmocka_unit_test(test_stats_lines),
      cmocka_unit_test(test_wrong_results_are_caught),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
