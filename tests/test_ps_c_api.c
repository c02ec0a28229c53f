/* The parameter-server C API: dist_server_* (in-process standard servers) and
 * dist_checkpoint_save/restore against them, with bad arguments, a server that
 * is down, and a corrupt checkpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_support.h"

static const char kToken[] = "c-api-test-token";

static dist_server_t* start(const char* address, const char* checkpoint_dir) {
  dist_server_options_t options = DIST_SERVER_OPTIONS_INIT;
  options.field_mask = DIST_SERVER_OPT_ADDRESS | DIST_SERVER_OPT_TOKEN;
  options.address = address;
  options.token = kToken;
  if (checkpoint_dir != NULL) {
    options.field_mask |= DIST_SERVER_OPT_CHECKPOINT_DIR;
    options.checkpoint_dir = checkpoint_dir;
  }
  dist_server_t* server = NULL;
  assert_dist_ok(dist_server_start(NULL, &options, &server));
  return server;
}

/* A cluster whose ps job is the two servers. */
static dist_cluster_t* cluster_of(dist_server_t* a, dist_server_t* b) {
  const char *address_a = NULL, *address_b = NULL;
  assert_dist_ok(dist_server_address(a, &address_a));
  assert_dist_ok(dist_server_address(b, &address_b));
  char json[512];
  snprintf(json, sizeof json, "{\"cluster\": {\"ps\": [\"%s\", \"%s\"], \"worker\": [\"127.0.0.1:1\"]}, "
           "\"task\": {\"type\": \"worker\", \"index\": 0}}", address_a, address_b);
  dist_cluster_t* cluster = NULL;
  assert_dist_ok(dist_cluster_from_json(json, &cluster));
  return cluster;
}

static dist_checkpoint_options_t token_options(void) {
  dist_checkpoint_options_t options = DIST_CHECKPOINT_OPTIONS_INIT;
  options.field_mask = DIST_CHECKPOINT_OPT_TOKEN | DIST_CHECKPOINT_OPT_TIMEOUT_MS;
  options.token = kToken;
  options.timeout_ms = 20000;
  return options;
}

static void logged(const char* message, void* user_data) {
  int* count = (int*)user_data;
  if (strstr(message, "serving at") != NULL) ++*count;
}

static void test_server_lifecycle(void** state) {
  (void)state;
  int log_lines = 0;
  dist_server_options_t options = DIST_SERVER_OPTIONS_INIT;
  options.field_mask = DIST_SERVER_OPT_ADDRESS | DIST_SERVER_OPT_TOKEN | DIST_SERVER_OPT_LOG;
  options.address = "127.0.0.1:0";
  options.token = kToken;
  options.log = logged;
  options.log_user_data = &log_lines;
  dist_server_t* server = NULL;
  assert_dist_ok(dist_server_start(NULL, &options, &server));
  assert_int_equal(log_lines, 1);
  const char* address = NULL;
  assert_dist_ok(dist_server_address(server, &address));
  assert_true(strncmp(address, "127.0.0.1:", 10) == 0 && atoi(address + 10) > 0);
  char* json = NULL;
  assert_dist_ok(dist_server_describe(server, &json));
  assert_non_null(strstr(json, "\"variables\":[]"));
  assert_non_null(strstr(json, address));
  dist_string_free(json);

  /* The port is taken now. */
  options.address = address;
  dist_server_t* second = (dist_server_t*)0x1;
  assert_dist_error(dist_server_start(NULL, &options, &second), DIST_ERR_UNAVAILABLE, "cannot listen", address);
  assert_true(second == (dist_server_t*)0x1); /* untouched on error */

  assert_dist_error(dist_server_join(server, 30), DIST_ERR_TIMEOUT, "still serving");
  assert_dist_ok(dist_server_stop(server));
  assert_dist_ok(dist_server_join(server, 5000));
  assert_dist_ok(dist_server_join(server, 0)); /* joining again is fine */
  dist_server_destroy(server);
  dist_server_destroy(NULL);
}

static void test_server_bad_arguments(void** state) {
  (void)state;
  dist_server_t* server = NULL;
  dist_server_options_t options = DIST_SERVER_OPTIONS_INIT;
  options.field_mask = DIST_SERVER_OPT_TOKEN;
  options.token = kToken;
  assert_dist_error(dist_server_start(NULL, &options, &server), DIST_ERR_INVALID_ARGUMENT, "no address");
  assert_dist_error(dist_server_start(NULL, NULL, NULL), DIST_ERR_INVALID_ARGUMENT, "server is NULL");
  options.field_mask = DIST_SERVER_OPT_ADDRESS | DIST_SERVER_OPT_TOKEN | DIST_SERVER_OPT_IO_TIMEOUT_MS;
  options.address = "127.0.0.1:0";
  options.io_timeout_ms = 0;
  assert_dist_error(dist_server_start(NULL, &options, &server), DIST_ERR_INVALID_ARGUMENT, "io_timeout_ms 0");
  options.field_mask = DIST_SERVER_OPT_ADDRESS | DIST_SERVER_OPT_TOKEN | DIST_SERVER_OPT_LOG;
  options.log = NULL;
  assert_dist_error(dist_server_start(NULL, &options, &server), DIST_ERR_INVALID_ARGUMENT, "options: log is NULL");
  /* A worker task of a cluster has an address but is not told to serve by it. */
  dist_cluster_t* cluster = NULL;
  assert_dist_ok(dist_cluster_from_json("{\"cluster\": {\"worker\": [\"127.0.0.1:1\"]}}", &cluster));
  options.field_mask = DIST_SERVER_OPT_TOKEN;
  assert_dist_error(dist_server_start(cluster, &options, &server), DIST_ERR_INVALID_ARGUMENT, "names no task");
  dist_cluster_destroy(cluster);
  assert_null(server);
  const char* address = NULL;
  assert_dist_error(dist_server_address(NULL, &address), DIST_ERR_INVALID_ARGUMENT, "server is NULL");
  assert_dist_error(dist_server_stop(NULL), DIST_ERR_INVALID_ARGUMENT, "server is NULL");
}

static void test_checkpoint_save_restore_and_refusals(void** state) {
  (void)state;
  char root[] = "/tmp/dist-c-api-ckpt-XXXXXX";
  assert_non_null(mkdtemp(root));
  dist_server_t* a = start("127.0.0.1:0", NULL);
  dist_server_t* b = start("127.0.0.1:0", NULL);
  dist_cluster_t* cluster = cluster_of(a, b);
  dist_checkpoint_options_t options = token_options();

  char* path = NULL;
  assert_dist_ok(dist_checkpoint_save(cluster, root, 7, &options, &path));
  char expect[256];
  snprintf(expect, sizeof expect, "%s/ckpt-7", root);
  assert_string_equal(path, expect);
  dist_string_free(path);
  char file[512];
  struct stat info;
  snprintf(file, sizeof file, "%s/ckpt-7/shard-00001-of-00002.ckpt", root);
  assert_int_equal(stat(file, &info), 0);
  snprintf(file, sizeof file, "%s/LATEST", root);
  assert_int_equal(stat(file, &info), 0);

  path = NULL;
  assert_dist_ok(dist_checkpoint_restore(cluster, root, &options, &path));
  assert_string_equal(path, expect);
  dist_string_free(path);

  /* Corrupt one shard file: the restore is refused, naming it. */
  snprintf(file, sizeof file, "%s/ckpt-7/shard-00000-of-00002.ckpt", root);
  FILE* f = fopen(file, "r+b");
  assert_non_null(f);
  fseek(f, 3, SEEK_SET);
  fputc('X', f);
  fclose(f);
  path = NULL;
  assert_dist_error(dist_checkpoint_restore(cluster, root, &options, &path), DIST_ERR_INVALID_ARGUMENT, "is corrupt",
                    "shard-00000-of-00002.ckpt");
  assert_null(path);
  /* A server told to restore from it refuses to start. */
  dist_server_options_t refusing = DIST_SERVER_OPTIONS_INIT;
  refusing.field_mask = DIST_SERVER_OPT_ADDRESS | DIST_SERVER_OPT_TOKEN | DIST_SERVER_OPT_CHECKPOINT_DIR;
  refusing.address = "127.0.0.1:0";
  refusing.token = kToken;
  refusing.checkpoint_dir = root;
  dist_server_t* refused = NULL;
  assert_dist_error(dist_server_start(NULL, &refusing, &refused), DIST_ERR_INVALID_ARGUMENT, "is corrupt");
  assert_null(refused);

  /* Bad arguments. */
  assert_dist_error(dist_checkpoint_save(cluster, root, -1, &options, &path), DIST_ERR_INVALID_ARGUMENT, "step -1");
  assert_dist_error(dist_checkpoint_save(cluster, "", 1, &options, &path), DIST_ERR_INVALID_ARGUMENT, "root is empty");
  assert_dist_error(dist_checkpoint_save(NULL, root, 1, &options, &path), DIST_ERR_INVALID_ARGUMENT, "cluster is NULL");
  dist_cluster_t* no_ps = NULL;
  assert_dist_ok(dist_cluster_from_json("{\"cluster\": {\"worker\": [\"127.0.0.1:1\"]}}", &no_ps));
  assert_dist_error(dist_checkpoint_save(no_ps, root, 1, &options, &path), DIST_ERR_INVALID_ARGUMENT, "no 'ps' job");
  dist_cluster_destroy(no_ps);
  dist_checkpoint_options_t wrong = options;
  wrong.token = "wrong-token";
  assert_dist_error(dist_checkpoint_save(cluster, root, 1, &wrong, &path), DIST_ERR_AUTH, "ps:0");

  /* A server that is down is named. */
  dist_server_destroy(b);
  assert_dist_error(dist_checkpoint_save(cluster, root, 8, &options, &path), DIST_ERR_UNAVAILABLE,
                    "parameter server ps:1");
  dist_server_destroy(a);
  dist_cluster_destroy(cluster);
  char command[300];
  snprintf(command, sizeof command, "rm -rf '%s'", root);
  assert_int_equal(system(command), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_server_lifecycle),
      cmocka_unit_test(test_server_bad_arguments),
      cmocka_unit_test(test_checkpoint_save_restore_and_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
