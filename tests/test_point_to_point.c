/* dist_send / dist_recv / dist_request_source between real processes on
 * loopback (the suite's own program is each rank, multiprocess/self_ranks.h):
 * data of every dtype checked against values computed here, matching by
 * (source, tag) in send order, DIST_ANY_SOURCE, messages beside collectives,
 * split communicators, and the failures: mismatch, timeout, a killed peer,
 * an abort, a context destroyed under a pending receive, bad arguments. */
#include <signal.h>

#include "multiprocess/element_values.h"
#include "multiprocess/self_ranks.h"

static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I8,  DIST_DTYPE_U8,  DIST_DTYPE_I32,  DIST_DTYPE_U32, DIST_DTYPE_I64,
                                       DIST_DTYPE_U64, DIST_DTYPE_F16, DIST_DTYPE_BF16, DIST_DTYPE_F32, DIST_DTYPE_F64};
enum { kNumDtypes = sizeof kDtypes / sizeof kDtypes[0] };

/* Element i of a message with `seed`: small integers, exact in every dtype. */
static double message_value(int seed, size_t i) { return (double)(1 + (size_t)(seed * 5 + (int)(i % 97) * 3) % 61); }

static void fill(void* data, uint64_t count, dist_dtype_t dtype, int seed) {
  for (uint64_t i = 0; i < count; ++i) store_value(data, i, dtype, message_value(seed, i));
}

/* Number of elements that differ from what `seed` gives (all are checked). */
static uint64_t wrong_elements(const void* data, uint64_t count, dist_dtype_t dtype, int seed) {
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < count; ++i) wrong += load_value(data, i, dtype) != message_value(seed, i);
  return wrong;
}

/* Rank 0 sends to rank 1, which sends it back: blocking, then nonblocking. */
static void ping_pong(dist_comm_t* world, int32_t rank, dist_dtype_t dtype, uint64_t count, int seed) {
  const size_t bytes = (size_t)count * dtype_size(dtype);
  void* out = malloc(bytes + 1);
  void* in = malloc(bytes + 1);
  fill(out, count, dtype, seed);
  memset(in, 0, bytes + 1);
  dist_buffer_t out_buffer = buffer_of(out, count, dtype);
  dist_buffer_t in_buffer = buffer_of(in, count, dtype);
  const int32_t peer = 1 - rank;
  if (rank == 0) {
    CHECK_OK(dist_send(world, &out_buffer, peer, 11, NULL));
    CHECK_OK(dist_recv(world, &in_buffer, peer, 12, NULL));
  } else {
    CHECK_OK(dist_recv(world, &in_buffer, peer, 11, NULL));
    CHECK_OK(dist_send(world, &in_buffer, peer, 12, NULL));
  }
  CHECK(wrong_elements(in, count, dtype, seed) == 0, "blocking: dtype %d x %llu: wrong data", dtype,
        (unsigned long long)count);

  /* Nonblocking both ways at once: each posts its receive, then its send. */
  fill(out, count, dtype, seed + rank + 1);
  memset(in, 0, bytes + 1);
  dist_request_t* receive = NULL;
  dist_request_t* send = NULL;
  CHECK_OK(dist_recv(world, &in_buffer, peer, 13, &receive));
  CHECK_OK(dist_send(world, &out_buffer, peer, 13, &send));
  if (receive != NULL) CHECK_OK(dist_request_wait(receive, -1));
  if (send != NULL) CHECK_OK(dist_request_wait(send, -1));
  int32_t source = -7;
  if (receive != NULL) CHECK_OK(dist_request_source(receive, &source));
  CHECK(source == peer, "source %d, expected %d", source, peer);
  if (send != NULL) CHECK_STATUS(dist_request_source(send, &source), DIST_ERR_INVALID_ARGUMENT, "not a receive");
  CHECK(wrong_elements(in, count, dtype, seed + peer + 1) == 0, "nonblocking: dtype %d x %llu: wrong data", dtype,
        (unsigned long long)count);
  dist_request_free(receive);
  dist_request_free(send);
  free(out);
  free(in);
}

static void scenario_ping_pong(dist_comm_t* world, int32_t rank) {
  for (int d = 0; d < kNumDtypes; ++d) {
    ping_pong(world, rank, kDtypes[d], 0, d);
    ping_pong(world, rank, kDtypes[d], 1, d);
    ping_pong(world, rank, kDtypes[d], 1001, d); /* odd size */
    ping_pong(world, rank, kDtypes[d], 5000, d); /* past the 16 KiB inline limit for most dtypes */
  }
  ping_pong(world, rank, DIST_DTYPE_U8, 8u << 20, 3);  /* 8 MiB: UCX's rendezvous */
  ping_pong(world, rank, DIST_DTYPE_F32, 2u << 20, 4); /* 8 MiB of f32 */
}

/* Tags sent in one order, received in another; each (source, tag) in order. */
static void scenario_tag_order(dist_comm_t* world, int32_t rank) {
  enum { kTags = 3, kPerTag = 3 };
  const int32_t tags[kTags] = {5, 6, DIST_TAG_MAX};
  /* Tag 6 carries messages past the inline limit: their data follows apart. */
  const uint64_t counts[kTags] = {4, 9000, 1};
  int32_t data[kTags][kPerTag][9000];
  if (rank == 0) {
    dist_request_t* requests[kTags * kPerTag];
    int posted = 0;
    for (int k = 0; k < kPerTag; ++k) {
      for (int t = 0; t < kTags; ++t) {
        fill(data[t][k], counts[t], DIST_DTYPE_I32, t * 10 + k);
        dist_buffer_t b = buffer_of(data[t][k], counts[t], DIST_DTYPE_I32);
        CHECK_OK(dist_send(world, &b, 1, tags[t], &requests[posted]));
        ++posted;
      }
    }
    for (int i = 0; i < posted; ++i) {
      CHECK_OK(dist_request_wait(requests[i], -1));
      dist_request_free(requests[i]);
    }
  } else {
    const int order[kTags] = {2, 0, 1};
    for (int o = 0; o < kTags; ++o) {
      const int t = order[o];
      for (int k = 0; k < kPerTag; ++k) {
        memset(data[t][k], 0, sizeof data[t][k]);
        dist_buffer_t b = buffer_of(data[t][k], counts[t], DIST_DTYPE_I32);
        CHECK_OK(dist_recv(world, &b, 0, tags[t], NULL));
        CHECK(wrong_elements(data[t][k], counts[t], DIST_DTYPE_I32, t * 10 + k) == 0,
              "tag %d message %d: not the %d-th sent with that tag", tags[t], k, k);
      }
    }
  }
  CHECK_OK(dist_barrier(world, NULL));
}

/* Three ranks: 1 and 2 send to 0, which receives from any source. */
static void scenario_any_source(dist_comm_t* world, int32_t rank) {
  int64_t values[2][16];
  if (rank == 0) {
    dist_request_t* requests[2];
    for (int i = 0; i < 2; ++i) {
      dist_buffer_t b = buffer_of(values[i], 16, DIST_DTYPE_I64);
      CHECK_OK(dist_recv(world, &b, DIST_ANY_SOURCE, 3, &requests[i]));
    }
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < 2; ++i) {
      CHECK_OK(dist_request_wait(requests[i], -1));
      int32_t source = -1;
      CHECK_OK(dist_request_source(requests[i], &source));
      CHECK(source == 1 || source == 2, "source %d", source);
      if (source == 1 || source == 2) {
        ++seen[source];
        CHECK(wrong_elements(values[i], 16, DIST_DTYPE_I64, 100 + source) == 0, "data from %d is wrong", source);
      }
      dist_request_free(requests[i]);
    }
    CHECK(seen[1] == 1 && seen[2] == 1, "sources seen: 1 x%d, 2 x%d", seen[1], seen[2]);
  } else {
    fill(values[0], 16, DIST_DTYPE_I64, 100 + rank);
    dist_buffer_t b = buffer_of(values[0], 16, DIST_DTYPE_I64);
    CHECK_OK(dist_send(world, &b, 0, 3, NULL));
  }
  CHECK_OK(dist_barrier(world, NULL));
}

/* A receive pending while collectives run, and a collective pending while
 * messages move: neither waits for the other. */
static void scenario_beside_collectives(dist_comm_t* world, int32_t rank) {
  float message[32];
  dist_buffer_t m = buffer_of(message, 32, DIST_DTYPE_F32);
  dist_request_t* receive = NULL;
  if (rank == 0) CHECK_OK(dist_recv(world, &m, 1, 9, &receive));
  for (int round = 0; round < 3; ++round) {
    double value[4] = {rank + 1.0, 2.0, 3.0, round};
    dist_buffer_t v = buffer_of(value, 4, DIST_DTYPE_F64);
    CHECK_OK(dist_all_reduce(world, NULL, &v, DIST_OP_SUM, NULL));
    CHECK(value[0] == 3.0 && value[1] == 4.0 && value[3] == 2.0 * round, "all_reduce beside a receive: %g %g %g",
          value[0], value[1], value[3]);
  }
  CHECK_OK(dist_barrier(world, NULL));
  if (rank == 1) {
    fill(message, 32, DIST_DTYPE_F32, 77);
    CHECK_OK(dist_send(world, &m, 0, 9, NULL));
  } else {
    CHECK_OK(dist_request_wait(receive, -1));
    CHECK(wrong_elements(message, 32, DIST_DTYPE_F32, 77) == 0, "message received beside collectives is wrong");
    dist_request_free(receive);
  }

  /* Rank 0's all_reduce waits for rank 1, which first exchanges messages. */
  double value = rank + 1.0;
  dist_buffer_t v = buffer_of(&value, 1, DIST_DTYPE_F64);
  dist_request_t* reduce = NULL;
  if (rank == 0) CHECK_OK(dist_all_reduce(world, NULL, &v, DIST_OP_SUM, &reduce));
  if (rank == 0) {
    fill(message, 32, DIST_DTYPE_F32, 78);
    CHECK_OK(dist_send(world, &m, 1, 10, NULL));
    CHECK_OK(dist_recv(world, &m, 1, 11, NULL));
  } else {
    CHECK_OK(dist_recv(world, &m, 0, 10, NULL));
    CHECK_OK(dist_send(world, &m, 0, 11, NULL));
    CHECK_OK(dist_all_reduce(world, NULL, &v, DIST_OP_SUM, NULL));
  }
  CHECK(wrong_elements(message, 32, DIST_DTYPE_F32, 78) == 0, "message beside a pending all_reduce is wrong");
  if (rank == 0) {
    CHECK_OK(dist_request_wait(reduce, -1));
    dist_request_free(reduce);
  }
  CHECK(value == 3.0, "all_reduce beside messages gave %g", value);
}

/* Three ranks split into {0, 2} and {1}: ranks are the communicator's, and
 * the same tag on the world and on the split never mix. */
static void scenario_split(dist_comm_t* world, int32_t rank) {
  dist_comm_t* half = NULL;
  CHECK_OK(dist_comm_split(world, rank % 2, rank, &half));
  if (half == NULL) return;
  int32_t half_rank = -1, half_size = 0;
  CHECK_OK(dist_comm_rank(half, &half_rank));
  CHECK_OK(dist_comm_size(half, &half_size));
  int32_t values[8];
  dist_buffer_t b = buffer_of(values, 8, DIST_DTYPE_I32);
  if (rank == 2) {
    CHECK(half_rank == 1, "world rank 2 is rank %d of its half", half_rank);
    fill(values, 8, DIST_DTYPE_I32, 20);
    CHECK_OK(dist_send(world, &b, 0, 1, NULL));
    fill(values, 8, DIST_DTYPE_I32, 21);
    CHECK_OK(dist_send(half, &b, 0, 1, NULL));
  } else if (rank == 0) {
    CHECK_OK(dist_recv(half, &b, 1, 1, NULL));
    CHECK(wrong_elements(values, 8, DIST_DTYPE_I32, 21) == 0, "the split's message is not the one sent on it");
    CHECK_OK(dist_recv(world, &b, 2, 1, NULL));
    CHECK(wrong_elements(values, 8, DIST_DTYPE_I32, 20) == 0, "the world's message is not the one sent on it");
  } else {
    CHECK(half_size == 1, "the half of rank 1 has %d ranks", half_size);
    CHECK_STATUS(dist_send(half, &b, 0, 1, NULL), DIST_ERR_INVALID_ARGUMENT, "peer 0", "itself");
    CHECK_STATUS(dist_recv(half, &b, DIST_ANY_SOURCE, 1, NULL), DIST_ERR_INVALID_ARGUMENT, "one rank");
  }
  dist_comm_destroy(half);
  CHECK_OK(dist_barrier(world, NULL));
}

/* dtype or count that disagree: the receive fails naming both sides, the
 * send completes, and the next message on that tag is unharmed. */
static void scenario_mismatch(dist_comm_t* world, int32_t rank) {
  static uint8_t big[8u << 20];
  float f[8];
  int32_t i[4];
  dist_buffer_t floats4 = buffer_of(f, 4, DIST_DTYPE_F32), floats8 = buffer_of(f, 8, DIST_DTYPE_F32);
  dist_buffer_t ints = buffer_of(i, 4, DIST_DTYPE_I32);
  dist_buffer_t big_send = buffer_of(big, sizeof big, DIST_DTYPE_U8), big_recv = buffer_of(big, sizeof big / 2, DIST_DTYPE_U8);
  if (rank == 0) {
    fill(f, 8, DIST_DTYPE_F32, 1);
    CHECK_OK(dist_send(world, &floats4, 1, 1, NULL));
    CHECK_OK(dist_send(world, &floats8, 1, 1, NULL));
    CHECK_OK(dist_send(world, &big_send, 1, 1, NULL));
    fill(f, 8, DIST_DTYPE_F32, 2);
    CHECK_OK(dist_send(world, &floats4, 1, 1, NULL));
  } else {
    CHECK_STATUS(dist_recv(world, &ints, 0, 1, NULL), DIST_ERR_MISMATCH, "worker:0", "worker:1", "f32 x 4", "i32 x 4");
    CHECK_STATUS(dist_recv(world, &floats4, 0, 1, NULL), DIST_ERR_MISMATCH, "worker:0", "worker:1", "f32 x 8",
                 "f32 x 4");
    CHECK_STATUS(dist_recv(world, &big_recv, 0, 1, NULL), DIST_ERR_MISMATCH, "worker:0", "worker:1", "u8 x 8388608",
                 "u8 x 4194304");
    memset(f, 0, sizeof f);
    CHECK_OK(dist_recv(world, &floats4, 0, 1, NULL));
    CHECK(wrong_elements(f, 4, DIST_DTYPE_F32, 2) == 0, "the message after the mismatches is wrong");
  }
  CHECK_OK(dist_barrier(world, NULL));
}

/* No sender: the receive ends with TIMEOUT by the communicator's deadline. */
static void scenario_timeout(dist_comm_t* world, int32_t rank) {
  dist_comm_t* quick = quick_copy(world, rank, 1000);
  if (rank == 0) {
    int32_t value = 0;
    dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I32);
    double start = now_seconds();
    CHECK_STATUS(dist_recv(quick, &b, 1, 4, NULL), DIST_ERR_TIMEOUT, "timed out", "tag 4");
    CHECK(now_seconds() - start < 1.0 + 10.0, "the blocking receive ended %.1f s after a 1 s deadline",
          now_seconds() - start);
    dist_request_t* request = NULL;
    start = now_seconds();
    CHECK_OK(dist_recv(quick, &b, DIST_ANY_SOURCE, 4, &request));
    if (request != NULL) {
      CHECK_STATUS(dist_request_wait(request, 20000), DIST_ERR_TIMEOUT, "timed out", "any rank");
      CHECK(dist_request_test(request, &value) == DIST_ERR_TIMEOUT && value == 1, "the request is not done");
      CHECK(now_seconds() - start < 1.0 + 10.0, "the nonblocking receive ended %.1f s after a 1 s deadline",
            now_seconds() - start);
    }
    dist_request_free(request);
  }
  /* The communicator is unharmed: its collectives still run. */
  CHECK_OK(dist_barrier(world, NULL));
  CHECK_OK(dist_barrier(quick, NULL));
  dist_comm_destroy(quick);
}

/* Rank 1 dies while rank 0 waits for its messages, blocking and not:
 * PEER_FAILED by the deadline, for later calls too; the context still goes. */
static void scenario_peer_killed(dist_comm_t* world, int32_t rank) {
  int32_t value = 0, pending_value = 0;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I32), p = buffer_of(&pending_value, 1, DIST_DTYPE_I32);
  dist_request_t* pending = NULL;
  if (rank == 0) CHECK_OK(dist_recv(world, &p, 1, 3, &pending));
  CHECK_OK(dist_barrier(world, NULL));
  if (rank == 1) raise(SIGKILL);
  const double start = now_seconds();
  CHECK_STATUS(dist_recv(world, &b, 1, 2, NULL), DIST_ERR_PEER_FAILED, "worker:1");
  CHECK(now_seconds() - start < 20.0 + 5.0, "the receive from a dead peer ended after %.1f s",
        now_seconds() - start);
  if (pending != NULL) CHECK_STATUS(dist_request_wait(pending, 30000), DIST_ERR_PEER_FAILED, "worker:1");
  dist_request_free(pending);
  CHECK_STATUS(dist_send(world, &b, 1, 2, NULL), DIST_ERR_PEER_FAILED, "worker:1");
}

/* Rank 1 aborts the context while rank 0 waits for its message: ABORTED. */
static void scenario_aborted(dist_context_t* context, dist_comm_t* world, int32_t rank) {
  int32_t value = 0;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I32);
  CHECK_OK(dist_barrier(world, NULL));
  if (rank == 1) {
    CHECK_OK(dist_context_abort(context, "the test aborts"));
    CHECK_STATUS(dist_send(world, &b, 0, 2, NULL), DIST_ERR_ABORTED, "the test aborts");
    return;
  }
  CHECK_STATUS(dist_recv(world, &b, 1, 2, NULL), DIST_ERR_ABORTED, "worker:1", "the test aborts");
}

/* A receive still pending when its context is destroyed ends (ABORTED); its
 * request stays valid after the context is gone. */
static dist_request_t* scenario_destroyed_while_pending(dist_comm_t* world, int32_t rank, int32_t* value) {
  dist_buffer_t b = buffer_of(value, 1, DIST_DTYPE_I32);
  dist_request_t* request = NULL;
  if (rank == 0) CHECK_OK(dist_recv(world, &b, 1, 6, &request));
  CHECK_OK(dist_barrier(world, NULL));
  return request;
}

static void scenario_bad_input(dist_comm_t* world, int32_t rank) {
  int32_t value = 0;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I32);
  dist_buffer_t no_data = buffer_of(NULL, 1, DIST_DTYPE_I32);
  dist_request_t* request = NULL;
  CHECK_STATUS(dist_send(NULL, &b, 1, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "comm is NULL");
  CHECK_STATUS(dist_send(world, NULL, 1, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "buffer is NULL");
  CHECK_STATUS(dist_recv(world, &no_data, 1, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "data is NULL");
  CHECK_STATUS(dist_send(world, &b, 2, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "peer 2", "out of range");
  CHECK_STATUS(dist_recv(world, &b, -2, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "peer -2", "out of range");
  CHECK_STATUS(dist_send(world, &b, DIST_ANY_SOURCE, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "DIST_ANY_SOURCE");
  CHECK_STATUS(dist_send(world, &b, rank, 0, NULL), DIST_ERR_INVALID_ARGUMENT, "itself");
  CHECK_STATUS(dist_recv(world, &b, rank, 0, &request), DIST_ERR_INVALID_ARGUMENT, "itself");
  CHECK(request == NULL, "a request was made for a bad call");
  CHECK_STATUS(dist_send(world, &b, 1 - rank, -1, NULL), DIST_ERR_INVALID_ARGUMENT, "tag -1");
  CHECK_STATUS(dist_request_source(NULL, &value), DIST_ERR_INVALID_ARGUMENT, "request is NULL");
  /* Nothing was sent: a good exchange still works. */
  value = 40 + rank;
  if (rank == 0) {
    CHECK_OK(dist_send(world, &b, 1, 0, NULL));
  } else {
    CHECK_OK(dist_recv(world, &b, 0, 0, NULL));
    CHECK(value == 40, "got %d", value);
  }
}

static int run_rank(const char* scenario) {
  const int killed = strcmp(scenario, "peer_killed") == 0;
  dist_context_t* context = join(killed ? 20000 : 30000);
  int32_t rank = -1, n = 0, value = 0;
  dist_request_t* pending = NULL;
  dist_comm_t* world = world_with_timeout(context, killed ? 20000 : 30000, &rank, &n);
  if (strcmp(scenario, "ping_pong") == 0) scenario_ping_pong(world, rank);
  else if (strcmp(scenario, "tag_order") == 0) scenario_tag_order(world, rank);
  else if (strcmp(scenario, "any_source") == 0) scenario_any_source(world, rank);
  else if (strcmp(scenario, "beside_collectives") == 0) scenario_beside_collectives(world, rank);
  else if (strcmp(scenario, "split") == 0) scenario_split(world, rank);
  else if (strcmp(scenario, "mismatch") == 0) scenario_mismatch(world, rank);
  else if (strcmp(scenario, "timeout") == 0) scenario_timeout(world, rank);
  else if (strcmp(scenario, "peer_killed") == 0) scenario_peer_killed(world, rank);
  else if (strcmp(scenario, "aborted") == 0) scenario_aborted(context, world, rank);
  else if (strcmp(scenario, "destroyed_while_pending") == 0) pending = scenario_destroyed_while_pending(world, rank, &value);
  else if (strcmp(scenario, "bad_input") == 0) scenario_bad_input(world, rank);
  else CHECK(0, "unknown scenario %s", scenario);
  const double start = now_seconds();
  dist_context_destroy(context);
  CHECK(now_seconds() - start < 60.0, "destroy took %.1f s", now_seconds() - start);
  if (pending != NULL) {
    CHECK_STATUS(dist_request_wait(pending, 10000), DIST_ERR_ABORTED, "destroyed");
    dist_request_free(pending);
  }
  printf("%s: rank %d: %d checks, %d failed\n", scenario, rank, checks, failures);
  return failures == 0 ? 0 : 1;
}

static void test_ping_pong(void** state) { (void)state; run_ranks(2, "ping_pong", NULL, 240); }
static void test_tag_order(void** state) { (void)state; run_ranks(2, "tag_order", NULL, 90); }
static void test_any_source(void** state) { (void)state; run_ranks(3, "any_source", NULL, 90); }
static void test_beside_collectives(void** state) { (void)state; run_ranks(2, "beside_collectives", NULL, 90); }
static void test_split(void** state) { (void)state; run_ranks(3, "split", NULL, 90); }
static void test_mismatch(void** state) { (void)state; run_ranks(2, "mismatch", NULL, 90); }
static void test_timeout(void** state) { (void)state; run_ranks(2, "timeout", NULL, 90); }
static void test_peer_killed(void** state) {
  (void)state;
  const int expected[2] = {0, -SIGKILL};
  run_ranks(2, "peer_killed", expected, 90);
}
static void test_aborted(void** state) { (void)state; run_ranks(2, "aborted", NULL, 90); }
static void test_destroyed_while_pending(void** state) { (void)state; run_ranks(2, "destroyed_while_pending", NULL, 90); }
static void test_bad_input(void** state) { (void)state; run_ranks(2, "bad_input", NULL, 90); }

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "rank") == 0) return run_rank(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_input),   cmocka_unit_test(test_ping_pong), cmocka_unit_test(test_tag_order),
      cmocka_unit_test(test_any_source),  cmocka_unit_test(test_beside_collectives),
      cmocka_unit_test(test_split),       cmocka_unit_test(test_mismatch),  cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_peer_killed), cmocka_unit_test(test_aborted),
      cmocka_unit_test(test_destroyed_while_pending),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
