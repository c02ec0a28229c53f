/* Launchers that give ranks but no hosts (torchrun or mpirun across hosts): the
 * resolvers report that the addresses come from a rendezvous at host:port (the
 * context runs it; test_multihost_rendezvous covers that), and DIST_HOSTS or
 * one host keep giving addresses as before. Only resolution: no traffic. */
#include "test_support.h"

/* The resolver's answer as JSON must contain `needle` (or, when `absent`, not). */
static void assert_json_has(const dist_cluster_t* c, const char* needle, int absent) {
  char* json = json_of(c);
  const int found = strstr(json, needle) != NULL;
  if (found == absent) {
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", json);
    dist_string_free(json);
    fail_msg("JSON %s\"%s\": %s", absent ? "has " : "lacks ", needle, copy);
  }
  dist_string_free(json);
}

static dist_cluster_t* resolved_with_jobs(dist_resolver_kind_t kind, const char* const* env, const char* const* names,
                                          const int32_t* counts, int32_t num_jobs, dist_status_t* status) {
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV | (num_jobs ? DIST_CLUSTER_OPT_JOBS : 0);
  options.resolver = kind;
  options.env = env;
  options.job_names = names;
  options.job_counts = counts;
  options.num_jobs = num_jobs;
  dist_cluster_t* c = NULL;
  *status = dist_cluster_resolve(&options, &c);
  return c;
}

static dist_cluster_t* resolved(dist_resolver_kind_t kind, const char* const* env) {
  dist_status_t status;
  dist_cluster_t* c = resolved_with_jobs(kind, env, NULL, NULL, 0, &status);
  if (status != DIST_OK) fail_msg("resolve: %s: %s", dist_status_string(status), dist_last_error());
  return c;
}

static void test_torchrun_across_hosts(void** state) {
  (void)state;
  /* Two hosts of two ranks: the master at MASTER_ADDR, one port above torchrun's store. */
  const char* env[] = {"RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2",
                       "MASTER_ADDR=node7", "MASTER_PORT=29500", NULL};
  dist_cluster_t* c = resolved(DIST_RESOLVER_TORCHRUN, env);
  assert_task(c, "worker", 3);
  assert_json_has(c, "\"rendezvous\":{\"address\":\"node7:29501\",\"rank\":3,\"size\":4}", 0);
  assert_json_has(c, "\"master\":null", 0); /* no address is known before the rendezvous */
  dist_cluster_destroy(c);

  /* Without LOCAL_WORLD_SIZE, a master not on loopback may be on another host. */
  const char* unknown[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=198.18.0.1", "MASTER_PORT=4000", NULL};
  c = resolved(DIST_RESOLVER_TORCHRUN, unknown);
  assert_task(c, "worker", 0);
  assert_json_has(c, "\"rendezvous\":{\"address\":\"198.18.0.1:4001\",\"rank\":0,\"size\":2}", 0);
  dist_cluster_destroy(c);

  /* One host: the addresses are known, no rendezvous. */
  const char* one_host[] = {"RANK=1", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=node7",
                            "MASTER_PORT=29500", NULL};
  c = resolved(DIST_RESOLVER_TORCHRUN, one_host);
  assert_string_equal(address_of(c, "worker", 1), "node7:29502");
  assert_json_has(c, "rendezvous", 1);
  dist_cluster_destroy(c);

  /* DIST_HOSTS keeps giving every address. */
  const char* hosts[] = {"RANK=1", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=a", "MASTER_PORT=29500",
                         "DIST_HOSTS=a,b", NULL};
  c = resolved(DIST_RESOLVER_TORCHRUN, hosts);
  assert_string_equal(address_of(c, "worker", 1), "b:29501");
  assert_json_has(c, "rendezvous", 1);
  dist_cluster_destroy(c);
}

static void test_mpirun_with_rendezvous_variable(void** state) {
  (void)state;
  const char* open_mpi[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_LOCAL_SIZE=1",
                            "DIST_RENDEZVOUS=198.18.0.1:7000", NULL};
  dist_cluster_t* c = resolved(DIST_RESOLVER_MPI, open_mpi);
  assert_task(c, "worker", 2);
  assert_json_has(c, "\"rendezvous\":{\"address\":\"198.18.0.1:7000\",\"rank\":2,\"size\":3}", 0);
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_MPI);
  dist_cluster_destroy(c);

  /* PMI, a chief and workers: ranks go to jobs in sorted name order. */
  const char* pmi[] = {"PMI_RANK=1", "PMI_SIZE=3", "DIST_RENDEZVOUS=head:7000", NULL};
  const char* names[] = {"worker", "chief"};
  const int32_t counts[] = {2, 1};
  dist_status_t status;
  c = resolved_with_jobs(DIST_RESOLVER_MPI, pmi, names, counts, 2, &status);
  assert_int_equal(status, DIST_OK);
  assert_task(c, "worker", 0);
  assert_json_has(c, "\"address\":\"head:7000\",\"rank\":1,\"size\":3", 0);
  dist_cluster_destroy(c);

  /* DIST_HOSTS wins over the rendezvous. */
  const char* both[] = {"PMI_RANK=0", "PMI_SIZE=2", "DIST_HOSTS=x,y", "DIST_RENDEZVOUS=x:7000", NULL};
  c = resolved(DIST_RESOLVER_MPI, both);
  assert_string_equal(address_of(c, "worker", 1), "y:8888");
  assert_json_has(c, "rendezvous", 1);
  dist_cluster_destroy(c);
}

static void test_rendezvous_errors(void** state) {
  (void)state;
  struct {
    const char* env[6];
    int with_ps;
    dist_status_t status;
    const char* needle;
  } cases[] = {
      {{"PMI_RANK=0", "PMI_SIZE=2", "DIST_RENDEZVOUS=nohost", NULL}, 0, DIST_ERR_INVALID_ARGUMENT,
       "MPI: DIST_RENDEZVOUS 'nohost' is not host:port"},
      {{"PMI_RANK=0", "PMI_SIZE=2", "DIST_RENDEZVOUS=:7000", NULL}, 0, DIST_ERR_INVALID_ARGUMENT,
       "is not host:port"},
      {{"PMI_RANK=0", "PMI_SIZE=2", "DIST_RENDEZVOUS=h:70000", NULL}, 0, DIST_ERR_INVALID_ARGUMENT,
       "DIST_RENDEZVOUS's port"},
      {{"PMI_RANK=0", "PMI_SIZE=2", "MPI_LOCALNRANKS=1", NULL}, 0, DIST_ERR_UNSUPPORTED, "set DIST_RENDEZVOUS"},
      {{"PMI_RANK=0", "PMI_SIZE=2", NULL}, 0, DIST_ERR_UNSUPPORTED, "set DIST_RENDEZVOUS"},
      {{"PMI_RANK=0", "PMI_SIZE=3", "DIST_RENDEZVOUS=h:7000", NULL}, 1, DIST_ERR_UNSUPPORTED,
       "job 'ps' cannot take part in a rendezvous"},
  };
  const char* names[] = {"ps", "worker"};
  const int32_t counts[] = {1, 2};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    dist_status_t status;
    dist_cluster_t* c = resolved_with_jobs(DIST_RESOLVER_MPI, cases[i].env, names, counts,
                                           cases[i].with_ps ? 2 : 0, &status);
    assert_null(c);
    if (status != cases[i].status || strstr(dist_last_error(), cases[i].needle) == NULL) {
      fail_msg("case %zu: %s (%s), expected %s naming \"%s\"", i, dist_status_string(status), dist_last_error(),
               dist_status_string(cases[i].status), cases[i].needle);
    }
  }
}

/* A union needs every member's addresses: a rendezvous cluster has none yet. */
static void test_union_refuses_rendezvous(void** state) {
  (void)state;
  const char* env[] = {"PMI_RANK=0", "PMI_SIZE=2", "DIST_RENDEZVOUS=head:7000", NULL};
  dist_cluster_t* member = resolved(DIST_RESOLVER_MPI, env);
  const dist_cluster_t* members[] = {member};
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_MEMBERS;
  options.resolver = DIST_RESOLVER_UNION;
  options.members = members;
  options.num_members = 1;
  dist_cluster_t* c = NULL;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_UNSUPPORTED,
                    "members[0]'s addresses come from a rendezvous at head:7000");
  assert_null(c);
  dist_cluster_destroy(member);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_torchrun_across_hosts),
      cmocka_unit_test(test_mpirun_with_rendezvous_variable),
      cmocka_unit_test(test_rendezvous_errors),
      cmocka_unit_test(test_union_refuses_rendezvous),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
