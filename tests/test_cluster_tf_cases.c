/* TensorFlow's resolver test cases (tests/tf_cases/cluster_cases.h), each
 * resolved twice: through the C ABI (the environment handed over as a list)
 * and through `dist-info cluster --json` (a child process with exactly that
 * environment). Both must give TF's answers, and the same JSON. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"
#include "tf_cases/cluster_cases.h"

enum { kCases = sizeof kClusterCases / sizeof kClusterCases[0], kOutput = 1 << 16, kArgs = 48 };

static dist_cluster_t* resolved[kCases]; /* rows resolved so far, for UNION's members */

static int32_t number(const char* text) { return (int32_t)strtol(text, NULL, 10); }

static size_t row_of(const char* name) {
  for (size_t i = 0; i < kCases; ++i) {
    if (strcmp(kClusterCases[i].name, name) == 0) return i;
  }
  fail_msg("no row named \"%s\"", name);
  return 0;
}

/* ---- The C ABI ------------------------------------------------------------------ */

struct job_split {
  char names[2][16];
  const char* name_ptrs[2];
  int32_t counts[2];
};

/* "ps=1,worker=2" (at most two jobs in TF's cases). */
static size_t parse_jobs(const char* text, struct job_split* split) {
  size_t n = 0;
  for (const char* at = text; at != NULL && *at != '\0' && n < 2; ++n) {
    const char* eq = strchr(at, '=');
    assert_non_null(eq);
    snprintf(split->names[n], sizeof split->names[n], "%.*s", (int)(eq - at), at);
    split->name_ptrs[n] = split->names[n];
    split->counts[n] = number(eq + 1);
    at = strchr(eq, ',');
    if (at != NULL) ++at;
  }
  return n;
}

static dist_status_t resolve_row(const struct cluster_case* row, dist_cluster_t** out) {
  dist_cluster_options_t o = DIST_CLUSTER_OPTIONS_INIT;
  struct job_split split;
  const dist_cluster_t* members[kMaxMembers];
  o.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV;
  o.resolver = row->resolver;
  o.env = row->env;
#define GIVE(field, option, bit, value) \
  if (row->field != NULL) {              \
    o.option = value;                    \
    o.field_mask |= bit;                 \
  }
  GIVE(task_type, task_type, DIST_CLUSTER_OPT_TASK_TYPE, row->task_type)
  GIVE(task_id, task_id, DIST_CLUSTER_OPT_TASK_ID, number(row->task_id))
  GIVE(rpc_layer, rpc_layer, DIST_CLUSTER_OPT_RPC_LAYER, row->rpc_layer)
  GIVE(environment, environment, DIST_CLUSTER_OPT_ENVIRONMENT, row->environment)
  GIVE(cluster_spec, cluster_spec_json, DIST_CLUSTER_OPT_CLUSTER_SPEC, row->cluster_spec)
  GIVE(master, master, DIST_CLUSTER_OPT_MASTER, row->master)
  GIVE(num_gpus, num_gpus, DIST_CLUSTER_OPT_NUM_GPUS, number(row->num_gpus))
  GIVE(port_base, port_base, DIST_CLUSTER_OPT_PORT_BASE, number(row->port_base))
  GIVE(tasks_per_node, tasks_per_node, DIST_CLUSTER_OPT_TASKS_PER_NODE, number(row->tasks_per_node))
  GIVE(gpus_per_node, gpus_per_node, DIST_CLUSTER_OPT_GPUS_PER_NODE, number(row->gpus_per_node))
  GIVE(gpus_per_task, gpus_per_task, DIST_CLUSTER_OPT_GPUS_PER_TASK, number(row->gpus_per_task))
  GIVE(auto_set_gpu, auto_set_gpu, DIST_CLUSTER_OPT_AUTO_SET_GPU, number(row->auto_set_gpu))
#undef GIVE
  if (row->jobs != NULL) {
    o.num_jobs = parse_jobs(row->jobs, &split);
    o.job_names = split.name_ptrs;
    o.job_counts = split.counts;
    o.field_mask |= DIST_CLUSTER_OPT_JOBS;
  }
  for (size_t m = 0; m < kMaxMembers && row->members[m] != NULL; ++m) {
    members[m] = resolved[row_of(row->members[m])];
    assert_non_null(members[m]);
    o.members = members;
    o.num_members = m + 1;
    o.field_mask |= DIST_CLUSTER_OPT_MEMBERS;
  }
  return dist_cluster_resolve(&o, out);
}

/* `"key":value` in a compact JSON object, ending the member. */
static void assert_member(const char* json, const char* key, const char* value, const char* row) {
  char member[1024];
  snprintf(member, sizeof member, "\"%s\":%s", key, value);
  for (const char* at = strstr(json, member); at != NULL; at = strstr(at + 1, member)) {
    char after = at[strlen(member)];
    if (after == ',' || after == '}') return;
  }
  fail_msg("%s: expected %s in %s", row, member, json);
}

static void quote_or_null(const char* value, char* out, size_t size) {
  if (value == NULL || strcmp(value, "-") == 0) {
    snprintf(out, size, "null");
  } else {
    snprintf(out, size, "\"%s\"", value);
  }
}

static void check_text(const char* got, const char* expected, const char* what, const char* row) {
  if (strcmp(expected, "-") == 0) {
    if (got != NULL) fail_msg("%s: %s is \"%s\", expected none", row, what, got);
    return;
  }
  if (got == NULL || strcmp(got, expected) != 0) {
    fail_msg("%s: %s is \"%s\", expected \"%s\"", row, what, got ? got : "(none)", expected);
  }
}

static void check_master(const dist_cluster_t* c, const struct master_case* q, const char* row) {
  char* master = NULL;
  dist_status_t status = dist_cluster_master(c, q->type, q->id ? number(q->id) : -1, q->rpc, &master);
  const char* error = strncmp(q->expected, "error: ", 7) == 0 ? q->expected + 7 : NULL;
  if (error != NULL) {
    if (status != DIST_ERR_INVALID_ARGUMENT || strstr(dist_last_error(), error) == NULL) {
      fail_msg("%s: master(%s, %s, %s) gave %s (%s), expected an error saying \"%s\"", row, q->type, q->id, q->rpc,
               dist_status_string(status), dist_last_error(), error);
    }
    assert_null(master);
    return;
  }
  if (status != DIST_OK) fail_msg("%s: master(): %s", row, dist_last_error());
  if (strcmp(master, q->expected) != 0) {
    fail_msg("%s: master(%s, %s, %s) = \"%s\", expected \"%s\"", row, q->type ? q->type : "None",
             q->id ? q->id : "None", q->rpc ? q->rpc : "None", master, q->expected);
  }
  dist_string_free(master);
}

static void check_answers(const dist_cluster_t* c, const struct cluster_case* row) {
  char* json = json_of(c);
  char value[256];
  if (row->cluster != NULL) assert_member(json, "cluster", row->cluster, row->name);
  if (row->task != NULL) {
    const char* type = NULL;
    int32_t id = -2;
    assert_dist_ok(dist_cluster_task_type(c, &type));
    assert_dist_ok(dist_cluster_task_id(c, &id));
    if (strcmp(row->task, "-") == 0) {
      check_text(type, "-", "task type", row->name);
      assert_int_equal(id, -1);
    } else {
      const char* colon = strrchr(row->task, ':');
      snprintf(value, sizeof value, "%.*s", (int)(colon - row->task), row->task);
      check_text(type, value, "task type", row->name);
      if (id != number(colon + 1)) fail_msg("%s: task id %d, expected %s", row->name, (int)id, colon + 1);
    }
  }
  if (row->rpc != NULL) {
    const char* rpc = NULL;
    assert_dist_ok(dist_cluster_rpc_layer(c, &rpc));
    check_text(rpc, row->rpc, "rpc layer", row->name);
  }
  if (row->env_name != NULL) {
    const char* environment = NULL;
    assert_dist_ok(dist_cluster_environment(c, &environment));
    check_text(environment, row->env_name, "environment", row->name);
  }
  if (row->accelerators != NULL) {
    int32_t gpus = -1;
    const char* gpu = strstr(row->accelerators, "\"GPU\":");
    assert_member(json, "num_accelerators", row->accelerators, row->name);
    assert_dist_ok(dist_cluster_num_accelerators(c, "GPU", &gpus));
    assert_int_equal(gpus, gpu ? number(gpu + 6) : 0);
  }
  if (row->cuda_visible_devices != NULL) {
    const char* devices = NULL;
    assert_dist_ok(dist_cluster_cuda_visible_devices(c, &devices));
    check_text(devices, row->cuda_visible_devices, "CUDA_VISIBLE_DEVICES", row->name);
    quote_or_null(row->cuda_visible_devices, value, sizeof value);
    assert_member(json, "cuda_visible_devices", value, row->name);
  }
  for (size_t m = 0; m < kMaxMasters && row->masters[m].expected != NULL; ++m) {
    const struct master_case* q = &row->masters[m];
    check_master(c, q, row->name);
    if (q->type == NULL && q->id == NULL && q->rpc == NULL && strncmp(q->expected, "error: ", 7) != 0) {
      quote_or_null(q->expected[0] ? q->expected : NULL, value, sizeof value);
      assert_member(json, "master", value, row->name);
    }
  }
  if (row->spot[0] != NULL) check_text(address_of(c, row->spot[0], number(row->spot[1])), row->spot[2], "address", row->name);
  if (row->num_tasks[0] != NULL) assert_int_equal(num_tasks_of(c, row->num_tasks[0]), number(row->num_tasks[1]));
  dist_string_free(json);
}

static void test_c_abi(void** state) {
  (void)state;
  for (size_t i = 0; i < kCases; ++i) {
    const struct cluster_case* row = &kClusterCases[i];
    dist_status_t status = resolve_row(row, &resolved[i]);
    if (row->error != NULL) {
      if (status != DIST_ERR_INVALID_ARGUMENT || strstr(dist_last_error(), row->error) == NULL) {
        fail_msg("%s: got %s (%s), expected an error saying \"%s\"", row->name, dist_status_string(status),
                 dist_last_error(), row->error);
      }
      assert_null(resolved[i]);
      continue;
    }
    if (status != DIST_OK) fail_msg("%s: %s", row->name, dist_last_error());
    check_answers(resolved[i], row);
  }
}

/* ---- dist-info cluster --json ------------------------------------------------- */

/* Runs argv with exactly `env` (plus the loader's and sanitizers' variables of
 * this process); stdout and stderr together into `out`. Returns the exit code. */
static int run_captured(char* const* argv, const char* const* env, char* out, size_t size) {
  extern char** environ;
  const char* child_env[64];
  size_t n = 0;
  for (size_t i = 0; env[i] != NULL; ++i) child_env[n++] = env[i];
  for (char** e = environ; *e != NULL && n + 1 < 64; ++e) {
    if (strncmp(*e, "LD_", 3) == 0 || strstr(*e, "SAN_OPTIONS=") != NULL) child_env[n++] = *e;
  }
  child_env[n] = NULL;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    execve(argv[0], argv, (char* const*)child_env);
    _exit(127);
  }
  close(fds[1]);
  size_t used = 0;
  ssize_t got;
  while ((got = read(fds[0], out + used, size - 1 - used)) > 0 || (got < 0 && errno == EINTR)) {
    if (got > 0) used += (size_t)got;
  }
  out[used] = '\0';
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The pretty JSON made compact (whitespace outside strings dropped). */
static void compact(char* json) {
  size_t w = 0;
  int in_string = 0;
  for (size_t r = 0; json[r] != '\0'; ++r) {
    char ch = json[r];
    if (in_string && ch == '\\' && json[r + 1] != '\0') {
      json[w++] = ch;
      json[w++] = json[++r];
      continue;
    }
    if (ch == '"') in_string = !in_string;
    if (!in_string && (ch == ' ' || ch == '\n')) continue;
    json[w++] = ch;
  }
  json[w] = '\0';
}

/* Without its "masters" member, which the C ABI's JSON does not have. */
static void drop_masters(char* json) {
  char* masters = strstr(json, "\"masters\":{");
  if (masters == NULL) return;
  char* end = strchr(masters, '}');
  assert_non_null(end);
  memmove(masters, end + 2, strlen(end + 2) + 1); /* the member and its comma */
}

/* A query dist-info's --master-for TYPE:ID can ask: both given, no rpc layer,
 * an answer expected. */
static int through_master_for(const struct master_case* q) {
  return q->type != NULL && q->id != NULL && q->rpc == NULL && strncmp(q->expected, "error: ", 7) != 0;
}

static void test_dist_info(void** state) {
  (void)state;
  static const char* const kResolver[] = {"auto", "tf_config", "simple", "slurm", "mpi", "torchrun", "union"};
  static char out[kOutput];
  for (size_t i = 0; i < kCases; ++i) {
    const struct cluster_case* row = &kClusterCases[i];
    if (row->resolver == DIST_RESOLVER_UNION) continue; /* unions are made of handles: C ABI only */
    /* The row's strings are static: argv points at them. */
    char* argv[kArgs + 1] = {getenv("DIST_INFO"), "cluster", "--json", "--resolver", (char*)kResolver[row->resolver]};
    size_t n = 5;
    const char* flags[][2] = {{"--task-type", row->task_type},     {"--task-id", row->task_id},
                              {"--rpc-layer", row->rpc_layer},     {"--environment", row->environment},
                              {"--cluster-spec", row->cluster_spec}, {"--master", row->master},
                              {"--num-gpus", row->num_gpus},       {"--jobs", row->jobs},
                              {"--port-base", row->port_base},     {"--tasks-per-node", row->tasks_per_node},
                              {"--gpus-per-node", row->gpus_per_node}, {"--gpus-per-task", row->gpus_per_task},
                              {"--auto-set-gpu", row->auto_set_gpu}};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
      if (flags[f][1] == NULL) continue;
      argv[n++] = (char*)flags[f][0];
      argv[n++] = (char*)flags[f][1];
    }
    /* master(type, id) of the row's queries that give both, through --master-for. */
    char master_for[kMaxMasters][64];
    for (size_t m = 0; m < kMaxMasters && row->masters[m].expected != NULL; ++m) {
      const struct master_case* q = &row->masters[m];
      if (!through_master_for(q)) continue;
      snprintf(master_for[m], sizeof master_for[m], "%s:%s", q->type, q->id);
      argv[n++] = "--master-for";
      argv[n++] = master_for[m];
    }
    argv[n] = NULL;
    int code = run_captured(argv, row->env, out, sizeof out);
    if (row->error != NULL) {
      if (code == 0 || strstr(out, row->error) == NULL) fail_msg("%s: dist-info said (%d): %s", row->name, code, out);
      continue;
    }
    if (code != 0) fail_msg("%s: dist-info failed (%d): %s", row->name, code, out);
    compact(out);
    for (size_t m = 0; m < kMaxMasters && row->masters[m].expected != NULL; ++m) {
      const struct master_case* q = &row->masters[m];
      if (!through_master_for(q)) continue;
      char key[64], value[128];
      snprintf(key, sizeof key, "%s:%s", q->type, q->id);
      snprintf(value, sizeof value, "\"%s\"", q->expected);
      assert_member(out, key, value, row->name);
    }
    drop_masters(out);
    char* expected = json_of(resolved[i]);
    if (strcmp(out, expected) != 0) fail_msg("%s: dist-info gave\n%s\nthe C ABI\n%s", row->name, out, expected);
    dist_string_free(expected);
  }
}

static void test_expand_hostlist(void** state) {
  (void)state;
  static char out[kOutput];
  const char* no_env[] = {NULL};
  for (size_t i = 0; i < sizeof kHostlistCases / sizeof kHostlistCases[0]; ++i) {
    char* argv[] = {getenv("DIST_INFO"), "expand-hostlist", (char*)kHostlistCases[i].expression, NULL};
    assert_int_equal(run_captured(argv, no_env, out, sizeof out), 0);
    if (strcmp(out, kHostlistCases[i].hosts) != 0) {
      fail_msg("expand-hostlist %s gave\n%s", kHostlistCases[i].expression, out);
    }
  }
}

static int release(void** state) {
  (void)state;
  for (size_t i = 0; i < kCases; ++i) dist_cluster_destroy(resolved[i]);
  return 0;
}

int main(void) {
  if (getenv("DIST_INFO") == NULL) {
    fprintf(stderr, "DIST_INFO is not set (tests/CMakeLists.txt sets it for ctest)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_c_abi),
      cmocka_unit_test(test_dist_info),
      cmocka_unit_test(test_expand_hostlist),
  };
  return cmocka_run_group_tests_name("cluster_tf_cases", tests, NULL, release);
}
