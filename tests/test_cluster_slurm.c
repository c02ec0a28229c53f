/* The Slurm resolver through the public C ABI, and dist-info expand-hostlist.
 * Every environment is handed over as a list (DIST_CLUSTER_OPT_ENV), so the
 * tests neither read nor change the real environment of this process.
 *
 * One file past 500 lines: Slurm's many spellings (hostlists, tasks per node,
 * GPUs) are each a case over the one step helper below. */
#define _POSIX_C_SOURCE 200809L

#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

/* A Slurm step's variables; NULL leaves a variable unset. */
struct slurm_step {
  const char* procid;
  const char* num_tasks;
  const char* nodelist;
  const char* tasks_per_node;
};

struct env_buffer {
  char storage[4][256];
  const char* entries[5];
};

static const char* const* step_env(const struct slurm_step* step, struct env_buffer* buffer) {
  const char* names[4] = {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_NODELIST",
                          "SLURM_STEP_TASKS_PER_NODE"};
  const char* values[4] = {step->procid, step->num_tasks, step->nodelist, step->tasks_per_node};
  size_t n = 0;
  for (size_t i = 0; i < 4; ++i) {
    if (values[i] == NULL) continue;
    snprintf(buffer->storage[n], sizeof buffer->storage[n], "%s=%s", names[i], values[i]);
    buffer->entries[n] = buffer->storage[n];
    ++n;
  }
  buffer->entries[n] = NULL;
  return buffer->entries;
}

/* Options for the SLURM resolver reading `step`; the caller adds fields. */
static dist_cluster_options_t slurm_options(const struct slurm_step* step, struct env_buffer* buffer) {
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV;
  options.resolver = DIST_RESOLVER_SLURM;
  options.env = step_env(step, buffer);
  return options;
}

static dist_cluster_t* resolve_ok(const dist_cluster_options_t* options) {
  dist_cluster_t* c = NULL;
  assert_dist_ok(dist_cluster_resolve(options, &c));
  assert_non_null(c);
  return c;
}

static dist_cluster_t* resolve_step(const struct slurm_step* step) {
  struct env_buffer buffer;
  dist_cluster_options_t options = slurm_options(step, &buffer);
  return resolve_ok(&options);
}

/* The job has exactly these addresses, in task order. */
static void assert_job(const dist_cluster_t* c, const char* job, const char* const* expected) {
  int32_t n = 0;
  while (expected[n] != NULL) ++n;
  assert_int_equal(num_tasks_of(c, job), n);
  for (int32_t i = 0; i < n; ++i) assert_string_equal(address_of(c, job, i), expected[i]);
}

static void assert_devices(const dist_cluster_t* c, const char* expected) {
  const char* devices = NULL;
  assert_dist_ok(dist_cluster_cuda_visible_devices(c, &devices));
  assert_non_null(devices);
  assert_string_equal(devices, expected);
}

static int32_t gpus_of(const dist_cluster_t* c) {
  int32_t count = -1;
  assert_dist_ok(dist_cluster_num_accelerators(c, "GPU", &count));
  return count;
}

static void test_single_node(void** state) {
  (void)state;
  const struct slurm_step step = {"1", "2", "node1", "2"};
  dist_cluster_t* c = resolve_step(&step);
  static const char* const workers[] = {"node1:8888", "node1:8889", NULL};
  assert_job(c, "worker", workers);
  assert_task(c, "worker", 1);
  assert_master(c, NULL, -1, NULL, "grpc://node1:8889");
  assert_master(c, "worker", 0, NULL, "grpc://node1:8888");
  assert_master(c, "worker", 0, "ucx", "ucx://node1:8888");
  assert_master(c, "worker", 0, "", "grpc://node1:8888"); /* TF's `rpc_layer or self.rpc_layer` */
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_SLURM);
  /* TF's default rpc layer. */
  const char* rpc = NULL;
  assert_dist_ok(dist_cluster_rpc_layer(c, &rpc));
  assert_non_null(rpc);
  assert_string_equal(rpc, "grpc");
  size_t jobs = 0;
  assert_dist_ok(dist_cluster_num_jobs(c, &jobs));
  assert_int_equal(jobs, 1);
  dist_cluster_destroy(c);
}

static void test_multi_node_hostlist(void** state) {
  (void)state;
  /* 8 nodes: the first three listed run two tasks, the other five one. As TF
   * does, the nodes are sorted by name and keep their counts. */
  const struct slurm_step step = {"7", "11", "t02n[13-16,20],gpu-[001-003]", "2(x3),1(x5)"};
  dist_cluster_t* c = resolve_step(&step);
  static const char* const workers[] = {"gpu-001:8888", "gpu-002:8888", "gpu-003:8888", "t02n13:8888",
                                        "t02n13:8889",  "t02n14:8888",  "t02n14:8889",  "t02n15:8888",
                                        "t02n15:8889",  "t02n16:8888",  "t02n20:8888",  NULL};
  assert_job(c, "worker", workers);
  assert_task(c, "worker", 7);
  assert_master(c, NULL, -1, NULL, "grpc://t02n15:8888");
  dist_cluster_destroy(c);
}

static void test_tasks_per_node_repeats(void** state) {
  (void)state;
  const struct slurm_step step = {"6", "7", "n[1-4]", "2(x3),1"};
  dist_cluster_t* c = resolve_step(&step);
  static const char* const workers[] = {"n1:8888", "n1:8889", "n2:8888", "n2:8889",
                                        "n3:8888", "n3:8889", "n4:8888", NULL};
  assert_job(c, "worker", workers);
  assert_task(c, "worker", 6);
  dist_cluster_destroy(c);
}

static void test_hostlist_forms(void** state) {
  (void)state;
  /* Several groups in one name: the product, leftmost group varying slowest. */
  const struct slurm_step product = {"0", "4", "n[1-2]-[3-4]", "1(x4)"};
  dist_cluster_t* c = resolve_step(&product);
  static const char* const product_hosts[] = {"n1-3:8888", "n1-4:8888", "n2-3:8888", "n2-4:8888", NULL};
  assert_job(c, "worker", product_hosts);
  dist_cluster_destroy(c);

  /* Zero padding follows the low bound as written. */
  const struct slurm_step padded = {"0", "4", "gpu-[08-11]", "1(x4)"};
  c = resolve_step(&padded);
  static const char* const padded_hosts[] = {"gpu-08:8888", "gpu-09:8888", "gpu-10:8888", "gpu-11:8888", NULL};
  assert_job(c, "worker", padded_hosts);
  dist_cluster_destroy(c);

  const struct slurm_step unpadded = {"0", "3", "c[9-11]", "1,1,1"};
  c = resolve_step(&unpadded);
  static const char* const unpadded_hosts[] = {"c10:8888", "c11:8888", "c9:8888", NULL};  /* sorted as TF */
  assert_job(c, "worker", unpadded_hosts);
  dist_cluster_destroy(c);

  /* One host without brackets; dots and dashes are plain text. */
  const struct slurm_step single = {"2", "3", "login-1.cluster.example", "3"};
  c = resolve_step(&single);
  static const char* const single_hosts[] = {"login-1.cluster.example:8888", "login-1.cluster.example:8889",
                                             "login-1.cluster.example:8890", NULL};
  assert_job(c, "worker", single_hosts);
  assert_task(c, "worker", 2);
  dist_cluster_destroy(c);

  /* Node order is TF's: sorted by name (n10 before n9). */
  const struct slurm_step order = {"0", "3", "n9,n10,a1", "1(x3)"};
  c = resolve_step(&order);
  static const char* const order_hosts[] = {"a1:8888", "n10:8888", "n9:8888", NULL};
  assert_job(c, "worker", order_hosts);
  dist_cluster_destroy(c);
}

static void test_jobs_split(void** state) {
  (void)state;
  /* Given unsorted; ranks go to jobs in sorted name order: ps first. */
  const char* names[] = {"worker", "ps"};
  const int32_t counts[] = {3, 1};
  static const char* const ps[] = {"h1:8888", NULL};
  static const char* const workers[] = {"h1:8889", "h2:8888", "h2:8889", NULL};
  const struct {
    const char* procid;
    const char* type;
    int32_t id;
    const char* master;
  } expected[] = {
      {"0", "ps", 0, "grpc://h1:8888"},
      {"1", "worker", 0, "grpc://h1:8889"},
      {"2", "worker", 1, "grpc://h2:8888"},
      {"3", "worker", 2, "grpc://h2:8889"},
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i) {
    const struct slurm_step step = {expected[i].procid, "4", "h[1-2]", "2(x2)"};
    struct env_buffer buffer;
    dist_cluster_options_t options = slurm_options(&step, &buffer);
    options.field_mask |= DIST_CLUSTER_OPT_JOBS;
    options.job_names = names;
    options.job_counts = counts;
    options.num_jobs = 2;
    dist_cluster_t* c = resolve_ok(&options);
    assert_job(c, "ps", ps);
    assert_job(c, "worker", workers);
    assert_task(c, expected[i].type, expected[i].id);
    assert_master(c, NULL, -1, NULL, expected[i].master);
    assert_master(c, "ps", 0, "grpc", "grpc://h1:8888");
    const char* first_job = NULL;
    assert_dist_ok(dist_cluster_job_name(c, 0, &first_job));
    assert_string_equal(first_job, "ps");
    dist_cluster_destroy(c);
  }
}

static void test_port_base_and_overrides(void** state) {
  (void)state;
  const struct slurm_step step = {"3", "4", "h[1-2]", "2(x2)"};
  struct env_buffer buffer;
  dist_cluster_options_t options = slurm_options(&step, &buffer);
  options.field_mask |= DIST_CLUSTER_OPT_PORT_BASE | DIST_CLUSTER_OPT_RPC_LAYER;
  options.port_base = 2000;
  options.rpc_layer = "grpc";
  dist_cluster_t* c = resolve_ok(&options);
  static const char* const workers[] = {"h1:2000", "h1:2001", "h2:2000", "h2:2001", NULL};
  assert_job(c, "worker", workers);
  assert_master(c, NULL, -1, NULL, "grpc://h2:2001");
  dist_cluster_destroy(c);

  /* The highest base that still fits two tasks below 65536. */
  options.port_base = 65534;
  c = resolve_ok(&options);
  static const char* const top[] = {"h1:65534", "h1:65535", "h2:65534", "h2:65535", NULL};
  assert_job(c, "worker", top);
  dist_cluster_destroy(c);

  /* Explicit task type/id replace what the rank says. */
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV | DIST_CLUSTER_OPT_TASK_ID;
  options.task_id = 0;
  c = resolve_ok(&options);
  assert_task(c, "worker", 0);
  assert_master(c, NULL, -1, NULL, "grpc://h1:8888");
  dist_cluster_destroy(c);
}

static void test_tasks_per_node_option(void** state) {
  (void)state;
  /* The option wins over the environment's counts and needs none of its own. */
  const struct slurm_step steps[] = {{"5", "6", "n[1-3]", "1(x3)"}, {"5", "6", "n[1-3]", NULL}};
  for (size_t i = 0; i < 2; ++i) {
    struct env_buffer buffer;
    dist_cluster_options_t options = slurm_options(&steps[i], &buffer);
    options.field_mask |= DIST_CLUSTER_OPT_TASKS_PER_NODE;
    options.tasks_per_node = 2;
    dist_cluster_t* c = resolve_ok(&options);
    static const char* const workers[] = {"n1:8888", "n1:8889", "n2:8888", "n2:8889", "n3:8888", "n3:8889", NULL};
    assert_job(c, "worker", workers);
    assert_task(c, "worker", 5);
    dist_cluster_destroy(c);
  }
}

/* Resolves rank `procid` of a step with the given GPU options (-1: unset). */
static dist_cluster_t* resolve_gpus(const char* procid, const char* num_tasks, const char* nodelist,
                                    const char* tasks_per_node, int32_t gpus_per_node, int32_t gpus_per_task,
                                    int32_t num_gpus) {
  const struct slurm_step step = {procid, num_tasks, nodelist, tasks_per_node};
  struct env_buffer buffer;
  dist_cluster_options_t options = slurm_options(&step, &buffer);
  if (gpus_per_node >= 0) {
    options.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_NODE;
    options.gpus_per_node = gpus_per_node;
  }
  if (gpus_per_task >= 0) {
    options.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_TASK;
    options.gpus_per_task = gpus_per_task;
  }
  if (num_gpus >= 0) {
    options.field_mask |= DIST_CLUSTER_OPT_NUM_GPUS;
    options.num_gpus = num_gpus;
  }
  return resolve_ok(&options);
}

static void test_gpus(void** state) {
  (void)state;
  /* 4 GPUs per node, 2 tasks per node: 2 GPUs each, by position on the node. */
  const char* per_rank[] = {"0,1", "2,3", "0,1", "2,3"};
  const char* ranks[] = {"0", "1", "2", "3"};
  for (size_t r = 0; r < 4; ++r) {
    dist_cluster_t* c = resolve_gpus(ranks[r], "4", "n[1-2]", "2(x2)", 4, -1, -1);
    assert_devices(c, per_rank[r]);
    assert_int_equal(gpus_of(c), 2);
    dist_cluster_destroy(c);
  }
  /* An explicit GPUs-per-task leaves the rest of the node unused. */
  const char* one_each[] = {"0", "1", "0", "1"};
  for (size_t r = 0; r < 4; ++r) {
    dist_cluster_t* c = resolve_gpus(ranks[r], "4", "n[1-2]", "2(x2)", 4, 1, -1);
    assert_devices(c, one_each[r]);
    assert_int_equal(gpus_of(c), 1);
    dist_cluster_destroy(c);
  }
  /* Uneven nodes: the fullest node (3 tasks) sets 6 / 3 = 2 GPUs per task. */
  dist_cluster_t* c = resolve_gpus("2", "4", "a,b", "3,1", 6, -1, -1);
  assert_devices(c, "4,5");
  assert_int_equal(gpus_of(c), 2);
  dist_cluster_destroy(c);
  c = resolve_gpus("3", "4", "a,b", "3,1", 6, -1, -1);
  assert_devices(c, "0,1");
  dist_cluster_destroy(c);
  /* 3 GPUs for 2 tasks: one each, rounded down. */
  c = resolve_gpus("1", "2", "a", "2", 3, -1, -1);
  assert_devices(c, "1");
  assert_int_equal(gpus_of(c), 1);
  dist_cluster_destroy(c);
  /* No GPUs: an empty device list hides every device. */
  c = resolve_gpus("1", "2", "a", "2", 0, -1, -1);
  assert_devices(c, "");
  assert_int_equal(gpus_of(c), 0);
  dist_cluster_destroy(c);
  /* num_gpus overrides the reported count, not the assignment. */
  c = resolve_gpus("1", "2", "a", "2", 4, -1, 7);
  assert_devices(c, "2,3");
  assert_int_equal(gpus_of(c), 7);
  dist_cluster_destroy(c);
}

static void test_environment_untouched(void** state) {
  (void)state;
  /* auto_set_gpu defaults to on, but an environment given as a list is never
   * written back to the process. */
  const char* before = getenv("CUDA_VISIBLE_DEVICES");
  char saved[256] = "";
  if (before != NULL) snprintf(saved, sizeof saved, "%s", before);
  dist_cluster_t* c = resolve_gpus("1", "2", "a", "2", 4, -1, -1);
  assert_devices(c, "2,3");
  dist_cluster_destroy(c);
  const char* after = getenv("CUDA_VISIBLE_DEVICES");
  if (before == NULL) {
    assert_null(after);
  } else {
    assert_non_null(after);
    assert_string_equal(after, saved);
  }
}

static void test_auto_set_gpu_in_process(void** state) {
  (void)state;
  /* With the real environment the resolver exports CUDA_VISIBLE_DEVICES. That
   * changes the environment, so it runs in a child process. */
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    int ok = setenv("SLURM_PROCID", "1", 1) == 0 && setenv("SLURM_STEP_NUM_TASKS", "2", 1) == 0 &&
             setenv("SLURM_STEP_NODELIST", "a", 1) == 0 && setenv("SLURM_STEP_TASKS_PER_NODE", "2", 1) == 0 &&
             setenv("CUDA_VISIBLE_DEVICES", "9", 1) == 0;
    dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
    options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_GPUS_PER_NODE;
    options.resolver = DIST_RESOLVER_SLURM;
    options.gpus_per_node = 4;
    dist_cluster_t* c = NULL;
    ok = ok && dist_cluster_resolve(&options, &c) == DIST_OK;
    const char* set = getenv("CUDA_VISIBLE_DEVICES");
    ok = ok && set != NULL && strcmp(set, "2,3") == 0;
    dist_cluster_destroy(c);
    /* auto_set_gpu = 0 leaves it alone. */
    setenv("CUDA_VISIBLE_DEVICES", "9", 1);
    options.field_mask |= DIST_CLUSTER_OPT_AUTO_SET_GPU;
    options.auto_set_gpu = 0;
    c = NULL;
    ok = ok && dist_cluster_resolve(&options, &c) == DIST_OK;
    set = getenv("CUDA_VISIBLE_DEVICES");
    ok = ok && set != NULL && strcmp(set, "9") == 0;
    dist_cluster_destroy(c);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_to_json(void** state) {
  (void)state;
  dist_cluster_t* c = resolve_gpus("1", "3", "n[1-2]", "2,1", 4, -1, -1);
  char* json = json_of(c);
  assert_string_equal(json,
                      "{\"cluster\":{\"worker\":[\"n1:8888\",\"n1:8889\",\"n2:8888\"]},"
                      "\"cuda_visible_devices\":\"2,3\",\"environment\":null,\"master\":\"grpc://n1:8889\","
                      "\"num_accelerators\":{\"GPU\":2},\"resolver\":\"slurm\",\"rpc_layer\":\"grpc\","
                      "\"task_id\":1,\"task_type\":\"worker\"}");
  /* The JSON reads back as the same cluster. */
  dist_cluster_t* back = NULL;
  assert_dist_ok(dist_cluster_from_json(json, &back));
  static const char* const workers[] = {"n1:8888", "n1:8889", "n2:8888", NULL};
  assert_job(back, "worker", workers);
  assert_task(back, "worker", 1);
  assert_devices(back, "2,3");
  assert_int_equal(gpus_of(back), 2);
  dist_cluster_destroy(back);
  dist_string_free(json);
  dist_cluster_destroy(c);
}

static void test_auto_picks_slurm(void** state) {
  (void)state;
  const struct slurm_step step = {"0", "1", "solo", "1"};
  struct env_buffer buffer;
  dist_cluster_options_t options = slurm_options(&step, &buffer);
  options.resolver = DIST_RESOLVER_AUTO;
  options.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_NODE;
  options.gpus_per_node = 0;
  dist_cluster_t* c = resolve_ok(&options);
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_SLURM);
  assert_master(c, NULL, -1, NULL, "grpc://solo:8888");
  dist_cluster_destroy(c);
}

/* ---- Errors: each names the variable (or option) and the value. ---------------- */

struct bad_step {
  struct slurm_step step;
  const char* needle1;
  const char* needle2;
};

static void expect_invalid(const dist_cluster_options_t* options, const char* what, const char* needle1,
                           const char* needle2) {
  dist_cluster_t* c = NULL;
  dist_status_t status = dist_cluster_resolve(options, &c);
  if (status != DIST_ERR_INVALID_ARGUMENT) {
    fail_msg("%s: got %s (%s), expected DIST_ERR_INVALID_ARGUMENT", what, dist_status_string(status),
             dist_last_error());
  }
  assert_null(c);
  if (strstr(dist_last_error(), needle1) == NULL || strstr(dist_last_error(), needle2) == NULL) {
    fail_msg("%s: message \"%s\" lacks \"%s\" or \"%s\"", what, dist_last_error(), needle1, needle2);
  }
}

static void test_environment_errors(void** state) {
  (void)state;
  static const struct bad_step cases[] = {
      /* Missing variables. */
      {{NULL, "2", "n1", "2"}, "SLURM: SLURM_PROCID is not set", "SLURM_PROCID"},
      {{"0", NULL, "n1", "2"}, "SLURM: SLURM_STEP_NUM_TASKS is not set", "SLURM_STEP_NUM_TASKS"},
      {{"0", "2", NULL, "2"}, "SLURM: SLURM_STEP_NODELIST is not set", "SLURM_STEP_NODELIST"},
      {{"0", "2", "n1", NULL}, "SLURM: SLURM_STEP_TASKS_PER_NODE is not set", "SLURM_STEP_TASKS_PER_NODE"},
      /* Numbers that are not, negative, or too large. */
      {{"x", "2", "n1", "2"}, "SLURM_PROCID: 'x'", "is not an integer"},
      {{"", "2", "n1", "2"}, "SLURM_PROCID: ''", "is not an integer"},
      {{"+1", "2", "n1", "2"}, "SLURM_PROCID: '+1'", "is not an integer"},
      {{"1.0", "2", "n1", "2"}, "SLURM_PROCID: '1.0'", "is not an integer"},
      {{"-1", "2", "n1", "2"}, "SLURM_PROCID: '-1'", "out of range"},
      {{"99999999999", "2", "n1", "2"}, "SLURM_PROCID: '99999999999'", "out of range"},
      {{"0", "two", "n1", "2"}, "SLURM_STEP_NUM_TASKS: 'two'", "is not an integer"},
      {{"0", "-2", "n1", "2"}, "SLURM_STEP_NUM_TASKS: '-2'", "out of range"},
      {{"0", "0", "n1", "2"}, "SLURM_STEP_NUM_TASKS: '0'", "out of range [1,"},
      {{"0", "99999999999", "n1", "2"}, "SLURM_STEP_NUM_TASKS: '99999999999'", "out of range"},
      {{"0", "2000000", "n1", "2"}, "SLURM_STEP_NUM_TASKS 2000000", "1000000"},
      /* The rank must be one of the tasks. */
      {{"2", "2", "n1", "2"}, "SLURM_PROCID 2", "SLURM_STEP_NUM_TASKS 2"},
      /* Malformed host lists. */
      {{"0", "2", "", "2"}, "SLURM_STEP_NODELIST ''", "empty"},
      {{"0", "2", "n[1-2", "1,1"}, "SLURM_STEP_NODELIST 'n[1-2'", "never closed"},
      {{"0", "2", "n1-2]", "1,1"}, "SLURM_STEP_NODELIST 'n1-2]'", "has no '['"},
      {{"0", "2", "n[1[2]]", "1,1"}, "SLURM_STEP_NODELIST 'n[1[2]]'", "nested"},
      {{"0", "2", "a,,b", "1,1"}, "SLURM_STEP_NODELIST 'a,,b'", "empty host name"},
      {{"0", "2", ",a", "2"}, "SLURM_STEP_NODELIST ',a'", "empty host name"},
      {{"0", "2", "a,", "2"}, "SLURM_STEP_NODELIST 'a,'", "empty host name"},
      {{"0", "2", "n[2-1]", "1,1"}, "SLURM_STEP_NODELIST 'n[2-1]'", "range '2-1' ends below its start"},
      {{"0", "2", "n[a-b]", "1,1"}, "SLURM_STEP_NODELIST 'n[a-b]'", "not a digit"},
      {{"0", "2", "n[1-2-3]", "1,1"}, "SLURM_STEP_NODELIST 'n[1-2-3]'", "not a digit"},
      {{"0", "2", "n[]", "2"}, "SLURM_STEP_NODELIST 'n[]'", "empty bracket group"},
      {{"0", "2", "n[1,]", "1,1"}, "SLURM_STEP_NODELIST 'n[1,]'", "empty range"},
      {{"0", "2", "n[-3]", "1,1"}, "SLURM_STEP_NODELIST 'n[-3]'", "missing a number"},
      {{"0", "2", "n[1-]", "1,1"}, "SLURM_STEP_NODELIST 'n[1-]'", "missing a number"},
      {{"0", "2", "n 1", "2"}, "SLURM_STEP_NODELIST 'n 1'", "blank"},
      {{"0", "2", "n[0-9999999]", "2"}, "SLURM_STEP_NODELIST 'n[0-9999999]'", "more than 1000000 hosts"},
      {{"0", "2", "n[0-1234567890123456789]", "2"}, "SLURM_STEP_NODELIST", "more than 18 digits"},
      /* Malformed tasks per node. */
      {{"0", "2", "n1", ""}, "SLURM_STEP_TASKS_PER_NODE ''", "empty"},
      {{"0", "2", "n1", "x"}, "SLURM_STEP_TASKS_PER_NODE 'x'", "COUNT(xREPEAT)"},
      {{"0", "2", "n1", "-2"}, "SLURM_STEP_TASKS_PER_NODE '-2'", "COUNT(xREPEAT)"},
      {{"0", "2", "n1", "0"}, "SLURM_STEP_TASKS_PER_NODE '0'", "task count of 0"},
      {{"0", "2", "n[1-2]", "1(x0)"}, "SLURM_STEP_TASKS_PER_NODE '1(x0)'", "repetition of 0"},
      {{"0", "2", "n[1-2]", "1(x2"}, "SLURM_STEP_TASKS_PER_NODE '1(x2'", "COUNT(xREPEAT)"},
      {{"0", "2", "n[1-2]", "1(2)"}, "SLURM_STEP_TASKS_PER_NODE '1(2)'", "COUNT(xREPEAT)"},
      {{"0", "2", "n[1-2]", "1(x)"}, "SLURM_STEP_TASKS_PER_NODE '1(x)'", "COUNT(xREPEAT)"},
      {{"0", "2", "n[1-2]", "1,,1"}, "SLURM_STEP_TASKS_PER_NODE '1,,1'", "empty entry"},
      {{"0", "2", "n1", "99999999999"}, "SLURM_STEP_TASKS_PER_NODE '99999999999'", "above 2147483647"},
      /* The variables disagree with each other. */
      {{"0", "4", "n[1-3]", "2(x2)"}, "SLURM_STEP_TASKS_PER_NODE '2(x2)' gives 2 nodes",
       "SLURM_STEP_NODELIST 'n[1-3]' has 3"},
      {{"0", "3", "n[1-2]", "2(x2)"}, "the nodes run 4 tasks", "SLURM_STEP_NUM_TASKS is 3"},
      /* A node listed twice is one node (TF's host -> count map). */
      {{"0", "2", "n1,n1", "1,1"}, "the nodes run 1 tasks", "SLURM_STEP_NUM_TASKS is 2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    struct env_buffer buffer;
    dist_cluster_options_t options = slurm_options(&cases[i].step, &buffer);
    options.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_NODE;  /* no device counting needed */
    options.gpus_per_node = 0;
    char what[64];
    snprintf(what, sizeof what, "case %zu", i);
    expect_invalid(&options, what, cases[i].needle1, cases[i].needle2);
  }
}

static void test_option_errors(void** state) {
  (void)state;
  const struct slurm_step step = {"0", "4", "h[1-2]", "2(x2)"};
  struct env_buffer buffer;
  dist_cluster_options_t base = slurm_options(&step, &buffer);

  /* Jobs that do not add up to the tasks. */
  const char* names[] = {"ps", "worker"};
  const int32_t counts[] = {1, 2};
  dist_cluster_options_t options = base;
  options.field_mask |= DIST_CLUSTER_OPT_JOBS;
  options.job_names = names;
  options.job_counts = counts;
  options.num_jobs = 2;
  expect_invalid(&options, "jobs", "SLURM: jobs ask for 3 tasks", "4 were launched");

  /* tasks_per_node that disagrees with SLURM_STEP_NUM_TASKS. */
  options = base;
  options.field_mask |= DIST_CLUSTER_OPT_TASKS_PER_NODE;
  options.tasks_per_node = 3;
  expect_invalid(&options, "tasks_per_node", "tasks_per_node 3 on 2 nodes", "SLURM_STEP_NUM_TASKS is 4");

  /* More GPUs asked for than the node has. */
  options = base;
  options.field_mask |= DIST_CLUSTER_OPT_GPUS_PER_NODE | DIST_CLUSTER_OPT_GPUS_PER_TASK;
  options.gpus_per_node = 4;
  options.gpus_per_task = 3;
  expect_invalid(&options, "gpus", "requested 3 GPUs per task", "2 tasks per node but the node has 4 GPUs");

  /* GPU counts no node has. */
  options.gpus_per_node = 100000;
  options.gpus_per_task = 1;
  expect_invalid(&options, "gpus_per_node", "options: gpus_per_node 100000", "more than 1024");
  options.gpus_per_node = 4;
  options.gpus_per_task = 5000;
  expect_invalid(&options, "gpus_per_task", "options: gpus_per_task 5000", "more than 1024");

  /* Ports past 65535. */
  options = base;
  options.field_mask |= DIST_CLUSTER_OPT_PORT_BASE;
  options.port_base = 65535;
  expect_invalid(&options, "port_base", "port_base 65535", "above 65535");
  options.port_base = 70000;
  expect_invalid(&options, "port_base range", "port_base 70000", "above 65535");

  /* A task override that is not in the cluster. */
  options = base;
  options.field_mask |= DIST_CLUSTER_OPT_TASK_ID;
  options.task_id = 4;
  expect_invalid(&options, "task_id", "options: task_id 4", "out of range for job 'worker'");
}

/* ---- dist-info expand-hostlist ------------------------------------------------------ */

/* Runs `dist-info <arguments>` through the shell; returns its exit code and
 * stores stdout (and stderr when merge_stderr) in `out`. */
static int run_dist_info(const char* arguments, int merge_stderr, char* out, size_t out_size) {
  const char* binary = getenv("DIST_INFO");
  if (binary == NULL) fail_msg("DIST_INFO is not set (tests/CMakeLists.txt sets it for ctest)");
  char command[1024];
  snprintf(command, sizeof command, "'%s' %s%s", binary, arguments, merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(command, "r");
  assert_non_null(pipe);
  size_t used = fread(out, 1, out_size - 1, pipe);
  out[used] = '\0';
  int status = pclose(pipe);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static void test_dist_info_expand_hostlist(void** state) {
  (void)state;
  char out[4096];
  assert_int_equal(run_dist_info("expand-hostlist 't02n[13-16,20],gpu-[001-003]'", 0, out, sizeof out), 0);
  assert_string_equal(out, "t02n13\nt02n14\nt02n15\nt02n16\nt02n20\ngpu-001\ngpu-002\ngpu-003\n");
  assert_int_equal(run_dist_info("expand-hostlist 'n[1-2]-[3-4],login'", 0, out, sizeof out), 0);
  assert_string_equal(out, "n1-3\nn1-4\nn2-3\nn2-4\nlogin\n");
  assert_int_equal(run_dist_info("expand-hostlist 'c[098-101]'", 0, out, sizeof out), 0);
  assert_string_equal(out, "c098\nc099\nc100\nc101\n");

  /* A bad expression: the message on stderr names it, nothing on stdout. */
  assert_int_not_equal(run_dist_info("expand-hostlist 'n[1-'", 1, out, sizeof out), 0);
  if (strstr(out, "'n[1-'") == NULL || strstr(out, "never closed") == NULL) {
    fail_msg("unexpected error output: %s", out);
  }
  assert_int_not_equal(run_dist_info("expand-hostlist 'n[1-' 2>/dev/null", 0, out, sizeof out), 0);
  assert_string_equal(out, "");
  /* No expression at all. */
  assert_int_not_equal(run_dist_info("expand-hostlist", 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "expand-hostlist"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_node),
      cmocka_unit_test(test_multi_node_hostlist),
      cmocka_unit_test(test_tasks_per_node_repeats),
      cmocka_unit_test(test_hostlist_forms),
      cmocka_unit_test(test_jobs_split),
      cmocka_unit_test(test_port_base_and_overrides),
      cmocka_unit_test(test_tasks_per_node_option),
      cmocka_unit_test(test_gpus),
      cmocka_unit_test(test_environment_untouched),
      cmocka_unit_test(test_auto_set_gpu_in_process),
      cmocka_unit_test(test_to_json),
      cmocka_unit_test(test_auto_picks_slurm),
      cmocka_unit_test(test_environment_errors),
      cmocka_unit_test(test_option_errors),
      cmocka_unit_test(test_dist_info_expand_hostlist),
  };
  return cmocka_run_group_tests_name("cluster_slurm", tests, NULL, NULL);
}
