/* TFConfigClusterResolver semantics: the TF_CONFIG document, overrides, master(),
 * sparse jobs, and every malformed input. */
#include "test_support.h"

static dist_status_t resolve_tf_config(const char* tf_config, dist_cluster_t** cluster) {
  char variable[4096];
  snprintf(variable, sizeof variable, "TF_CONFIG=%s", tf_config);
  const char* env[] = {variable, NULL};
  return resolve_with_env(DIST_RESOLVER_TF_CONFIG, env, cluster);
}

static dist_cluster_t* resolved(const char* tf_config) {
  dist_cluster_t* cluster = NULL;
  assert_dist_ok(resolve_tf_config(tf_config, &cluster));
  return cluster;
}

static const char* kThreeJobs =
    "{\"cluster\": {\"chief\": [\"host0:2222\"],"
    "               \"worker\": [\"host1:2222\", \"host2:2222\"],"
    "               \"ps\": [\"host3:2222\"]},"
    " \"task\": {\"type\": \"worker\", \"index\": 1},"
    " \"rpc_layer\": \"grpc\", \"environment\": \"cloud\"}";

static void test_list_jobs(void** state) {
  (void)state;
  dist_cluster_t* c = resolved(kThreeJobs);
  assert_task(c, "worker", 1);
  const char* text = NULL;
  assert_dist_ok(dist_cluster_rpc_layer(c, &text));
  assert_string_equal(text, "grpc");
  assert_dist_ok(dist_cluster_environment(c, &text));
  assert_string_equal(text, "cloud");

  size_t jobs = 0;
  assert_dist_ok(dist_cluster_num_jobs(c, &jobs));
  assert_int_equal(jobs, 3);
  const char* expected_names[] = {"chief", "ps", "worker"};
  for (size_t i = 0; i < 3; ++i) {
    assert_dist_ok(dist_cluster_job_name(c, i, &text));
    assert_string_equal(text, expected_names[i]);
  }
  assert_int_equal(num_tasks_of(c, "chief"), 1);
  assert_int_equal(num_tasks_of(c, "worker"), 2);
  assert_int_equal(num_tasks_of(c, "ps"), 1);
  assert_string_equal(address_of(c, "worker", 0), "host1:2222");
  assert_string_equal(address_of(c, "worker", 1), "host2:2222");
  assert_string_equal(address_of(c, "ps", 0), "host3:2222");

  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_TF_CONFIG);
  dist_cluster_destroy(c);
}

static void test_master(void** state) {
  (void)state;
  dist_cluster_t* c = resolved(kThreeJobs);
  assert_master(c, NULL, -1, NULL, "grpc://host2:2222");     /* this task */
  assert_master(c, "ps", 0, NULL, "grpc://host3:2222");
  assert_master(c, "chief", 0, "ucx", "ucx://host0:2222");   /* explicit layer wins */
  assert_master(c, "ps", 0, "", "host3:2222");               /* TF_CONFIG: "" means no layer */
  assert_master(c, "worker", -1, NULL, "grpc://host2:2222"); /* id from this task */
  char* master = NULL;
  assert_dist_error(dist_cluster_master(c, "ps", 4, NULL, &master), DIST_ERR_INVALID_ARGUMENT,
                    "task index 4 is out of range for job 'ps' (1 tasks)");
  assert_dist_error(dist_cluster_master(c, "nope", 0, NULL, &master), DIST_ERR_INVALID_ARGUMENT,
                    "job 'nope' is not in the cluster", "chief, ps, worker");
  assert_null(master); /* outputs are written only on success */
  dist_cluster_destroy(c);

  /* Without an rpc layer the address is bare. */
  c = resolved("{\"cluster\": {\"worker\": [\"a:1\", \"b:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}");
  assert_master(c, NULL, -1, NULL, "a:1");
  dist_cluster_destroy(c);
  /* As TF: a cluster of one task has no master, whatever task is asked for. */
  c = resolved("{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}");
  assert_master(c, NULL, -1, NULL, "");
  assert_master(c, "worker", 0, "grpc", "");
  dist_cluster_destroy(c);
}

static void test_sparse_job(void** state) {
  (void)state;
  dist_cluster_t* c = resolved(
      "{\"cluster\": {\"worker\": {\"1\": \"h:1001\", \"3\": \"h:1003\"}, \"ps\": [\"h:2000\"]},"
      " \"task\": {\"type\": \"worker\", \"index\": 3}}");
  assert_task(c, "worker", 3);
  assert_int_equal(num_tasks_of(c, "worker"), 2);
  int32_t index = -1;
  assert_dist_ok(dist_cluster_task_index(c, "worker", 0, &index));
  assert_int_equal(index, 1);
  assert_dist_ok(dist_cluster_task_index(c, "worker", 1, &index));
  assert_int_equal(index, 3);
  assert_dist_error(dist_cluster_task_index(c, "worker", 2, &index), DIST_ERR_INVALID_ARGUMENT,
                    "task 2 is out of range for job 'worker' (2 tasks)");
  assert_string_equal(address_of(c, "worker", 3), "h:1003");
  const char* address = NULL;
  assert_dist_error(dist_cluster_task_address(c, "worker", 0, &address), DIST_ERR_INVALID_ARGUMENT,
                    "task index 0 is out of range for job 'worker'");
  char* json = json_of(c);
  assert_non_null(strstr(json, "\"worker\":{\"1\":\"h:1001\",\"3\":\"h:1003\"}"));
  assert_non_null(strstr(json, "\"ps\":[\"h:2000\"]"));
  dist_string_free(json);
  dist_cluster_destroy(c);

  /* A map whose indices are exactly 0..n-1 is shown as a list, as TF does. */
  c = resolved("{\"cluster\": {\"worker\": {\"1\": \"h:2\", \"0\": \"h:1\"}}}");
  json = json_of(c);
  assert_non_null(strstr(json, "\"worker\":[\"h:1\",\"h:2\"]"));
  dist_string_free(json);
  dist_cluster_destroy(c);
}

static void test_empty_and_unset(void** state) {
  (void)state;
  const char* no_env[] = {NULL};
  dist_cluster_t* c = NULL;
  assert_dist_ok(resolve_with_env(DIST_RESOLVER_TF_CONFIG, no_env, &c));
  assert_task(c, NULL, -1);
  size_t jobs = 7;
  assert_dist_ok(dist_cluster_num_jobs(c, &jobs));
  assert_int_equal(jobs, 0);
  assert_master(c, NULL, -1, NULL, "");
  const char* text = (const char*)1;
  assert_dist_ok(dist_cluster_rpc_layer(c, &text));
  assert_null(text);
  char* json = json_of(c);
  assert_non_null(strstr(json, "\"cluster\":{}"));
  assert_non_null(strstr(json, "\"task_type\":null"));
  assert_non_null(strstr(json, "\"master\":null"));
  dist_string_free(json);
  dist_cluster_destroy(c);

  c = resolved("  ");
  assert_task(c, NULL, -1);
  dist_cluster_destroy(c);
  c = resolved("{}");
  assert_task(c, NULL, -1);
  dist_cluster_destroy(c);
}

static void test_overrides(void** state) {
  (void)state;
  char variable[1024];
  snprintf(variable, sizeof variable, "TF_CONFIG=%s", kThreeJobs);
  const char* env[] = {variable, NULL};
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV | DIST_CLUSTER_OPT_TASK_TYPE |
                       DIST_CLUSTER_OPT_TASK_ID | DIST_CLUSTER_OPT_RPC_LAYER |
                       DIST_CLUSTER_OPT_ENVIRONMENT | DIST_CLUSTER_OPT_NUM_GPUS;
  options.resolver = DIST_RESOLVER_TF_CONFIG;
  options.env = env;
  options.task_type = "ps";
  options.task_id = 0;
  options.rpc_layer = "ucx";
  options.environment = "google";
  options.num_gpus = 3;
  dist_cluster_t* c = NULL;
  assert_dist_ok(dist_cluster_resolve(&options, &c));
  assert_task(c, "ps", 0);
  assert_master(c, NULL, -1, NULL, "ucx://host3:2222");
  const char* text = NULL;
  assert_dist_ok(dist_cluster_environment(c, &text));
  assert_string_equal(text, "google");
  int32_t gpus = -1;
  assert_dist_ok(dist_cluster_num_accelerators(c, NULL, &gpus));
  assert_int_equal(gpus, 3);
  assert_dist_ok(dist_cluster_num_accelerators(c, "TPU", &gpus));
  assert_int_equal(gpus, 0);
  dist_cluster_destroy(c);

  /* An override is checked against the cluster like the document's own task. */
  options.task_type = "nope";
  c = NULL;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "options: task_type 'nope' is not a job in the cluster");
  assert_null(c);
  options.task_type = "worker";
  options.task_id = 2;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "options: task_id 2 is out of range for job 'worker' (2 tasks)");
  options.task_id = -1;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "options: task_id -1 is negative");
  options.task_id = 0;
  options.task_type = NULL;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "options: task_type is NULL");
  options.task_type = "w\xff";
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "options: task_type is not valid UTF-8");
  options.task_type = "worker";
  options.num_gpus = -2;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "num_gpus -2");
}

static void test_roles_and_forms(void** state) {
  (void)state;
  /* TF keeps the evaluator outside the cluster spec. */
  dist_cluster_t* c = resolved(
      "{\"cluster\": {\"chief\": [\"h:1\"], \"worker\": [\"h:2\"]},"
      " \"task\": {\"type\": \"evaluator\", \"index\": 0}}");
  assert_task(c, "evaluator", 0);
  dist_cluster_destroy(c);
  /* task.index may be a numeric string, as some launchers write it. */
  c = resolved("{\"cluster\": {\"worker\": [\"h:1\", \"h:2\"]}, \"task\": {\"type\": \"worker\", \"index\": \"1\"}}");
  assert_task(c, "worker", 1);
  dist_cluster_destroy(c);
  /* Unknown keys are ignored; IPv6 hosts in brackets are addresses. */
  c = resolved("{\"cluster\": {\"worker\": [\"[::1]:2222\"]}, \"job\": {\"x\": 1}, \"task\": {\"type\": \"worker\", \"index\": 0, \"trial\": \"1\"}}");
  assert_string_equal(address_of(c, "worker", 0), "[::1]:2222");
  dist_cluster_destroy(c);
}

static void test_json_round_trip(void** state) {
  (void)state;
  dist_cluster_t* c = resolved(
      "{\"cluster\": {\"worker\": {\"0\": \"h:1\", \"5\": \"h:6\"}, \"chief\": [\"h:10\"]},"
      " \"task\": {\"type\": \"worker\", \"index\": 5}, \"rpc_layer\": \"grpc\"}");
  char* first = json_of(c);
  dist_cluster_t* copy = NULL;
  assert_dist_ok(dist_cluster_from_json(first, &copy));
  char* second = json_of(copy);
  assert_string_equal(first, second);
  assert_task(copy, "worker", 5);
  dist_string_free(first);
  dist_string_free(second);
  dist_cluster_destroy(copy);
  dist_cluster_destroy(c);

  /* TF_CONFIG's session_master is written out and read back: master() stays it. */
  c = resolved("{\"cluster\": {\"worker\": [\"h:1\", \"h:2\"]}, \"session_master\": \"s:9\"}");
  first = json_of(c);
  assert_non_null(strstr(first, "\"master\":\"s:9\""));
  assert_non_null(strstr(first, "\"session_master\":\"s:9\""));
  assert_dist_ok(dist_cluster_from_json(first, &copy));
  assert_master(copy, NULL, -1, NULL, "s:9");
  assert_master(copy, "worker", 1, "grpc", "s:9");
  dist_string_free(first);
  dist_cluster_destroy(copy);
  dist_cluster_destroy(c);

  /* from_json reads TF_CONFIG's own shape too, with the same checks. */
  assert_dist_ok(dist_cluster_from_json(kThreeJobs, &copy));
  assert_task(copy, "worker", 1);
  dist_cluster_destroy(copy);
  copy = NULL;
  assert_dist_error(dist_cluster_from_json("{\"cluster\": {\"worker\": [\"h:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 1}}", &copy),
                    DIST_ERR_INVALID_ARGUMENT, "json: task index 1 is out of range for job 'worker' (1 tasks)");
  assert_null(copy);
  assert_dist_error(dist_cluster_from_json(NULL, &copy), DIST_ERR_INVALID_ARGUMENT, "json is NULL");
}

struct bad_case {
  const char* tf_config;
  const char* needle1;
  const char* needle2;
};

static void test_malformed(void** state) {
  (void)state;
  static const struct bad_case cases[] = {
      {"{\"cluster\":", "TF_CONFIG: not valid JSON", "unexpected end of input"},
      {"[1, 2]", "TF_CONFIG must be a JSON object", "array"},
      {"{\"cluster\": [\"h:1\"]}", "TF_CONFIG: cluster must be an object of jobs", "array"},
      {"{\"cluster\": {\"worker\": \"h:1\"}}", "TF_CONFIG: cluster.worker must be a list", "string"},
      {"{\"cluster\": {\"worker\": [5]}}", "TF_CONFIG: cluster.worker[0]: address 5", "number"},
      {"{\"cluster\": {\"worker\": [\"hostonly\"]}}", "cluster.worker[0]: address 'hostonly'", "host:port"},
      {"{\"cluster\": {\"worker\": [\"h:70000\"]}}", "'70000'", "out of range [1, 65535]"},
      {"{\"cluster\": {\"worker\": [\"h:http\"]}}", "'http'", "not an integer"},
      {"{\"cluster\": {\"worker\": [\"::1:80\"]}}", "'::1:80'", "brackets"},
      {"{\"cluster\": {\"worker\": {\"a\": \"h:1\"}}}", "TF_CONFIG: cluster.worker: task index: 'a'", "not an integer"},
      {"{\"cluster\": {\"worker\": {\"-1\": \"h:1\"}}}", "task index: '-1'", "out of range"},
      {"{\"cluster\": {\"worker\": {\"1\": \"h:1\", \"01\": \"h:2\"}}}", "task index 1 is given twice", "cluster.worker"},
      {"{\"cluster\": {\"\": [\"h:1\"]}}", "job name is empty", "TF_CONFIG"},
      {"{\"cluster\": {\"chief\": [\"h:1\", \"h:2\"]}}", "cluster.chief has 2 tasks", "at most one chief"},
      {"{\"cluster\": {\"evaluator\": [\"h:1\", \"h:2\"]}}", "cluster.evaluator has 2 tasks", "at most one evaluator"},
      {"{\"cluster\": {\"worker\": [\"h:1\"], \"ps\": [\"h:1\"]}}", "address 'h:1' is used by both", "ps:0"},
      {"{\"task\": [1]}", "TF_CONFIG: task must be an object", "array"},
      {"{\"task\": {\"type\": 1.5}}", "TF_CONFIG: task: type 1.5 must be a string", "number"},
      {"{\"task\": {\"type\": true}}", "TF_CONFIG: task: type true must be a string", "bool"},
      {"{\"task\": {\"type\": \"\"}}", "task.type is empty", "TF_CONFIG"},
      {"{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"h:2\"]}, \"task\": {\"type\": \"foo\", \"index\": 0}}",
       "TF_CONFIG: task.type 'foo' is not a job in the cluster", "(jobs: ps, worker)"},
      {"{\"cluster\": {\"worker\": [\"h:1\", \"h:2\"]}, \"task\": {\"type\": \"worker\", \"index\": 3}}",
       "TF_CONFIG: task.index 3 is out of range for job 'worker' (2 tasks)", "TF_CONFIG"},
      {"{\"task\": {\"type\": \"worker\", \"index\": -1}}", "TF_CONFIG: task.index -1", "out of range"},
      {"{\"task\": {\"type\": \"worker\", \"index\": 99999999999}}", "task.index 99999999999", "out of range"},
      {"{\"task\": {\"type\": \"worker\", \"index\": 1.5}}", "task.index 1.5", "must be an integer"},
      {"{\"task\": {\"type\": \"worker\", \"index\": \"x\"}}", "task.index: 'x'", "not an integer"},
      {"{\"rpc_layer\": 1}", "TF_CONFIG: rpc_layer 1 must be a string", "number"},
      {"{\"environment\": [\"cloud\"]}", "TF_CONFIG: environment", "must be a string"},
      {"1e999", "TF_CONFIG: not valid JSON", "1e999"},
      {"{\"task\": {\"type\": \"w\xff\"}}", "TF_CONFIG: not valid JSON", "UTF-8"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    dist_cluster_t* c = NULL;
    dist_status_t status = resolve_tf_config(cases[i].tf_config, &c);
    if (status != DIST_ERR_INVALID_ARGUMENT) {
      fail_msg("case %zu (%s): got %s: %s", i, cases[i].tf_config, dist_status_string(status), dist_last_error());
    }
    assert_null(c);
    if (strstr(dist_last_error(), cases[i].needle1) == NULL || strstr(dist_last_error(), cases[i].needle2) == NULL) {
      fail_msg("case %zu (%s): message \"%s\" lacks \"%s\" or \"%s\"", i, cases[i].tf_config, dist_last_error(),
               cases[i].needle1, cases[i].needle2);
    }
  }
}

static void test_bad_arguments(void** state) {
  (void)state;
  dist_cluster_t* c = NULL;
  assert_dist_error(dist_cluster_resolve(NULL, NULL), DIST_ERR_INVALID_ARGUMENT, "cluster is NULL");
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER;
  options.resolver = 99;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT, "resolver 99");
  const char* env[] = {"TF_CONFIG", NULL};
  options.field_mask = DIST_CLUSTER_OPT_ENV;
  options.env = env;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT, "env: entry 'TF_CONFIG'");
  options.env = NULL;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT, "options: env is NULL");
  assert_null(c);

  c = resolved(kThreeJobs);
  const char* text = NULL;
  int32_t n = 0;
  assert_dist_error(dist_cluster_task_type(NULL, &text), DIST_ERR_INVALID_ARGUMENT, "cluster is NULL");
  assert_dist_error(dist_cluster_task_type(c, NULL), DIST_ERR_INVALID_ARGUMENT, "task_type is NULL");
  assert_dist_error(dist_cluster_num_tasks(c, NULL, &n), DIST_ERR_INVALID_ARGUMENT, "job is NULL");
  assert_dist_error(dist_cluster_num_tasks(c, "nope", &n), DIST_ERR_INVALID_ARGUMENT, "job 'nope' is not in the cluster");
  assert_dist_error(dist_cluster_job_name(c, 3, &text), DIST_ERR_INVALID_ARGUMENT, "job 3 is out of range (3 jobs)");
  /* Under LeakSanitizer this also catches a copy made before json was checked. */
  assert_dist_error(dist_cluster_to_json(c, NULL), DIST_ERR_INVALID_ARGUMENT, "json is NULL");
  char* json = NULL;
  assert_dist_error(dist_cluster_to_json(NULL, &json), DIST_ERR_INVALID_ARGUMENT, "cluster is NULL");
  assert_null(json);
  dist_cluster_destroy(c);
  dist_cluster_destroy(NULL); /* a no-op */
}

static void test_auto_picks_tf_config(void** state) {
  (void)state;
  const char* env[] = {"TF_CONFIG={\"cluster\": {\"worker\": [\"h:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}",
                       "SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=1", "OMPI_COMM_WORLD_RANK=0", "RANK=0",
                       "WORLD_SIZE=1", NULL};
  dist_cluster_t* c = NULL;
  assert_dist_ok(resolve_with_env(DIST_RESOLVER_AUTO, env, &c));
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_TF_CONFIG);
  dist_cluster_destroy(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_jobs),       cmocka_unit_test(test_master),
      cmocka_unit_test(test_sparse_job),      cmocka_unit_test(test_empty_and_unset),
      cmocka_unit_test(test_overrides),       cmocka_unit_test(test_roles_and_forms),
      cmocka_unit_test(test_json_round_trip), cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_bad_arguments),   cmocka_unit_test(test_auto_picks_tf_config),
  };
  return cmocka_run_group_tests_name("cluster_tf_config", tests, NULL, NULL);
}
