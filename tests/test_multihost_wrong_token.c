/* A wrong cluster token across emulated hosts (multiprocess/wrong_token.h),
 * one rank per host: the task with the wrong token is refused with
 * DIST_ERR_AUTH within 2 s whichever side it is on; the listener keeps
 * waiting unchanged and the right task from the other host joins after it; a
 * listener with the wrong token fails at its connect deadline naming the
 * other hosts' addresses (198.18.0.x:port) as having failed authentication.
 * Skips (77), saying why, where emulated hosts cannot be made (not root). */
#include "multihost/hosts.h"
#include "multihost/layout.h"
#include "multiprocess/wrong_token.h"
#include "test_support.h"

static const struct layout k2x1 = {"2x1", 2, {0, 1}};
static const struct layout k3x1 = {"3x1", 3, {0, 1, 2}};

/* Every layout here has one rank per host: the world goes point to point. */
static void start_on_host(struct launch* launch, int rank, const char* const* env) {
  (void)launch; /* the layout's own */
  const char* worker = getenv("DIST_COLLECTIVE_WORKER");
  if (worker == NULL) fail_msg("DIST_COLLECTIVE_WORKER is not set (run through ctest)");
  char expected_path[48];
  snprintf(expected_path, sizeof expected_path, "DIST_TEST_EXPECT_PATH=%d", (int)DIST_COMM_PATH_POINT_TO_POINT);
  const char* with_path[8] = {expected_path};
  for (size_t i = 0; env[i] != NULL && i + 2 < sizeof with_path / sizeof with_path[0]; ++i) with_path[i + 1] = env[i];
  const char* args[] = {"quick", NULL};
  layout_start_rank(rank, worker, args, with_path);
}

static void test_wrong_connector(void** state) {
  (void)state;
  expect_wrong_connector_refused(layout_prepare(&k2x1), start_on_host, NULL);
}

static void test_wrong_listener(void** state) {
  (void)state;
  expect_wrong_listener_named(layout_prepare(&k3x1), start_on_host);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_wrong_connector, layout_teardown),
      cmocka_unit_test_teardown(test_wrong_listener, layout_teardown),
  };
  return hosts_run_suite("multihost_wrong_token", tests);
}
