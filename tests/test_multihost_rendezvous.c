/* Launching across emulated hosts as each launcher does: torchrun-style
 * (RANK, WORLD_SIZE, LOCAL_*, MASTER_ADDR, MASTER_PORT only) and mpirun-style
 * (Open MPI's rank variables plus DIST_RENDEZVOUS=host:port) jobs gather every
 * task's address at rank 0; Slurm-style jobs (what srun gives each task, no
 * DIST_HOSTS, no TF_CONFIG) take every address from the step's nodelist. Each
 * then checks the path, the host-local view and all-reduces against references
 * (multihost_worker hosts). A missing rank and an unreachable rank 0 fail
 * within the connect deadline + 2 s, naming the missing rank or the address
 * that could not be reached; the same hosts then run the whole job. Skips
 * (77), saying why, where emulated hosts cannot be made (not root). */
#include "multihost/hosts.h"
#include "multihost/layout.h"
#include "test_support.h"

enum { kConnectMs = 4000 };

static const struct layout k2x2 = {"torchrun 2x2", 4, {0, 0, 1, 1}};
static const struct layout k3x1 = {"mpirun 3x1", 3, {0, 1, 2}};
static const struct layout k2x2_slurm = {"srun 2 nodes x 2 tasks", 4, {0, 0, 1, 1}};
/* World size 3, but the rank on host 2 never starts. */
static const struct layout kMissing = {"rank 2 of 3 missing", 2, {0, 1}};
/* World size 2, rank 0 (host 0) never starts: only rank 1 runs, on host 1. */
static const struct layout kNoMaster = {"no rank 0", 1, {1}};

static const char* worker(void) {
  const char* path = getenv("DIST_MULTIHOST_WORKER");
  if (path == NULL) fail_msg("DIST_MULTIHOST_WORKER is not set (run through ctest)");
  return path;
}

/* What a launcher tells each task, by style; built for `ranks` launched
 * processes whose world ranks start at first_rank. */
enum { kMaxLauncherVariables = 14 };
struct launcher_env {
  char text[kMaxRanks][kMaxLauncherVariables][64];
  const char* entries[kMaxRanks][kMaxLauncherVariables + 1];
  const char* const* by_rank[kMaxRanks];
};

static void torchrun_env(struct launcher_env* e, const struct layout* layout, int world_size) {
  for (int r = 0; r < layout->ranks; ++r) {
    int local_rank = 0;
    for (int k = 0; k < r; ++k) local_rank += layout->host_of[k] == layout->host_of[r];
    snprintf(e->text[r][0], 64, "RANK=%d", r);
    snprintf(e->text[r][1], 64, "WORLD_SIZE=%d", world_size);
    snprintf(e->text[r][2], 64, "LOCAL_RANK=%d", local_rank);
    snprintf(e->text[r][3], 64, "LOCAL_WORLD_SIZE=%d", layout_local_size(layout, layout->host_of[r]));
    snprintf(e->text[r][4], 64, "MASTER_ADDR=198.18.0.1");
    snprintf(e->text[r][5], 64, "MASTER_PORT=29400");
    for (int i = 0; i < 6; ++i) e->entries[r][i] = e->text[r][i];
    e->entries[r][6] = NULL;
    e->by_rank[r] = e->entries[r];
  }
}

static void mpirun_env(struct launcher_env* e, const struct layout* layout, int world_size, int first_rank) {
  for (int r = 0; r < layout->ranks; ++r) {
    snprintf(e->text[r][0], 64, "OMPI_COMM_WORLD_RANK=%d", first_rank + r);
    snprintf(e->text[r][1], 64, "OMPI_COMM_WORLD_SIZE=%d", world_size);
    snprintf(e->text[r][2], 64, "OMPI_COMM_WORLD_LOCAL_SIZE=%d", layout_local_size(layout, layout->host_of[r]));
    snprintf(e->text[r][3], 64, "DIST_RENDEZVOUS=198.18.0.1:7070");
    for (int i = 0; i < 4; ++i) e->entries[r][i] = e->text[r][i];
    e->entries[r][4] = NULL;
    e->by_rank[r] = e->entries[r];
  }
}

/* What srun gives task r of a job laid out as `layout` (its nodes, ranks in
 * blocks, srun's default). The emulated hosts have no DNS and no /etc/hosts
 * entries of their own, so the nodes are named by their IPv4 addresses, which
 * Slurm accepts as node names and the resolver connects to without a lookup:
 * nodelist "198.18.0.[1-2]", and SLURMD_NODENAME the host's own address. The
 * resolver reads SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_STEP_NODELIST,
 * SLURM_STEP_TASKS_PER_NODE and SLURMD_NODENAME, and puts local task k of a
 * node at port 8888 + k; the job-wide variables are there as srun sets them. */
static void slurm_env(struct launcher_env* e, const struct layout* layout) {
  const int nodes = layout_hosts(layout);
  char nodelist[32], tasks_per_node[64] = "";
  snprintf(nodelist, sizeof nodelist, nodes == 1 ? "198.18.0.1" : "198.18.0.[1-%d]", nodes);
  /* Slurm's compressed counts: "2(x2)", "2,1". */
  for (int h = 0, used = 0; h < nodes;) {
    int same = 1;
    while (h + same < nodes && layout_local_size(layout, h + same) == layout_local_size(layout, h)) ++same;
    used += snprintf(tasks_per_node + used, sizeof tasks_per_node - used, same > 1 ? "%s%d(x%d)" : "%s%d",
                     h > 0 ? "," : "", layout_local_size(layout, h), same);
    h += same;
  }
  for (int r = 0; r < layout->ranks; ++r) {
    const int host = layout->host_of[r];
    int local_id = 0;
    for (int k = 0; k < r; ++k) local_id += layout->host_of[k] == host;
    int n = 0;
    snprintf(e->text[r][n++], 64, "SLURM_JOB_NODELIST=%s", nodelist);
    snprintf(e->text[r][n++], 64, "SLURM_STEP_NODELIST=%s", nodelist);
    snprintf(e->text[r][n++], 64, "SLURM_JOB_NUM_NODES=%d", nodes);
    snprintf(e->text[r][n++], 64, "SLURM_STEP_NUM_NODES=%d", nodes);
    snprintf(e->text[r][n++], 64, "SLURM_NTASKS=%d", layout->ranks);
    snprintf(e->text[r][n++], 64, "SLURM_STEP_NUM_TASKS=%d", layout->ranks);
    snprintf(e->text[r][n++], 64, "SLURM_TASKS_PER_NODE=%s", tasks_per_node);
    snprintf(e->text[r][n++], 64, "SLURM_STEP_TASKS_PER_NODE=%s", tasks_per_node);
    snprintf(e->text[r][n++], 64, "SLURM_PROCID=%d", r);
    snprintf(e->text[r][n++], 64, "SLURM_NODEID=%d", host);
    snprintf(e->text[r][n++], 64, "SLURM_LOCALID=%d", local_id);
    snprintf(e->text[r][n++], 64, "SLURMD_NODENAME=198.18.0.%d", host + 1);
    for (int i = 0; i < n; ++i) e->entries[r][i] = e->text[r][i];
    e->entries[r][n] = NULL;
    e->by_rank[r] = e->entries[r];
  }
}

/* No TF_CONFIG (the launch helper sets one) and a short connect deadline. */
static const char* const kCommonEnv[] = {"TF_CONFIG=", "DIST_TEST_CONNECT_MS=4000", NULL};

/* multihost_worker hosts on the layout: path, host-local view, all-reduces. */
static void run_whole_job(const struct layout* layout, const struct launcher_env* e) {
  char path[16], hosts[64];
  snprintf(path, sizeof path, "%d", (int)layout_expected_path(layout));
  layout_hosts_text(layout, hosts, sizeof hosts);
  const char* args[] = {"hosts", path, hosts, NULL};
  layout_start_ranks(layout, worker(), args, kCommonEnv, e->by_rank);
  layout_finish(180);
  layout_expect_success(layout->name);
}

/* Rank r's output must name the failure within the connect deadline + 2 s
 * (the worker prints "context after S s: STATUS: message"). */
static void expect_failure(int rank, const char* status, const char* needle) {
  char output[65536];
  layout_output(rank, output, sizeof output);
  const char* line = strstr(output, "context after ");
  double seconds = -1;
  if (line == NULL || sscanf(line, "context after %lf s:", &seconds) != 1) {
    fail_msg("rank %d did not fail to join; output:\n%s", rank, output);
  }
  if (strstr(line, status) == NULL || strstr(line, needle) == NULL) {
    fail_msg("rank %d: expected %s naming \"%s\"; output:\n%s", rank, status, needle, output);
  }
  if (seconds > kConnectMs / 1000.0 + 2) fail_msg("rank %d gave up after %.3f s:\n%s", rank, seconds, output);
  print_message("rank %d: %.*s\n", rank, (int)strcspn(line, "\n"), line);
}

static void test_torchrun_across_hosts(void** state) {
  (void)state;
  struct launcher_env e;
  torchrun_env(&e, &k2x2, 4);
  run_whole_job(&k2x2, &e);
}

static void test_mpirun_across_hosts(void** state) {
  (void)state;
  struct launcher_env e;
  mpirun_env(&e, &k3x1, 3, 0);
  run_whole_job(&k3x1, &e);
}

static void test_slurm_across_hosts(void** state) {
  (void)state;
  struct launcher_env e;
  slurm_env(&e, &k2x2_slurm);
  run_whole_job(&k2x2_slurm, &e);
}

/* srun's job of 2 nodes x 2 tasks, task 1 (node 0's second) never started:
 * rank 0 waits for it to connect, ranks 2 and 3 (started as processes 1 and
 * 2) cannot reach it; every one names it. Then the whole job runs on the same
 * hosts. */
static void test_slurm_missing_task(void** state) {
  (void)state;
  static const struct layout kStarted = {"srun 2x2, task 1 missing", 3, {0, 1, 1}};
  struct launcher_env e;
  slurm_env(&e, &k2x2_slurm);
  const char* const* started[] = {e.by_rank[0], e.by_rank[2], e.by_rank[3]};
  const char* args[] = {"hosts", "0", "0,0,1,1", NULL};
  layout_start_ranks(&kStarted, worker(), args, kCommonEnv, started);
  layout_finish(kConnectMs / 1000.0 + 30);
  expect_failure(0, "DIST_ERR_TIMEOUT", "worker:1 (198.18.0.1:8889) did not connect within");
  expect_failure(1, "DIST_ERR_TIMEOUT", "could not reach worker:1 (198.18.0.1:8889)");
  expect_failure(2, "DIST_ERR_TIMEOUT", "could not reach worker:1 (198.18.0.1:8889)");

  run_whole_job(&k2x2_slurm, &e);
}

static void test_missing_rank(void** state) {
  (void)state;
  struct launcher_env e;
  torchrun_env(&e, &kMissing, 3);
  const char* args[] = {"hosts", "0", "0,1,2", NULL};
  layout_start_ranks(&kMissing, worker(), args, kCommonEnv, e.by_rank);
  layout_finish(kConnectMs / 1000.0 + 30);
  expect_failure(0, "DIST_ERR_TIMEOUT", "rendezvous at 198.18.0.1:29401: rank 2 of 3 did not join");
  /* Rank 1 had joined: rank 0 tells it why it gave up. */
  expect_failure(1, "DIST_ERR_TIMEOUT", "rendezvous at 198.18.0.1:29401: rank 2 of 3 did not join");

  /* The whole job on three hosts then runs. */
  static const struct layout k3x1_torchrun = {"torchrun 3x1", 3, {0, 1, 2}};
  torchrun_env(&e, &k3x1_torchrun, 3);
  run_whole_job(&k3x1_torchrun, &e);
}

static void test_unreachable_master(void** state) {
  (void)state;
  struct launcher_env e;
  mpirun_env(&e, &kNoMaster, 2, 1);
  const char* args[] = {"hosts", "0", "0,1", NULL};
  layout_start_ranks(&kNoMaster, worker(), args, kCommonEnv, e.by_rank);
  layout_finish(kConnectMs / 1000.0 + 30);
  expect_failure(0, "DIST_ERR_TIMEOUT", "rank 1 could not reach the MPI rendezvous (rank 0) at 198.18.0.1:7070 within 4 s");

  /* Rank 0's host cut off: the same error, the packets now simply lost. */
  layout_start_ranks(&kNoMaster, worker(), args, kCommonEnv, e.by_rank);
  hosts_link(0, 0);
  layout_finish(kConnectMs / 1000.0 + 30);
  expect_failure(0, "DIST_ERR_TIMEOUT", "could not reach the MPI rendezvous (rank 0) at 198.18.0.1:7070");
  hosts_link(0, 1);

  static const struct layout k2x1 = {"mpirun 2x1", 2, {0, 1}};
  mpirun_env(&e, &k2x1, 2, 0);
  run_whole_job(&k2x1, &e);
}

static void test_ranks_disagree_on_size(void** state) {
  (void)state;
  static const struct layout k2x1 = {"mpirun 2x1, sizes 2 and 3", 2, {0, 1}};
  struct launcher_env e;
  mpirun_env(&e, &k2x1, 2, 0);
  snprintf(e.text[1][1], 64, "OMPI_COMM_WORLD_SIZE=3");
  const char* args[] = {"hosts", "0", "0,1", NULL};
  layout_start_ranks(&k2x1, worker(), args, kCommonEnv, e.by_rank);
  layout_finish(kConnectMs / 1000.0 + 30);
  expect_failure(0, "DIST_ERR_MISMATCH", "rank 1 says the job has 3 tasks, rank 0 says 2");
  expect_failure(1, "DIST_ERR_MISMATCH", "rank 1 says the job has 3 tasks, rank 0 says 2");
}

/* A task with another cluster token is refused by rank 0 at once and changes
 * nothing there: rank 0 still waits for rank 1, and names it at the deadline. */
static void test_wrong_token(void** state) {
  (void)state;
  static const struct layout k2x1 = {"mpirun 2x1, rank 1 with another token", 2, {0, 1}};
  struct launcher_env e;
  mpirun_env(&e, &k2x1, 2, 0);
  snprintf(e.text[1][4], 64, "DIST_CLUSTER_TOKEN=another-token-0123456789");
  e.entries[1][4] = e.text[1][4];
  e.entries[1][5] = NULL;
  const char* args[] = {"hosts", "0", "0,1", NULL};
  layout_start_ranks(&k2x1, worker(), args, kCommonEnv, e.by_rank);
  layout_finish(kConnectMs / 1000.0 + 30);
  expect_failure(1, "DIST_ERR_AUTH", "198.18.0.1:7070");
  char output[65536];
  layout_output(1, output, sizeof output);
  double seconds = 99;
  sscanf(strstr(output, "context after "), "context after %lf s:", &seconds);
  if (seconds > 2) fail_msg("rank 1 was refused only after %.3f s", seconds);
  expect_failure(0, "DIST_ERR_TIMEOUT", "rank 1 of 2 did not join");
}

/* dist_context_create_oob across hosts: test_context_oob's rank mode, its
 * all-gather through files (the hosts share the file system, not the network),
 * each rank advertising the address the library finds itself (no default
 * route there: the host's eth0). */
static void test_oob_across_hosts(void** state) {
  (void)state;
  const char* program = getenv("DIST_CONTEXT_OOB");
  if (program == NULL) fail_msg("DIST_CONTEXT_OOB is not set (run through ctest)");
  char directory[] = "/tmp/dist-oob-hosts-XXXXXX";
  assert_non_null(mkdtemp(directory));
  static const struct layout k3x1_oob = {"oob 3x1", 3, {0, 1, 2}};
  struct launcher_env e;
  torchrun_env(&e, &k3x1_oob, 3); /* RANK is what the rank mode reads */
  const char* env[] = {"DIST_TEST_OWN_ADDRESS=1", NULL};
  const char* args[] = {"oob-child", "3", directory, NULL};
  layout_start_ranks(&k3x1_oob, program, args, env, e.by_rank);
  layout_finish(90);
  char command[128];
  snprintf(command, sizeof command, "rm -rf %s", directory);
  if (system(command) != 0) print_message("could not remove %s\n", directory);
  layout_expect_success(k3x1_oob.name);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_torchrun_across_hosts, layout_teardown),
      cmocka_unit_test_teardown(test_mpirun_across_hosts, layout_teardown),
      cmocka_unit_test_teardown(test_slurm_across_hosts, layout_teardown),
      cmocka_unit_test_teardown(test_slurm_missing_task, layout_teardown),
      cmocka_unit_test_teardown(test_missing_rank, layout_teardown),
      cmocka_unit_test_teardown(test_unreachable_master, layout_teardown),
      cmocka_unit_test_teardown(test_ranks_disagree_on_size, layout_teardown),
      cmocka_unit_test_teardown(test_wrong_token, layout_teardown),
      cmocka_unit_test_teardown(test_oob_across_hosts, layout_teardown),
  };
  return hosts_run_suite("multihost_rendezvous", tests);
}
