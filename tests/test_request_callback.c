/* dist_request_on_complete between real processes on loopback (the suite's
 * own program is each rank, multiprocess/self_ranks.h): the callback runs
 * exactly once, with OK or with the failure's status and message, for
 * collectives, all_to_all_v, send and recv; at once when the call has already
 * completed; after the request was freed; and bad arguments are refused. */
#include <pthread.h>
#include <sched.h>

#include "multiprocess/self_ranks.h"

/* A completion callback's record: how often it ran and with what. */
struct callback_record {
  int calls; /* read and written with __atomic builtins */
  dist_status_t status;
  char message[512];
};

static void record_callback(void* user_data, dist_status_t status, const char* message) {
  struct callback_record* record = (struct callback_record*)user_data;
  record->status = status;
  snprintf(record->message, sizeof record->message, "%s", message);
  __atomic_fetch_add(&record->calls, 1, __ATOMIC_RELEASE);
}

/* Waits (bounded) until the callback ran at least once; its call count. */
static int wait_for_callback(struct callback_record* record, double seconds) {
  const double until = now_seconds() + seconds;
  while (__atomic_load_n(&record->calls, __ATOMIC_ACQUIRE) == 0 && now_seconds() < until) sched_yield();
  return __atomic_load_n(&record->calls, __ATOMIC_ACQUIRE);
}

/* Long enough for any callback on a loaded machine; a bound, not a timing. */
static const double kCallbackBound = 60.0;

/* Each kind of call, nonblocking, with a callback; the result checked too. */
static void scenario_every_kind(dist_comm_t* world, int32_t rank) {
  /* all_reduce */
  struct callback_record reduce_record = {0};
  double value[3] = {rank + 1.0, 10.0, -1.0};
  dist_buffer_t v = buffer_of(value, 3, DIST_DTYPE_F64);
  dist_request_t* request = NULL;
  CHECK_OK(dist_all_reduce(world, NULL, &v, DIST_OP_SUM, &request));
  CHECK_OK(dist_request_on_complete(request, record_callback, &reduce_record));
  CHECK(wait_for_callback(&reduce_record, kCallbackBound) == 1, "all_reduce: callback ran %d times",
        reduce_record.calls);
  CHECK(reduce_record.status == DIST_OK && reduce_record.message[0] == '\0', "all_reduce: callback got %s \"%s\"",
        dist_status_string(reduce_record.status), reduce_record.message);
  CHECK(value[0] == 3.0 && value[1] == 20.0 && value[2] == -2.0, "all_reduce: %g %g %g", value[0], value[1], value[2]);
  CHECK_OK(dist_request_wait(request, -1));
  dist_request_free(request);

  /* all_to_all_v: 1 element to rank 0, 2 to rank 1 from every rank. */
  struct callback_record v_record = {0};
  int32_t send[3] = {rank * 100, rank * 100 + 1, rank * 100 + 2}, recv[4] = {-1, -1, -1, -1};
  const uint64_t send_counts[2] = {1, 2}, send_offsets[2] = {0, 1};
  const uint64_t recv_counts[2] = {rank == 0 ? 1u : 2u, rank == 0 ? 1u : 2u};
  dist_buffer_t s = buffer_of(send, 3, DIST_DTYPE_I32), r = buffer_of(recv, 4, DIST_DTYPE_I32);
  CHECK_OK(dist_all_to_all_v(world, &s, send_counts, send_offsets, &r, recv_counts, NULL, &request));
  CHECK_OK(dist_request_on_complete(request, record_callback, &v_record));
  CHECK(wait_for_callback(&v_record, kCallbackBound) == 1, "all_to_all_v: callback ran %d times", v_record.calls);
  CHECK(v_record.status == DIST_OK, "all_to_all_v: callback got %s", dist_status_string(v_record.status));
  if (rank == 0) CHECK(recv[0] == 0 && recv[1] == 100, "all_to_all_v at 0: %d %d", recv[0], recv[1]);
  if (rank == 1) {
    CHECK(recv[0] == 1 && recv[1] == 2 && recv[2] == 101 && recv[3] == 102, "all_to_all_v at 1: %d %d %d %d", recv[0],
          recv[1], recv[2], recv[3]);
  }
  dist_request_free(request);

  /* send and recv, each with a callback; the receive's request is freed
   * before its message is sent. */
  struct callback_record message_record = {0};
  float message[5] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  dist_buffer_t m = buffer_of(message, 5, DIST_DTYPE_F32);
  if (rank == 1) {
    memset(message, 0, sizeof message);
    CHECK_OK(dist_recv(world, &m, 0, 7, &request));
    CHECK_OK(dist_request_on_complete(request, record_callback, &message_record));
    dist_request_free(request);
  }
  CHECK_OK(dist_barrier(world, NULL));
  if (rank == 0) {
    CHECK_OK(dist_send(world, &m, 1, 7, &request));
    CHECK_OK(dist_request_on_complete(request, record_callback, &message_record));
  }
  CHECK(wait_for_callback(&message_record, kCallbackBound) == 1, "%s: callback ran %d times",
        rank == 0 ? "send" : "freed recv", message_record.calls);
  CHECK(message_record.status == DIST_OK, "message: callback got %s", dist_status_string(message_record.status));
  if (rank == 1) CHECK(message[0] == 1.5f && message[4] == 5.5f, "recv: %g .. %g", message[0], message[4]);
  if (rank == 0) dist_request_free(request);

  /* Exactly once: nothing ran twice in the meantime. */
  CHECK_OK(dist_barrier(world, NULL));
  CHECK(reduce_record.calls == 1 && v_record.calls == 1 && message_record.calls == 1,
        "callbacks ran %d, %d, %d times", reduce_record.calls, v_record.calls, message_record.calls);
}

/* The failure's status and message reach the callback: a receive with no
 * sender times out, and a mismatched receive fails. */
static void scenario_failures(dist_comm_t* world, int32_t rank) {
  int32_t value = 0;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I32);
  dist_request_t* request = NULL;
  dist_comm_t* quick = quick_copy(world, rank, 1000);
  if (rank == 0) {
    struct callback_record timeout_record = {0};
    CHECK_OK(dist_recv(quick, &b, 1, 3, &request));
    CHECK_OK(dist_request_on_complete(request, record_callback, &timeout_record));
    CHECK(wait_for_callback(&timeout_record, kCallbackBound) == 1, "timeout: callback ran %d times",
          timeout_record.calls);
    CHECK(timeout_record.status == DIST_ERR_TIMEOUT && strstr(timeout_record.message, "timed out") != NULL,
          "timeout: callback got %s \"%s\"", dist_status_string(timeout_record.status), timeout_record.message);
    dist_request_free(request);
  }
  CHECK_OK(dist_barrier(world, NULL));
  dist_comm_destroy(quick);
  struct callback_record mismatch_record = {0};
  if (rank == 0) {
    double wrong = 1.0;
    dist_buffer_t d = buffer_of(&wrong, 1, DIST_DTYPE_F64);
    CHECK_OK(dist_send(world, &d, 1, 4, NULL));
  } else {
    CHECK_OK(dist_recv(world, &b, 0, 4, &request));
    CHECK_OK(dist_request_on_complete(request, record_callback, &mismatch_record));
    CHECK(wait_for_callback(&mismatch_record, kCallbackBound) == 1, "mismatch: callback ran %d times",
          mismatch_record.calls);
    CHECK(mismatch_record.status == DIST_ERR_MISMATCH && strstr(mismatch_record.message, "f64 x 1") != NULL &&
              strstr(mismatch_record.message, "i32 x 1") != NULL,
          "mismatch: callback got %s \"%s\"", dist_status_string(mismatch_record.status), mismatch_record.message);
    CHECK_STATUS(dist_request_wait(request, -1), DIST_ERR_MISMATCH, "f64 x 1");
    dist_request_free(request);
  }
  CHECK_OK(dist_barrier(world, NULL));
}

struct thread_record {
  struct callback_record record;
  pthread_t thread;
};

static void record_thread(void* user_data, dist_status_t status, const char* message) {
  struct thread_record* t = (struct thread_record*)user_data;
  t->thread = pthread_self();
  record_callback(&t->record, status, message);
}

/* Set after completion: runs at once, on the calling thread. A second
 * callback and a NULL one are refused. */
static void scenario_after_completion(dist_comm_t* world, int32_t rank) {
  double value = rank;
  dist_buffer_t v = buffer_of(&value, 1, DIST_DTYPE_F64);
  dist_request_t* request = NULL;
  CHECK_OK(dist_all_reduce(world, NULL, &v, DIST_OP_MAX, &request));
  CHECK_OK(dist_request_wait(request, -1));
  struct thread_record t;
  memset(&t, 0, sizeof t);
  CHECK_OK(dist_request_on_complete(request, record_thread, &t));
  CHECK(__atomic_load_n(&t.record.calls, __ATOMIC_ACQUIRE) == 1, "the callback did not run at once");
  CHECK(pthread_equal(t.thread, pthread_self()), "the callback ran on another thread");
  CHECK(t.record.status == DIST_OK && value == 1.0, "after completion: %s, value %g",
        dist_status_string(t.record.status), value);
  struct callback_record second = {0};
  CHECK_STATUS(dist_request_on_complete(request, record_callback, &second), DIST_ERR_INVALID_ARGUMENT,
               "already has a completion callback");
  CHECK_STATUS(dist_request_on_complete(request, NULL, &second), DIST_ERR_INVALID_ARGUMENT, "callback is NULL");
  CHECK_STATUS(dist_request_on_complete(NULL, record_callback, &second), DIST_ERR_INVALID_ARGUMENT,
               "request is NULL");
  CHECK(second.calls == 0 && t.record.calls == 1, "refused callbacks ran");
  dist_request_free(request);
}

static int run_rank(const char* scenario) {
  dist_context_t* context = join(30000);
  int32_t rank = -1, n = 0;
  dist_comm_t* world = world_with_timeout(context, 30000, &rank, &n);
  if (strcmp(scenario, "every_kind") == 0) scenario_every_kind(world, rank);
  else if (strcmp(scenario, "failures") == 0) scenario_failures(world, rank);
  else if (strcmp(scenario, "after_completion") == 0) scenario_after_completion(world, rank);
  else CHECK(0, "unknown scenario %s", scenario);
  dist_context_destroy(context);
  printf("%s: rank %d: %d checks, %d failed\n", scenario, rank, checks, failures);
  return failures == 0 ? 0 : 1;
}

static void test_every_kind(void** state) { (void)state; run_ranks(2, "every_kind", NULL, 120); }
static void test_failures(void** state) { (void)state; run_ranks(2, "failures", NULL, 120); }
static void test_after_completion(void** state) { (void)state; run_ranks(2, "after_completion", NULL, 90); }

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "rank") == 0) return run_rank(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_after_completion),
      cmocka_unit_test(test_every_kind),
      cmocka_unit_test(test_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
