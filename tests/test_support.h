/* Shared helpers for the C test suites (cmocka). */
#ifndef DIST_TEST_SUPPORT_H
#define DIST_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <distribute/c_api.h>

/* Fails the test with the library's message when a call does not return DIST_OK. */
#define assert_dist_ok(call)                                                            \
  do {                                                                                  \
    dist_status_t status_ = (call);                                                     \
    if (status_ != DIST_OK) {                                                           \
      fail_msg("%s returned %s: %s", #call, dist_status_string(status_), dist_last_error()); \
    }                                                                                   \
  } while (0)

/* Checks that `got` is `expected` and that dist_last_error() contains every
 * NULL-terminated needle. */
static inline void check_error(const char* call, dist_status_t got, dist_status_t expected, ...) {
  if (got != expected) {
    fail_msg("%s returned %s, expected %s (last error: %s)", call, dist_status_string(got),
             dist_status_string(expected), dist_last_error());
  }
  va_list needles;
  va_start(needles, expected);
  for (const char* needle = va_arg(needles, const char*); needle != NULL;
       needle = va_arg(needles, const char*)) {
    if (strstr(dist_last_error(), needle) == NULL) {
      va_end(needles);
      fail_msg("%s: message \"%s\" does not contain \"%s\"", call, dist_last_error(), needle);
    }
  }
  va_end(needles);
}
#define assert_dist_error(call, expected, ...) check_error(#call, (call), (expected), __VA_ARGS__, NULL)

/* Resolves with `resolver` reading only `env` (NULL-terminated "NAME=value"). */
static inline dist_status_t resolve_with_env(dist_resolver_kind_t resolver, const char* const* env,
                                             dist_cluster_t** cluster) {
  dist_cluster_options_t options = DIST_CLUSTER_OPTIONS_INIT;
  options.field_mask = DIST_CLUSTER_OPT_RESOLVER | DIST_CLUSTER_OPT_ENV;
  options.resolver = resolver;
  options.env = env;
  return dist_cluster_resolve(&options, cluster);
}

/* The task address, or fails the test. */
static inline const char* address_of(const dist_cluster_t* cluster, const char* job, int32_t index) {
  const char* address = NULL;
  assert_dist_ok(dist_cluster_task_address(cluster, job, index, &address));
  return address;
}

/* master(type, id, rpc) compared with `expected`. */
static inline void assert_master(const dist_cluster_t* cluster, const char* type, int32_t id,
                                 const char* rpc, const char* expected) {
  char* master = NULL;
  assert_dist_ok(dist_cluster_master(cluster, type, id, rpc, &master));
  if (strcmp(master, expected) != 0) {
    char message[512];
    snprintf(message, sizeof message, "master(%s, %d, %s) = \"%s\", expected \"%s\"",
             type ? type : "NULL", (int)id, rpc ? rpc : "NULL", master, expected);
    dist_string_free(master);
    fail_msg("%s", message);
  }
  dist_string_free(master);
}

/* The task's type and id. */
static inline void assert_task(const dist_cluster_t* cluster, const char* type, int32_t id) {
  const char* got_type = NULL;
  int32_t got_id = -2;
  assert_dist_ok(dist_cluster_task_type(cluster, &got_type));
  assert_dist_ok(dist_cluster_task_id(cluster, &got_id));
  if (type == NULL) {
    assert_null(got_type);
  } else {
    assert_non_null(got_type);
    assert_string_equal(got_type, type);
  }
  assert_int_equal(got_id, id);
}

static inline int32_t num_tasks_of(const dist_cluster_t* cluster, const char* job) {
  int32_t n = -1;
  assert_dist_ok(dist_cluster_num_tasks(cluster, job, &n));
  return n;
}

/* dist_cluster_to_json as a string the caller frees with dist_string_free. */
static inline char* json_of(const dist_cluster_t* cluster) {
  char* json = NULL;
  assert_dist_ok(dist_cluster_to_json(cluster, &json));
  return json;
}

#endif /* DIST_TEST_SUPPORT_H */
