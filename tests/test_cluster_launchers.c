/* The MPI and torchrun resolvers, and AUTO's choice of resolver. */
#include "test_support.h"

static dist_cluster_t* resolved(dist_resolver_kind_t kind, const char* const* env) {
  dist_cluster_t* c = NULL;
  assert_dist_ok(resolve_with_env(kind, env, &c));
  return c;
}

static void assert_workers_on(const dist_cluster_t* c, const char* job, int32_t n, const char* host,
                              int32_t first_port) {
  assert_int_equal(num_tasks_of(c, job), n);
  for (int32_t i = 0; i < n; ++i) {
    char expected[128];
    snprintf(expected, sizeof expected, "%s:%d", host, (int)(first_port + i));
    assert_string_equal(address_of(c, job, i), expected);
  }
}

static void test_open_mpi(void** state) {
  (void)state;
  const char* env[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL};
  dist_cluster_t* c = resolved(DIST_RESOLVER_MPI, env);
  assert_task(c, "worker", 2);
  assert_workers_on(c, "worker", 4, "127.0.0.1", 8888);
  assert_master(c, NULL, -1, NULL, "127.0.0.1:8890");
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_MPI);
  const char* devices = (const char*)1;
  assert_dist_ok(dist_cluster_cuda_visible_devices(c, &devices));
  assert_null(devices);
  dist_cluster_destroy(c);
}

static void test_mpi_master_port_and_jobs(void** state) {
  (void)state;
  const char* env[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=4",
                       "MASTER_ADDR=10.1.2.3", "MASTER_PORT=5000", NULL};
  const char* names[] = {"worker", "chief"};
  const int32_t counts[] = {3, 1};
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV | DIST_CLUSTER_OPT_JOBS;
  options.resolver = DIST_RESOLVER_MPI;
  options.env = env;
  options.job_names = names;
  options.job_counts = counts;
  options.num_jobs = 2;
  dist_cluster_t* c = NULL;
  assert_dist_ok(dist_cluster_resolve(&options, &c));
  /* Jobs take ranks in sorted name order: rank 0 is chief:0, ranks 1-3 worker:0-2. */
  assert_task(c, "worker", 1);
  assert_string_equal(address_of(c, "chief", 0), "10.1.2.3:5001");
  assert_string_equal(address_of(c, "worker", 0), "10.1.2.3:5002");
  assert_string_equal(address_of(c, "worker", 2), "10.1.2.3:5004");
  dist_cluster_destroy(c);

  /* port_base overrides MASTER_PORT. */
  options.field_mask |= DIST_CLUSTER_OPT_PORT_BASE;
  options.port_base = 7000;
  assert_dist_ok(dist_cluster_resolve(&options, &c));
  assert_string_equal(address_of(c, "chief", 0), "10.1.2.3:7000");
  dist_cluster_destroy(c);

  /* Counts that do not add up to the launched ranks. */
  const int32_t wrong[] = {2, 1};
  options.job_counts = wrong;
  c = NULL;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "MPI: jobs ask for 3 tasks but 4 were launched");
  const int32_t negative[] = {5, -1};
  options.job_counts = negative;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT,
                    "job 'chief' has a negative task count -1");
  const char* twice[] = {"worker", "worker"};
  const int32_t two[] = {2, 2};
  options.job_names = twice;
  options.job_counts = two;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT, "job 'worker' is given twice");
  const char* two_chiefs[] = {"chief", "worker"};
  const int32_t chief_two[] = {2, 2};
  options.job_names = two_chiefs;
  options.job_counts = chief_two;
  assert_dist_error(dist_cluster_resolve(&options, &c), DIST_ERR_INVALID_ARGUMENT, "chief=2", "at most one chief");
  assert_null(c);
}

static void test_pmi(void** state) {
  (void)state;
  const char* env[] = {"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALNRANKS=2", NULL};
  dist_cluster_t* c = resolved(DIST_RESOLVER_MPI, env);
  assert_task(c, "worker", 1);
  assert_workers_on(c, "worker", 2, "127.0.0.1", 8888);
  dist_cluster_destroy(c);
}

struct bad_env {
  dist_resolver_kind_t kind;
  const char* env[6];
  dist_status_t status;
  const char* needle1;
  const char* needle2;
};

/* Across hosts: DIST_HOSTS names the nodes (ranks in blocks) or every rank's host. */
static void test_hosts_across_nodes(void** state) {
  (void)state;
  const char* by_node[] = {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                           "DIST_HOSTS=node[1-2]", NULL};
  dist_cluster_t* c = resolved(DIST_RESOLVER_MPI, by_node);
  assert_task(c, "worker", 3);
  assert_string_equal(address_of(c, "worker", 0), "node1:8888");
  assert_string_equal(address_of(c, "worker", 1), "node1:8889");
  assert_string_equal(address_of(c, "worker", 2), "node2:8888");
  assert_string_equal(address_of(c, "worker", 3), "node2:8889");
  dist_cluster_destroy(c);

  const char* by_rank[] = {"RANK=1", "WORLD_SIZE=3", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=a", "MASTER_PORT=29500",
                           "DIST_HOSTS=a,b,a", NULL};
  c = resolved(DIST_RESOLVER_TORCHRUN, by_rank);
  assert_task(c, "worker", 1);
  assert_string_equal(address_of(c, "worker", 0), "a:29501");
  assert_string_equal(address_of(c, "worker", 1), "b:29501");
  assert_string_equal(address_of(c, "worker", 2), "a:29502");
  dist_cluster_destroy(c);
}

static void test_launcher_errors(void** state) {
  (void)state;
  static const struct bad_env cases[] = {
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL},
       DIST_ERR_INVALID_ARGUMENT, "MPI: rank 4 is out of range", "4 ranks"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=x", "OMPI_COMM_WORLD_SIZE=4", NULL},
       DIST_ERR_INVALID_ARGUMENT, "MPI: OMPI_COMM_WORLD_RANK: 'x'", "not an integer"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=-1", "OMPI_COMM_WORLD_SIZE=4", NULL},
       DIST_ERR_INVALID_ARGUMENT, "OMPI_COMM_WORLD_RANK: '-1'", "out of range"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=99999999999", NULL},
       DIST_ERR_INVALID_ARGUMENT, "OMPI_COMM_WORLD_SIZE: '99999999999'", "out of range"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=0", NULL},
       DIST_ERR_INVALID_ARGUMENT, "OMPI_COMM_WORLD_SIZE: '0'", "out of range [1,"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", NULL},
       DIST_ERR_INVALID_ARGUMENT, "MPI: OMPI_COMM_WORLD_SIZE is not set", "MPI"},
      {DIST_RESOLVER_MPI, {NULL}, DIST_ERR_INVALID_ARGUMENT, "MPI: PMI_RANK is not set", "MPI"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL},
       DIST_ERR_UNSUPPORTED, "span several hosts", "OMPI_COMM_WORLD_LOCAL_SIZE=2 of 4"},
      {DIST_RESOLVER_MPI, {"PMI_RANK=0", "PMI_SIZE=2", NULL},
       DIST_ERR_UNSUPPORTED, "cannot tell whether the 2 ranks share one host", "MPI_LOCALNRANKS"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                           "MASTER_PORT=65535", NULL},
       DIST_ERR_INVALID_ARGUMENT, "port_base 65536", "below 65536"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                           "MASTER_PORT=http", NULL},
       DIST_ERR_INVALID_ARGUMENT, "MPI: MASTER_PORT: 'http'", "not an integer"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", "DIST_HOSTS=a,b,c", NULL},
       DIST_ERR_INVALID_ARGUMENT, "MPI: DIST_HOSTS names 3 hosts", "one host per rank"},
      {DIST_RESOLVER_MPI, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "DIST_HOSTS=n[3-", NULL},
       DIST_ERR_INVALID_ARGUMENT, "DIST_HOSTS", "n[3-"},
      {DIST_RESOLVER_TORCHRUN, {"RANK=0", NULL}, DIST_ERR_INVALID_ARGUMENT, "torchrun: WORLD_SIZE is not set", "torchrun"},
      {DIST_RESOLVER_TORCHRUN, {"RANK=0", "WORLD_SIZE=4", "LOCAL_WORLD_SIZE=2", NULL},
       DIST_ERR_UNSUPPORTED, "torchrun: the ranks span several hosts", "LOCAL_WORLD_SIZE=2 of 4"},
      {DIST_RESOLVER_TORCHRUN, {"RANK=2", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", NULL},
       DIST_ERR_INVALID_ARGUMENT, "torchrun: rank 2 is out of range", "2 ranks"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    dist_cluster_t* c = NULL;
    dist_status_t status = resolve_with_env(cases[i].kind, cases[i].env, &c);
    if (status != cases[i].status) {
      fail_msg("case %zu: got %s (%s), expected %s", i, dist_status_string(status), dist_last_error(),
               dist_status_string(cases[i].status));
    }
    assert_null(c);
    if (strstr(dist_last_error(), cases[i].needle1) == NULL || strstr(dist_last_error(), cases[i].needle2) == NULL) {
      fail_msg("case %zu: message \"%s\" lacks \"%s\" or \"%s\"", i, dist_last_error(), cases[i].needle1,
               cases[i].needle2);
    }
  }
}

static void test_torchrun(void** state) {
  (void)state;
  const char* env[] = {"RANK=1", "WORLD_SIZE=3", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=3",
                       "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500", NULL};
  dist_cluster_t* c = resolved(DIST_RESOLVER_TORCHRUN, env);
  assert_task(c, "worker", 1);
  /* MASTER_PORT is the launcher's store: tasks start one above it. */
  assert_workers_on(c, "worker", 3, "127.0.0.1", 29501);
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  assert_int_equal(kind, DIST_RESOLVER_TORCHRUN);
  dist_cluster_destroy(c);

  /* A loopback master without LOCAL_WORLD_SIZE means one host; IPv6 gets brackets. */
  const char* v6[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=::1", "MASTER_PORT=1000", NULL};
  c = resolved(DIST_RESOLVER_TORCHRUN, v6);
  assert_string_equal(address_of(c, "worker", 1), "[::1]:1002");
  dist_cluster_destroy(c);
}

static dist_resolver_kind_t auto_pick(const char* const* env) {
  dist_cluster_t* c = resolved(DIST_RESOLVER_AUTO, env);
  dist_resolver_kind_t kind = -1;
  assert_dist_ok(dist_cluster_resolver(c, &kind));
  dist_cluster_destroy(c);
  return kind;
}

static void test_auto(void** state) {
  (void)state;
  const char* nothing[] = {"HOME=/root", NULL};
  assert_int_equal(auto_pick(nothing), DIST_RESOLVER_TF_CONFIG);
  const char* empty_tf_config[] = {"TF_CONFIG=", "RANK=0", "WORLD_SIZE=1", NULL};
  assert_int_equal(auto_pick(empty_tf_config), DIST_RESOLVER_TORCHRUN);
  const char* mpi_and_torch[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1", "OMPI_COMM_WORLD_LOCAL_SIZE=1",
                                 "RANK=0", "WORLD_SIZE=1", NULL};
  assert_int_equal(auto_pick(mpi_and_torch), DIST_RESOLVER_MPI);
  const char* pmi[] = {"PMI_RANK=0", "PMI_SIZE=1", "MPI_LOCALNRANKS=1", NULL};
  assert_int_equal(auto_pick(pmi), DIST_RESOLVER_MPI);
  const char* slurm_and_mpi[] = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=1", "SLURM_STEP_NODELIST=n1",
                                 "SLURM_STEP_TASKS_PER_NODE=1", "OMPI_COMM_WORLD_RANK=0",
                                 "OMPI_COMM_WORLD_SIZE=1", "OMPI_COMM_WORLD_LOCAL_SIZE=1", NULL};
  assert_int_equal(auto_pick(slurm_and_mpi), DIST_RESOLVER_SLURM);

  /* Nothing set: a single process, as TF's default resolver. */
  dist_cluster_t* c = resolved(DIST_RESOLVER_AUTO, nothing);
  assert_task(c, NULL, -1);
  dist_cluster_destroy(c);
}

static void test_resolver_names(void** state) {
  (void)state;
  assert_string_equal(dist_resolver_name(DIST_RESOLVER_TF_CONFIG), "tf_config");
  assert_string_equal(dist_resolver_name(DIST_RESOLVER_SIMPLE), "simple");
  assert_string_equal(dist_resolver_name(DIST_RESOLVER_SLURM), "slurm");
  assert_string_equal(dist_resolver_name(DIST_RESOLVER_MPI), "mpi");
  assert_string_equal(dist_resolver_name(DIST_RESOLVER_TORCHRUN), "torchrun");
  assert_string_equal(dist_resolver_name(DIST_RESOLVER_UNION), "union");
  assert_null(dist_resolver_name(DIST_RESOLVER_AUTO));
  assert_null(dist_resolver_name(42));
  assert_null(dist_resolver_name(-1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_open_mpi),        cmocka_unit_test(test_mpi_master_port_and_jobs),
      cmocka_unit_test(test_pmi),             cmocka_unit_test(test_hosts_across_nodes), cmocka_unit_test(test_launcher_errors),
      cmocka_unit_test(test_torchrun),        cmocka_unit_test(test_auto),
      cmocka_unit_test(test_resolver_names),
  };
  return cmocka_run_group_tests_name("cluster_launchers", tests, NULL, NULL);
}
