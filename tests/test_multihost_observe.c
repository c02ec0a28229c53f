/* Seeing a job across emulated hosts (tests/multihost/emulated-hosts): the
 * timeline of a known run on 2 hosts x 1 rank and 2 x 2 (hierarchical),
 * merged by `dist-info timeline merge`, which must place the second host by
 * the collectives the hosts ran together; and a rank held back on purpose on
 * the second host, which the first host's rank names in its stall warning
 * and every rank in its timeout. Skips (77), saying why, where emulated
 * hosts cannot be made (not root). */
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "multihost/hosts.h"
#include "multihost/layout.h"
#include "test_support.h"

static const struct layout k2x1 = {"2x1", 2, {0, 1}};
static const struct layout k2x2 = {"2x2", 4, {0, 0, 1, 1}};

static const char* program(const char* variable) {
  const char* path = getenv(variable);
  if (path == NULL) fail_msg("%s is not set (run through ctest)", variable);
  return path;
}

/* Runs `dist-info ARGS` into `output`; returns its exit code. */
static int run_dist_info(const char* args, char* output, size_t size) {
  char command[1024];
  snprintf(command, sizeof command, "%s %s 2>&1", program("DIST_INFO"), args);
  FILE* pipe = popen(command, "r");
  if (pipe == NULL) fail_msg("popen failed");
  size_t used = fread(output, 1, size - 1, pipe);
  output[used] = '\0';
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_dir(const char* dir) {
  DIR* d = opendir(dir);
  if (d != NULL) {
    struct dirent* entry;
    while ((entry = readdir(d)) != NULL) {
      if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
      remove(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* The collective worker's "timeline" run on the layout; the merge finds every
 * rank and aligns the hosts after the first by their collectives. */
static void check_timeline(const struct layout* layout) {
  char dir[] = "/tmp/dist-multihost-timeline-XXXXXX";
  if (mkdtemp(dir) == NULL) fail_msg("mkdtemp failed");
  char timeline[128];
  snprintf(timeline, sizeof timeline, "DIST_TIMELINE=%s/trace", dir);
  const char* env[] = {timeline, NULL};
  const char* args[] = {"timeline", NULL};
  layout_start(layout, program("DIST_COLLECTIVE_WORKER"), args, env);
  layout_finish(120);
  layout_expect_success("timeline");
  char merge_args[256], output[8192];
  snprintf(merge_args, sizeof merge_args, "timeline merge %s/trace", dir);
  const int code = run_dist_info(merge_args, output, sizeof output);
  remove_dir(dir);
  if (code != 0) fail_msg("%s: merge failed:\n%s", layout->name, output);
  char summary[64];
  snprintf(summary, sizeof summary, "%d ranks on 2 hosts", layout->ranks);
  if (strstr(output, summary) == NULL) fail_msg("%s: merge said:\n%s", layout->name, output);
  for (int r = 0; r < layout->ranks; ++r) {
    char line[64];
    snprintf(line, sizeof line, "  rank %d ", r);
    const char* at = strstr(output, line);
    if (at == NULL) fail_msg("%s: no line for rank %d:\n%s", layout->name, r, output);
    /* By the 8 calls of each rank of that host that rank 0 also ran. */
    char how[32];
    snprintf(how, sizeof how, layout->host_of[r] == layout->host_of[0] ? "(same host)" : "(collectives (%d))",
             8 * layout_local_size(layout, layout->host_of[r]));
    const char* end = strchr(at, '\n');
    if (end == NULL || strstr(at, how) == NULL || strstr(at, how) > end) {
      fail_msg("%s: rank %d is not aligned by %s:\n%s", layout->name, r, how, output);
    }
  }
  print_message("%s: %s", layout->name, output);
}

static void test_timeline_across_hosts(void** state) {
  (void)state;
  check_timeline(&k2x1);
  check_timeline(&k2x2);
}

/* The collective worker's "stall" run: the last rank (on the second host)
 * sleeps past the stall time, then past the deadline. */
static void test_stall_across_hosts(void** state) {
  (void)state;
  const char* args[] = {"stall", NULL};
  layout_start(&k2x1, program("DIST_COLLECTIVE_WORKER"), args, NULL);
  layout_finish(120);
  layout_expect_success("stall");
  char output[65536];
  layout_output(0, output, sizeof output);
  const char* warning = strstr(output, "has waited");
  if (warning == NULL || strstr(warning, "worker:1 is between calls (done with #") == NULL ||
      strstr(warning, "while worker:0 waits at #") == NULL) {
    fail_msg("worker:0 did not name worker:1 across hosts:\n%s", output);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_timeline_across_hosts, layout_teardown),
      cmocka_unit_test_teardown(test_stall_across_hosts, layout_teardown),
  };
  return hosts_run_suite("multihost_observe", tests);
}
