/* A wrong cluster token between processes on loopback
 * (multiprocess/wrong_token.h): a task with the wrong token is refused with
 * DIST_ERR_AUTH within 2 s whichever side it is on, the listener keeps
 * waiting unchanged, and the right task joins after it; strangers that are
 * not libdistribute tasks (closing at once, sending garbage, leaving after
 * the first message) change nothing either. A listener with the wrong token
 * fails at its connect deadline naming every address that failed
 * authentication. Every rank is bounded in time and reaped by PID. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "multiprocess/wrong_token.h"
#include "test_support.h"

static struct launch current;

static void start_on_loopback(struct launch* launch, int rank, const char* const* env) {
  const char* worker = getenv("DIST_COLLECTIVE_WORKER");
  if (worker == NULL) fail_msg("DIST_COLLECTIVE_WORKER is not set (run through ctest)");
  const char* args[] = {worker, "quick", NULL};
  /* env sets the token: launch_rank's own is overridden. */
  launch_rank(launch, rank, "unset", env, args);
}

static int connect_to(int port) {
  const struct sockaddr_in loopback = {.sin_family = AF_INET,
                                       .sin_port = htons((uint16_t)port),
                                       .sin_addr = {.s_addr = htonl(INADDR_LOOPBACK)}};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (const struct sockaddr*)&loopback, sizeof loopback) != 0) {
    fail_msg("cannot connect to 127.0.0.1:%d", port);
  }
  return fd;
}

/* Three strangers, one after the other: closes at once; sends bytes that are not
 * the protocol; reads the listener's greeting and leaves without answering. */
static void visit_strangers(const struct launch* launch, int rank) {
  close(connect_to(launch->ports[rank]));
  int fd = connect_to(launch->ports[rank]);
  char garbage[300];
  for (size_t i = 0; i < sizeof garbage; ++i) garbage[i] = (char)(i * 37 + 11);
  assert_true(write(fd, garbage, sizeof garbage) == (ssize_t)sizeof garbage);
  close(fd);
  fd = connect_to(launch->ports[rank]);
  char greeting[8];
  assert_true(read(fd, greeting, sizeof greeting) == (ssize_t)sizeof greeting);
  assert_memory_equal(greeting, "DISTHELO", 8);
  close(fd);
}

static void test_wrong_connector(void** state) {
  (void)state;
  launch_prepare(&current, 2);
  expect_wrong_connector_refused(&current, start_on_loopback, NULL);
}

static void test_wrong_connector_after_strangers(void** state) {
  (void)state;
  launch_prepare(&current, 2);
  expect_wrong_connector_refused(&current, start_on_loopback, visit_strangers);
  /* The garbage was refused as a stranger, and said so. */
  assert_non_null(strstr(launch_output(&current, 0), "it does not speak libdistribute's bootstrap protocol"));
}

static void test_wrong_listener(void** state) {
  (void)state;
  launch_prepare(&current, 3);
  expect_wrong_listener_named(&current, start_on_loopback);
}

/* Kills (by PID) and reaps whatever a failed test left running. */
static int reap(void** state) {
  (void)state;
  launch_wait(&current, 0);
  for (int r = 0; r < current.n; ++r) unlink(current.output[r]);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_wrong_connector, reap),
      cmocka_unit_test_teardown(test_wrong_connector_after_strangers, reap),
      cmocka_unit_test_teardown(test_wrong_listener, reap),
  };
  return cmocka_run_group_tests_name("wrong_token", tests, NULL, NULL);
}
