/* SimpleClusterResolver and UnionClusterResolver semantics. */
#include "test_support.h"

static dist_status_t resolve_simple(const char* spec, const char* task_type, int32_t task_id,
                                    const char* rpc_layer, const char* master, dist_cluster_t** out) {
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_CLUSTER_SPEC;
  options.resolver = DIST_RESOLVER_SIMPLE;
  options.cluster_spec_json = spec;
  if (task_type) {
    options.field_mask |= DIST_CLUSTER_OPT_TASK_TYPE | DIST_CLUSTER_OPT_TASK_ID;
    options.task_type = task_type;
    options.task_id = task_id;
  }
  if (rpc_layer) {
    options.field_mask |= DIST_CLUSTER_OPT_RPC_LAYER;
    options.rpc_layer = rpc_layer;
  }
  if (master) {
    options.field_mask |= DIST_CLUSTER_OPT_MASTER;
    options.master = master;
  }
  return dist_cluster_resolve(&options, out);
}

static dist_cluster_t* simple(const char* spec, const char* task_type, int32_t task_id, const char* rpc) {
  dist_cluster_t* c = NULL;
  assert_dist_ok(resolve_simple(spec, task_type, task_id, rpc, NULL, &c));
  return c;
}

static dist_status_t resolve_union(const dist_cluster_t* const* members, size_t n,
                                   const char* task_type, int32_t task_id, dist_cluster_t** out) {
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_MEMBERS;
  options.resolver = DIST_RESOLVER_UNION;
  options.members = members;
  options.num_members = n;
  if (task_type) {
    options.field_mask |= DIST_CLUSTER_OPT_TASK_TYPE | DIST_CLUSTER_OPT_TASK_ID;
    options.task_type = task_type;
    options.task_id = task_id;
  }
  return dist_cluster_resolve(&options, out);
}

static void test_simple(void** state) {
  (void)state;
  dist_cluster_t* c = simple("{\"worker\": [\"w0:1\", \"w1:1\"], \"ps\": [\"p0:1\"]}", "worker", 1, "grpc");
  assert_task(c, "worker", 1);
  /* As TF's SimpleClusterResolver: master() never falls back to this task. */
  assert_master(c, NULL, -1, NULL, "");
  assert_master(c, "worker", -1, NULL, "");
  assert_master(c, "ps", 0, NULL, "grpc://p0:1");
  assert_master(c, "ps", 0, "", "grpc://p0:1"); /* `rpc_layer or self._rpc_layer` */
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_SIMPLE);
  dist_cluster_destroy(c);

  /* Without a task, master() is the `master` option, with the rpc layer. */
  assert_dist_ok(resolve_simple("{\"worker\": [\"w0:1\"]}", NULL, 0, "grpc", "10.0.0.1:8470", &c));
  assert_master(c, NULL, -1, NULL, "grpc://10.0.0.1:8470");
  assert_master(c, NULL, -1, "ucx", "ucx://10.0.0.1:8470");
  assert_master(c, "worker", 0, NULL, "grpc://w0:1");
  dist_cluster_destroy(c);
}

static void test_simple_errors(void** state) {
  (void)state;
  dist_cluster_t* c = NULL;
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER;
  options.resolver = DIST_RESOLVER_SIMPLE;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT, "needs cluster_spec_json");
  assert_dist_error(resolve_simple("{\"worker\": ", NULL, 0, NULL, NULL, &c), DIST_ERR_INVALID_ARGUMENT,
                    "cluster_spec_json: not valid JSON");
  assert_dist_error(resolve_simple("{\"worker\": [\"nohost\"]}", NULL, 0, NULL, NULL, &c),
                    DIST_ERR_INVALID_ARGUMENT, "cluster_spec_json.worker[0]: address 'nohost'");
  assert_dist_error(resolve_simple("{\"worker\": [\"w:1\"]}", "worker", 1, NULL, NULL, &c),
                    DIST_ERR_INVALID_ARGUMENT, "options: task_id 1 is out of range for job 'worker' (1 tasks)");
  assert_null(c);
}

static void test_union_lists_concatenate(void** state) {
  (void)state;
  dist_cluster_t* a = simple("{\"worker\": [\"a:1\", \"b:1\"]}", "worker", 1, "grpc");
  dist_cluster_t* b = simple("{\"worker\": [\"c:1\"], \"ps\": [\"p:1\", \"q:1\"]}", "ps", 0, NULL);
  const dist_cluster_t* members[] = {a, b};
  dist_cluster_t* u = NULL;
  assert_dist_ok(resolve_union(members, 2, NULL, 0, &u));
  /* Task and rpc layer come from the first member, and so does master():
   * a SIMPLE member without a `master` option has none. */
  assert_task(u, "worker", 1);
  assert_master(u, NULL, -1, NULL, "");
  /* A task given to master() is looked up in the merged spec, with the
   * union's own rpc layer (none here), not the member's. */
  assert_master(u, "worker", 2, NULL, "c:1");
  assert_master(u, "worker", 2, "grpc", "grpc://c:1");
  assert_int_equal(num_tasks_of(u, "worker"), 3);
  assert_string_equal(address_of(u, "worker", 0), "a:1");
  assert_string_equal(address_of(u, "worker", 2), "c:1");
  assert_int_equal(num_tasks_of(u, "ps"), 2);
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(u, &kind));
  assert_int_equal(kind, DIST_RESOLVER_UNION);
  dist_cluster_destroy(u);

  /* Overrides apply to the union's task; master() is still the first member's. */
  assert_dist_ok(resolve_union(members, 2, "ps", 1, &u));
  assert_task(u, "ps", 1);
  assert_master(u, NULL, -1, NULL, "");
  assert_master(u, "ps", 1, NULL, "q:1");
  dist_cluster_destroy(u);
  dist_cluster_destroy(a);
  dist_cluster_destroy(b);
}

static void test_union_maps_merge(void** state) {
  (void)state;
  dist_cluster_t* a = simple("{\"worker\": {\"0\": \"a:1\", \"3\": \"d:1\"}}", NULL, 0, NULL);
  dist_cluster_t* b = simple("{\"worker\": [\"x:1\", \"y:1\"]}", NULL, 0, NULL);
  dist_cluster_t* c = simple("{\"worker\": {\"1\": \"b:1\"}}", NULL, 0, NULL);
  dist_cluster_t* u = NULL;

  /* A map and a disjoint map merge by index. */
  const dist_cluster_t* disjoint[] = {a, c};
  assert_dist_ok(resolve_union(disjoint, 2, NULL, 0, &u));
  assert_int_equal(num_tasks_of(u, "worker"), 3);
  assert_string_equal(address_of(u, "worker", 1), "b:1");
  assert_string_equal(address_of(u, "worker", 3), "d:1");
  char* json = json_of(u);
  assert_non_null(strstr(json, "\"worker\":{\"0\":\"a:1\",\"1\":\"b:1\",\"3\":\"d:1\"}"));
  dist_string_free(json);
  dist_cluster_destroy(u);

  /* A list turns into indices 0..n-1, which clash with the map's 0. */
  const dist_cluster_t* clash[] = {a, b};
  u = NULL;
  assert_dist_error(resolve_union(clash, 2, NULL, 0, &u), DIST_ERR_INVALID_ARGUMENT,
                    "union: members[1] gives worker:0", "earlier member");
  assert_null(u);
  dist_cluster_destroy(a);
  dist_cluster_destroy(b);
  dist_cluster_destroy(c);
}

static void test_union_errors(void** state) {
  (void)state;
  dist_cluster_t* u = NULL;
  assert_dist_error(resolve_union(NULL, 0, NULL, 0, &u), DIST_ERR_INVALID_ARGUMENT, "at least one member");
  const dist_cluster_t* with_null[] = {NULL};
  assert_dist_error(resolve_union(with_null, 1, NULL, 0, &u), DIST_ERR_INVALID_ARGUMENT, "members[0] is NULL");
  assert_dist_error(resolve_union(NULL, 2, NULL, 0, &u), DIST_ERR_INVALID_ARGUMENT, "options: members is NULL");
  dist_cluster_t* a = simple("{\"worker\": [\"same:1\"]}", NULL, 0, NULL);
  dist_cluster_t* b = simple("{\"ps\": [\"same:1\"]}", NULL, 0, NULL);
  const dist_cluster_t* members[] = {a, b};
  assert_dist_error(resolve_union(members, 2, NULL, 0, &u), DIST_ERR_INVALID_ARGUMENT,
                    "address 'same:1' is used by both");
  dist_cluster_t* two_chiefs_a = simple("{\"chief\": [\"c:1\"]}", NULL, 0, NULL);
  dist_cluster_t* two_chiefs_b = simple("{\"chief\": [\"c:2\"]}", NULL, 0, NULL);
  const dist_cluster_t* chiefs[] = {two_chiefs_a, two_chiefs_b};
  assert_dist_error(resolve_union(chiefs, 2, NULL, 0, &u), DIST_ERR_INVALID_ARGUMENT, "at most one chief");
  assert_null(u);
  dist_cluster_destroy(a);
  dist_cluster_destroy(b);
  dist_cluster_destroy(two_chiefs_a);
  dist_cluster_destroy(two_chiefs_b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_simple),
      cmocka_unit_test(test_simple_errors),
      cmocka_unit_test(test_union_lists_concatenate),
      cmocka_unit_test(test_union_maps_merge),
      cmocka_unit_test(test_union_errors),
  };
  return cmocka_run_group_tests_name("cluster_simple_union", tests, NULL, NULL);
}
