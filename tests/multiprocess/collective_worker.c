/* One rank of a multi-process test. Launched by test_multiprocess (and by
 * test_multihost_collectives on emulated hosts) with TF_CONFIG and
 * DIST_CLUSTER_TOKEN set; runs one scenario through the public C ABI and
 * exits 0 only if everything it checked held. Prints what failed. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "element_values.h"
#include "worker_support.h"

static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I8, DIST_DTYPE_U8, DIST_DTYPE_I32, DIST_DTYPE_U32, DIST_DTYPE_I64,
                                       DIST_DTYPE_U64, DIST_DTYPE_F16, DIST_DTYPE_BF16, DIST_DTYPE_F32, DIST_DTYPE_F64};
static const dist_op_t kOps[] = {DIST_OP_SUM, DIST_OP_PROD, DIST_OP_MIN, DIST_OP_MAX, DIST_OP_MEAN};

/* all_reduce, reduce (every root), reduce_scatter for one dtype/op/count. */
static void check_reductions(dist_comm_t* comm, int rank, int n, dist_dtype_t dtype, dist_op_t op, uint64_t count,
                             int in_place) {
  size_t es = dtype_size(dtype);
  char* send = malloc(es * (count * (uint64_t)n + 1));
  char* recv = malloc(es * (count * (uint64_t)n + 1));
  for (uint64_t i = 0; i < count * (uint64_t)n; ++i) store_value(send, i, dtype, input_value(rank, i, op));

  /* all_reduce */
  memcpy(recv, send, es * count);
  dist_buffer_t s = buffer_of(send, count, dtype), r = buffer_of(recv, count, dtype);
  dist_status_t st = dist_all_reduce(comm, in_place ? NULL : &s, &r, op, NULL);
  CHECK(st == DIST_OK, "all_reduce dtype %d op %d count %llu: %s", dtype, op, (unsigned long long)count, dist_last_error());
  for (uint64_t i = 0; st == DIST_OK && i < count; ++i) {
    double e = expected_reduction(n, i, op, dtype), g = load_value(recv, i, dtype);
    if (!values_match(g, e, op, dtype)) {
      CHECK(0, "all_reduce dtype %d op %d count %llu in_place %d: [%llu] = %g, expected %g", dtype, op,
            (unsigned long long)count, in_place, (unsigned long long)i, g, e);
      break;
    }
  }

  /* reduce to every root */
  for (int root = 0; root < n; ++root) {
    memcpy(recv, send, es * count);
    st = dist_reduce(comm, in_place ? NULL : &s, &r, op, root, NULL);
    CHECK(st == DIST_OK, "reduce root %d: %s", root, dist_last_error());
    for (uint64_t i = 0; st == DIST_OK && rank == root && i < count; ++i) {
      double e = expected_reduction(n, i, op, dtype), g = load_value(recv, i, dtype);
      if (!values_match(g, e, op, dtype)) {
        CHECK(0, "reduce root %d dtype %d op %d count %llu: [%llu] = %g, expected %g", root, dtype, op,
              (unsigned long long)count, (unsigned long long)i, g, e);
        break;
      }
    }
  }

  /* reduce_scatter: block `rank` of the reduction of n*count inputs */
  memcpy(recv, send, es * count * (uint64_t)n);
  dist_buffer_t s_all = buffer_of(send, count * (uint64_t)n, dtype);
  st = dist_reduce_scatter(comm, in_place ? NULL : &s_all, &r, op, NULL);
  CHECK(st == DIST_OK, "reduce_scatter: %s", dist_last_error());
  for (uint64_t i = 0; st == DIST_OK && i < count; ++i) {
    uint64_t global = (uint64_t)rank * count + i;
    double e = expected_reduction(n, global, op, dtype), g = load_value(recv, i, dtype);
    if (!values_match(g, e, op, dtype)) {
      CHECK(0, "reduce_scatter dtype %d op %d count %llu: [%llu] = %g, expected %g", dtype, op,
            (unsigned long long)count, (unsigned long long)i, g, e);
      break;
    }
  }
  free(send);
  free(recv);
}

/* broadcast (every root), all_gather, all_to_all: data movement, any dtype. */
static void check_movement(dist_comm_t* comm, int rank, int n, dist_dtype_t dtype, uint64_t count, int in_place) {
  size_t es = dtype_size(dtype);
  uint64_t total = count * (uint64_t)n;
  char* send = malloc(es * (total + 1));
  char* recv = malloc(es * (total + 1));
  for (int root = 0; root < n; ++root) {
    for (uint64_t i = 0; i < count; ++i) store_value(recv, i, dtype, rank == root ? input_value(root, i, DIST_OP_SUM) : 0);
    dist_buffer_t b = buffer_of(recv, count, dtype);
    dist_status_t st = dist_broadcast(comm, &b, root, NULL);
    CHECK(st == DIST_OK, "broadcast root %d: %s", root, dist_last_error());
    for (uint64_t i = 0; st == DIST_OK && i < count; ++i) {
      if (load_value(recv, i, dtype) != input_value(root, i, DIST_OP_SUM)) {
        CHECK(0, "broadcast root %d dtype %d count %llu: wrong [%llu]", root, dtype, (unsigned long long)count,
              (unsigned long long)i);
        break;
      }
    }
  }
  /* all_gather */
  for (uint64_t i = 0; i < count; ++i) store_value(send, i, dtype, input_value(rank, i, DIST_OP_SUM));
  memset(recv, 0, es * total);
  if (in_place) memcpy(recv + es * count * (uint64_t)rank, send, es * count);
  dist_buffer_t s = buffer_of(send, count, dtype), r = buffer_of(recv, total, dtype);
  dist_status_t st = dist_all_gather(comm, in_place ? NULL : &s, &r, NULL);
  CHECK(st == DIST_OK, "all_gather: %s", dist_last_error());
  for (uint64_t i = 0; st == DIST_OK && i < total; ++i) {
    if (load_value(recv, i, dtype) != input_value((int)(i / count), i % count, DIST_OP_SUM)) {
      CHECK(0, "all_gather dtype %d count %llu: wrong [%llu]", dtype, (unsigned long long)count, (unsigned long long)i);
      break;
    }
  }
  /* all_to_all: block j of rank i's send = value(i*n + j, k) */
  for (uint64_t i = 0; i < total; ++i) store_value(send, i, dtype, input_value(rank * n + (int)(i / count), i % count, DIST_OP_SUM));
  if (in_place) memcpy(recv, send, es * total);
  dist_buffer_t s2 = buffer_of(send, total, dtype);
  st = dist_all_to_all(comm, in_place ? NULL : &s2, &r, NULL);
  CHECK(st == DIST_OK, "all_to_all: %s", dist_last_error());
  for (uint64_t i = 0; st == DIST_OK && i < total; ++i) {
    int source = (int)(i / count);
    if (load_value(recv, i, dtype) != input_value(source * n + rank, i % count, DIST_OP_SUM)) {
      CHECK(0, "all_to_all dtype %d count %llu: wrong [%llu]", dtype, (unsigned long long)count, (unsigned long long)i);
      break;
    }
  }
  free(send);
  free(recv);
}

/* Every collective for `dtypes`, every op and count, then (big) several MiB;
 * DIST_TEST_EXPECT_PATH names the path the world must take (the multi-host
 * suites set it for their layout of hosts). */
static void scenario_matrix(dist_context_t* context, int big, const dist_dtype_t* dtypes, size_t dtype_count) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  /* The suite runs twice: on the shared-memory path (ranks on one host) and,
   * with DIST_SHM=0, on the point-to-point path. Make sure it is the one meant. */
  dist_comm_path_t path = -1;
  CHECK(dist_comm_path(world, &path) == DIST_OK, "dist_comm_path: %s", dist_last_error());
  const char* shm = getenv("DIST_SHM");
  const char* expect = getenv("DIST_TEST_EXPECT_PATH"); /* where ranks pose as several hosts */
  const dist_comm_path_t expected = n == 1 ? DIST_COMM_PATH_SELF
                                    : expect != NULL ? atoi(expect)
                                    : shm != NULL && strcmp(shm, "0") == 0 ? DIST_COMM_PATH_POINT_TO_POINT
                                                                           : DIST_COMM_PATH_SHARED_MEMORY;
  if (getenv("UCX_TLS") == NULL) CHECK(path == expected, "path %d, expected %d", path, expected);
  uint64_t counts[] = {0, 1, 7, (uint64_t)(n > 1 ? n - 1 : 0), (uint64_t)n + 1, 65537};
  for (size_t d = 0; d < dtype_count; ++d) {
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
      for (size_t o = 0; o < sizeof kOps / sizeof kOps[0]; ++o) {
        check_reductions(world, rank, n, dtypes[d], kOps[o], counts[c], 0);
      }
      check_reductions(world, rank, n, dtypes[d], DIST_OP_SUM, counts[c], 1);
      check_movement(world, rank, n, dtypes[d], counts[c], c % 2);
    }
  }
  if (big) {
    /* Several MiB, through the pipelined algorithms. */
    check_reductions(world, rank, n, DIST_DTYPE_F32, DIST_OP_SUM, (3u << 20) + 1, 0);
    check_reductions(world, rank, n, DIST_DTYPE_I32, DIST_OP_MAX, (1u << 20) + 3, 1);
    check_movement(world, rank, n, DIST_DTYPE_U8, (5u << 20) + 7, 0);
  }
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
}

/* Many requests in flight on one communicator complete, in call order. */
static void scenario_requests(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  enum { kRequests = 16, kCount = 1000 };
  static int32_t data[kRequests][kCount];
  dist_request_t* requests[kRequests];
  for (int k = 0; k < kRequests; ++k) {
    for (int i = 0; i < kCount; ++i) data[k][i] = rank * 1000 + k * 10 + i % 7;
    dist_buffer_t b = buffer_of(data[k], kCount, DIST_DTYPE_I32);
    dist_status_t st = k % 3 == 2 ? dist_broadcast(world, &b, k % n, &requests[k])
                                  : dist_all_reduce(world, NULL, &b, DIST_OP_SUM, &requests[k]);
    CHECK(st == DIST_OK, "submit %d: %s", k, dist_last_error());
  }
  /* A blocking call in between waits for the queued ones. */
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
  for (int k = kRequests - 1; k >= 0; --k) {
    int32_t done = 0;
    CHECK(dist_request_test(requests[k], &done) == DIST_OK && done == 1, "request %d done after the barrier", k);
    CHECK(dist_request_wait(requests[k], 10000) == DIST_OK, "wait %d: %s", k, dist_last_error());
    for (int i = 0; i < kCount; ++i) {
      int32_t expected = 0;
      if (k % 3 == 2) {
        expected = (k % n) * 1000 + k * 10 + i % 7;
      } else {
        for (int r = 0; r < n; ++r) expected += r * 1000 + k * 10 + i % 7;
      }
      if (data[k][i] != expected) {
        CHECK(0, "request %d [%d] = %d, expected %d", k, i, data[k][i], expected);
        break;
      }
    }
    dist_request_free(requests[k]);
  }
}

/* comm_split: color = rank % 2, ranked by key = -rank (reversed). */
/* All ranks on this one host: the host's view is the world's, and its
 * communicator from dist_comm_split_host holds every rank in world order. */
static void check_one_host_layout(dist_comm_t* world, int32_t rank, int32_t n) {
  int32_t local_rank = -1, local_size = -1, hosts = -1;
  CHECK(dist_comm_local_rank(world, &local_rank) == DIST_OK && local_rank == rank, "local rank %d, expected %d",
        local_rank, rank);
  CHECK(dist_comm_local_size(world, &local_size) == DIST_OK && local_size == n, "local size %d, expected %d",
        local_size, n);
  CHECK(dist_comm_num_hosts(world, &hosts) == DIST_OK && hosts == 1, "num hosts %d, expected 1", hosts);
  CHECK(dist_comm_local_rank(NULL, &local_rank) == DIST_ERR_INVALID_ARGUMENT, "local rank of NULL comm");
  CHECK(dist_comm_num_hosts(world, NULL) == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "num_hosts"),
        "num hosts into NULL: %s", dist_last_error());
  CHECK(dist_comm_split_host(world, NULL) == DIST_ERR_INVALID_ARGUMENT, "split host into NULL");
  dist_comm_t* host = NULL;
  CHECK(dist_comm_split_host(world, &host) == DIST_OK && host != NULL, "split host: %s", dist_last_error());
  if (host == NULL) return;
  int32_t host_rank = -1, host_size = -1;
  dist_comm_rank(host, &host_rank);
  dist_comm_size(host, &host_size);
  CHECK(host_rank == rank && host_size == n, "host comm rank %d size %d, expected %d of %d", host_rank, host_size,
        rank, n);
  int64_t value = rank + 1;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I64);
  CHECK(dist_all_reduce(host, NULL, &b, DIST_OP_SUM, NULL) == DIST_OK && value == (int64_t)n * (n + 1) / 2,
        "host comm all_reduce = %lld: %s", (long long)value, dist_last_error());
  dist_comm_destroy(host);
}

static void scenario_split(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  dist_comm_t* half = NULL;
  CHECK(dist_comm_split(world, rank % 2, -rank, &half) == DIST_OK, "split: %s", dist_last_error());
  int32_t sub_rank = -1, sub_size = -1;
  dist_comm_rank(half, &sub_rank);
  dist_comm_size(half, &sub_size);
  int32_t members = (n + 1 - rank % 2) / 2;
  CHECK(sub_size == members, "split size %d, expected %d", sub_size, members);
  /* Reversed by key: the highest world rank of the color is sub-rank 0. */
  int32_t higher = 0;
  for (int r = rank + 1; r < n; ++r) higher += (r % 2 == rank % 2);
  CHECK(sub_rank == higher, "split rank %d, expected %d", sub_rank, higher);
  int64_t value = rank, sum = 0;
  for (int r = rank % 2; r < n; r += 2) sum += r;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I64);
  CHECK(dist_all_reduce(half, NULL, &b, DIST_OP_SUM, NULL) == DIST_OK, "sub all_reduce: %s", dist_last_error());
  CHECK(value == sum, "sub all_reduce = %lld, expected %lld", (long long)value, (long long)sum);
  /* A negative color joins no communicator. */
  dist_comm_t* none = (dist_comm_t*)1;
  CHECK(dist_comm_split(world, rank == 0 ? -1 : 0, 0, &none) == DIST_OK, "split2: %s", dist_last_error());
  CHECK((rank == 0) == (none == NULL), "negative color gives NULL");
  /* The world still works after splits, and both at once from two threads is covered by the requests scenario. */
  int64_t one = 1;
  dist_buffer_t b1 = buffer_of(&one, 1, DIST_DTYPE_I64);
  CHECK(dist_all_reduce(world, NULL, &b1, DIST_OP_SUM, NULL) == DIST_OK && one == n, "world after split");
  dist_comm_destroy(none);
  dist_comm_destroy(half);
  check_one_host_layout(world, rank, n);
}

/* Ranks disagree: every rank must fail with MISMATCH naming both calls. */
static void scenario_mismatch(dist_context_t* context, const char* how) {
  int32_t rank = 0;
  dist_comm_t* world = world_of(context, &rank, NULL);
  float data[64] = {0};
  dist_buffer_t b = buffer_of(data, rank == 0 ? 32 : 64, DIST_DTYPE_F32);
  dist_status_t st;
  if (strcmp(how, "count") == 0) {
    st = dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  } else if (strcmp(how, "op") == 0) {
    b.count = 64;
    st = dist_all_reduce(world, NULL, &b, rank == 0 ? DIST_OP_MAX : DIST_OP_SUM, NULL);
  } else if (strcmp(how, "dtype") == 0) {
    b.count = 32;
    b.dtype = rank == 0 ? DIST_DTYPE_I32 : DIST_DTYPE_F32;
    st = dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  } else if (strcmp(how, "root") == 0) {
    b.count = 64;
    st = dist_broadcast(world, &b, rank == 0 ? 0 : 1, NULL);
  } else { /* kind */
    b.count = 64;
    st = rank == 0 ? dist_broadcast(world, &b, 0, NULL) : dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  }
  printf("status %s: %s\n", dist_status_string(st), dist_last_error());
  if (st == DIST_OK) {
    /* A rank that only sent (a broadcast root) learns of
     * the disagreement at its next call on the communicator. */
    st = dist_barrier(world, NULL);
    printf("next call: %s: %s\n", dist_status_string(st), dist_last_error());
  }
  CHECK(st == DIST_ERR_MISMATCH, "expected DIST_ERR_MISMATCH, got %s: %s", dist_status_string(st), dist_last_error());
  CHECK(strstr(dist_last_error(), " but ") != NULL || strstr(dist_last_error(), "sent ") != NULL,
        "message names both sides: %s", dist_last_error());
  if (strcmp(how, "dtype") == 0) {
    CHECK(strstr(dist_last_error(), "i32") != NULL && strstr(dist_last_error(), "f32") != NULL,
          "message names both dtypes: %s", dist_last_error());
  }
  /* The communicator stays failed. */
  CHECK(dist_barrier(world, NULL) == DIST_ERR_MISMATCH, "later calls fail too");
}

/* The victim dies mid-way; survivors must fail, not hang. */
static void* kill_self_later(void* arg) {
  (void)arg;
  usleep(200 * 1000);
  raise(SIGKILL);
  return NULL;
}

/* The victim dies between two calls, or with `during` in the middle of one:
 * a thread kills it while the others and it move 16 MiB each call. */
static void scenario_kill(dist_context_t* context, int victim, int during) {
  int32_t rank = 0;
  dist_comm_t* world = world_of(context, &rank, NULL);
  enum { kCount = 4 << 20 };
  float* data = calloc(kCount, sizeof(float));
  dist_buffer_t b = buffer_of(data, kCount, DIST_DTYPE_F32);
  CHECK(dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL) == DIST_OK, "first all_reduce: %s", dist_last_error());
  if (rank == victim) {
    if (during) {
      pthread_t killer;
      pthread_create(&killer, NULL, kill_self_later, NULL);
    } else {
      usleep(500 * 1000); /* let the others finish the first call */
      raise(SIGKILL);
    }
  }
  double start = now_seconds();
  dist_status_t st = DIST_OK;
  const int calls = during ? 1000 : 20; /* during: more than run before the victim dies */
  for (int i = 0; i < calls && st == DIST_OK; ++i) st = dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  double elapsed = now_seconds() - start;
  printf("status %s after %.2f s: %s\n", dist_status_string(st), elapsed, dist_last_error());
  CHECK(st == DIST_ERR_PEER_FAILED || st == DIST_ERR_TIMEOUT, "expected a peer failure, got %s",
        dist_status_string(st));
  CHECK(elapsed < 10.0, "noticed the dead peer after %.2f s", elapsed);
  free(data);
}

struct abort_args {
  dist_context_t* context;
};

static void* abort_later(void* arg) {
  struct abort_args* a = arg;
  usleep(300 * 1000);
  dist_context_abort(a->context, "test abort");
  return NULL;
}

/* Rank 0 aborts from another thread while it and the others wait for the last
 * rank, which comes late: every rank's call must fail with DIST_ERR_ABORTED. */
static void scenario_abort(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  pthread_t thread;
  struct abort_args args = {context};
  if (rank == 0) pthread_create(&thread, NULL, abort_later, &args);
  if (rank == n - 1) usleep(2000 * 1000);
  int64_t value = 1;
  dist_buffer_t b = buffer_of(&value, 1, DIST_DTYPE_I64);
  double start = now_seconds();
  dist_status_t st = dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  if (rank == 0) pthread_join(thread, NULL);
  printf("status %s after %.2f s: %s\n", dist_status_string(st), now_seconds() - start, dist_last_error());
  CHECK(st == DIST_ERR_ABORTED, "expected DIST_ERR_ABORTED, got %s", dist_status_string(st));
  CHECK(strstr(dist_last_error(), "test abort") != NULL, "the reason travels: %s", dist_last_error());
}

/* The row of `stats` (count rows) for `collective`, or NULL. */
static const dist_comm_stat_t* stat_of(const dist_comm_stat_t* stats, uint64_t count, dist_collective_t collective) {
  for (uint64_t i = 0; i < count; ++i) {
    if (stats[i].collective == collective) return &stats[i];
  }
  return NULL;
}

/* The row for `collective` holds exactly these counts, on `path` by the
 * algorithm dist_comm_algorithm names for `bytes` per call. */
static void expect_stat(dist_comm_t* comm, const dist_comm_stat_t* stats, uint64_t count, dist_collective_t collective,
                        uint64_t calls, uint64_t failed, uint64_t bytes, int timed) {
  const dist_comm_stat_t* row = stat_of(stats, count, collective);
  CHECK(row != NULL, "no counters for collective %d", collective);
  if (row == NULL) return;
  dist_comm_path_t path = -1;
  const char* algorithm = NULL;
  CHECK(dist_comm_path(comm, &path) == DIST_OK &&
            dist_comm_algorithm(comm, collective, calls == 0 ? 0 : bytes / calls, &algorithm) == DIST_OK,
        "path and algorithm: %s", dist_last_error());
  int32_t n = 0;
  dist_comm_size(comm, &n);
  /* A forced ring leaves shared memory for messages; one rank is "self". */
  const int forced_ring = algorithm != NULL && strcmp(algorithm, "ring") == 0;
  CHECK(row->path == (forced_ring && path != DIST_COMM_PATH_SELF ? DIST_COMM_PATH_POINT_TO_POINT : path),
        "collective %d: path %d, expected %d", collective, row->path, path);
  CHECK(algorithm != NULL && row->algorithm != NULL && strcmp(row->algorithm, algorithm) == 0,
        "collective %d: algorithm %s, expected %s", collective, row->algorithm, algorithm);
  CHECK(row->calls == calls && row->failed == failed && row->bytes == bytes,
        "collective %d: calls %llu failed %llu bytes %llu, expected %llu %llu %llu", collective,
        (unsigned long long)row->calls, (unsigned long long)row->failed, (unsigned long long)row->bytes,
        (unsigned long long)calls, (unsigned long long)failed, (unsigned long long)bytes);
  CHECK(timed ? row->timed_calls == calls && row->time_ns > 0 : row->timed_calls == 0 && row->time_ns == 0,
        "collective %d: %llu timed calls in %llu ns (timing %s)", collective, (unsigned long long)row->timed_calls,
        (unsigned long long)row->time_ns, timed ? "on" : "off");
  for (int i = 0; i < 4; ++i) CHECK(row->reserved[i] == 0, "reserved[%d] = %llu", i, (unsigned long long)row->reserved[i]);
}

/* dist_comm_stats counts each collective's calls, failures, bytes and (when
 * timing is on) time, on the path and algorithm that ran them. */
static void scenario_stats(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  dist_comm_stat_t stats[16];
  uint64_t count = 99;
  CHECK(dist_comm_stats(world, NULL, 0, &count) == DIST_OK && count == 0,
        "a new communicator has no counters: %llu rows (%s)", (unsigned long long)count, dist_last_error());
  CHECK(dist_comm_stats(world, stats, 16, NULL) == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "count"),
        "count NULL: %s", dist_last_error());
  CHECK(dist_comm_stats(world, NULL, 3, &count) == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "stats"),
        "stats NULL with capacity 3: %s", dist_last_error());
  CHECK(dist_comm_stats(NULL, stats, 16, &count) == DIST_ERR_INVALID_ARGUMENT, "comm NULL: %s", dist_last_error());

  float values[1000];
  for (int i = 0; i < 1000; ++i) values[i] = (float)(rank + i);
  dist_buffer_t all = buffer_of(values, 1000, DIST_DTYPE_F32);
  for (int i = 0; i < 3; ++i) CHECK(dist_all_reduce(world, NULL, &all, DIST_OP_SUM, NULL) == DIST_OK, "all_reduce: %s", dist_last_error());
  int32_t ten[10] = {0};
  dist_buffer_t some = buffer_of(ten, 10, DIST_DTYPE_I32);
  for (int i = 0; i < 2; ++i) CHECK(dist_broadcast(world, &some, 0, NULL) == DIST_OK, "broadcast: %s", dist_last_error());
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
  double mine[5] = {1, 2, 3, 4, 5}, gathered[5 * 4];
  dist_buffer_t block = buffer_of(mine, 5, DIST_DTYPE_F64), everything = buffer_of(gathered, 5 * (uint64_t)n, DIST_DTYPE_F64);
  CHECK(dist_all_gather(world, &block, &everything, NULL) == DIST_OK, "all_gather: %s", dist_last_error());
  /* all_to_all_v: rank r sends r+1 elements to each peer. */
  uint64_t send_counts[4], send_offsets[4], recv_counts[4], recv_offsets[4];
  int64_t out[4 * 4] = {0}, in[4 * 4] = {0};
  for (int p = 0; p < n; ++p) {
    send_counts[p] = (uint64_t)rank + 1;
    send_offsets[p] = (uint64_t)p * 4;
    recv_counts[p] = (uint64_t)p + 1;
    recv_offsets[p] = (uint64_t)p * 4;
  }
  dist_buffer_t out_buffer = buffer_of(out, 4 * (uint64_t)n, DIST_DTYPE_I64), in_buffer = buffer_of(in, 4 * (uint64_t)n, DIST_DTYPE_I64);
  CHECK(dist_all_to_all_v(world, &out_buffer, send_counts, send_offsets, &in_buffer, recv_counts, recv_offsets, NULL) == DIST_OK,
        "all_to_all_v: %s", dist_last_error());

  CHECK(dist_comm_stats(world, stats, 16, &count) == DIST_OK && count == 5, "5 rows, got %llu: %s",
        (unsigned long long)count, dist_last_error());
  CHECK(stats[0].collective == DIST_COLLECTIVE_ALL_REDUCE && stats[4].collective == DIST_COLLECTIVE_ALL_TO_ALL_V,
        "rows in the order they first ran: %d ... %d", stats[0].collective, stats[4].collective);
  expect_stat(world, stats, count, DIST_COLLECTIVE_ALL_REDUCE, 3, 0, 3 * 4000, 0);
  expect_stat(world, stats, count, DIST_COLLECTIVE_BROADCAST, 2, 0, 2 * 40, 0);
  expect_stat(world, stats, count, DIST_COLLECTIVE_BARRIER, 1, 0, 0, 0);
  expect_stat(world, stats, count, DIST_COLLECTIVE_ALL_GATHER, 1, 0, 40, 0);
  const dist_comm_stat_t* v = stat_of(stats, count, DIST_COLLECTIVE_ALL_TO_ALL_V);
  CHECK(v != NULL && v->calls == 1 && v->bytes == (uint64_t)n * ((uint64_t)rank + 1) * 8,
        "all_to_all_v counts every block it sends: %llu bytes", v == NULL ? 0ull : (unsigned long long)v->bytes);

  /* A short array gets the first rows and the number there are. */
  dist_comm_stat_t one[2];
  memset(one, 0xab, sizeof one);
  CHECK(dist_comm_stats(world, one, 1, &count) == DIST_OK && count == 5 && one[0].collective == DIST_COLLECTIVE_ALL_REDUCE &&
            one[1].calls == 0xababababababababull,
        "capacity 1: %llu rows, the second untouched", (unsigned long long)count);

  /* Timing, a reset, and a forced algorithm's own row. */
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_TIMING;
  options.timing = 2;
  CHECK(dist_comm_configure(world, &options) == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "timing 2"),
        "timing 2 is refused: %s", dist_last_error());
  options.timing = 1;
  CHECK(dist_comm_configure(world, &options) == DIST_OK && dist_comm_stats_reset(world) == DIST_OK,
        "timing on and reset: %s", dist_last_error());
  CHECK(dist_comm_stats(world, stats, 16, &count) == DIST_OK && count == 0, "after a reset: %llu rows", (unsigned long long)count);
  for (int i = 0; i < 2; ++i) CHECK(dist_all_reduce(world, NULL, &all, DIST_OP_MAX, NULL) == DIST_OK, "all_reduce: %s", dist_last_error());
  CHECK(dist_comm_stats(world, stats, 16, &count) == DIST_OK && count == 1, "1 row, got %llu", (unsigned long long)count);
  expect_stat(world, stats, count, DIST_COLLECTIVE_ALL_REDUCE, 2, 0, 2 * 4000, 1);
  options.field_mask = DIST_COMM_OPT_ALLREDUCE | DIST_COMM_OPT_TIMING;
  options.allreduce = DIST_ALLREDUCE_RING;
  options.timing = 0;
  CHECK(dist_comm_configure(world, &options) == DIST_OK && dist_comm_stats_reset(world) == DIST_OK, "ring: %s", dist_last_error());
  CHECK(dist_all_reduce(world, NULL, &all, DIST_OP_SUM, NULL) == DIST_OK, "ring all_reduce: %s", dist_last_error());
  CHECK(dist_comm_stats(world, stats, 16, &count) == DIST_OK && count == 1, "1 row, got %llu", (unsigned long long)count);
  expect_stat(world, stats, count, DIST_COLLECTIVE_ALL_REDUCE, 1, 0, 4000, 0);

  /* A call that fails in its algorithm counts as failed; one refused for its
   * arguments does not count. */
  CHECK(dist_comm_stats_reset(world) == DIST_OK, "reset: %s", dist_last_error());
  dist_buffer_t bad = buffer_of(values, 10, DIST_DTYPE_F32);
  CHECK(dist_all_reduce(world, NULL, &bad, 99, NULL) == DIST_ERR_INVALID_ARGUMENT, "op 99: %s", dist_last_error());
  CHECK(dist_comm_stats(world, stats, 16, &count) == DIST_OK && count == 0, "a refused call is not counted: %llu rows",
        (unsigned long long)count);
  if (n > 1) {
    /* On a communicator of its own, as its first call: a failure may reach a
     * rank still finishing an earlier call on the same communicator. */
    dist_comm_t* fresh = NULL;
    CHECK(dist_comm_split(world, 0, rank, &fresh) == DIST_OK, "split: %s", dist_last_error());
    bad.count = rank == 0 ? 10 : 20;
    CHECK(fresh != NULL && dist_all_reduce(fresh, NULL, &bad, DIST_OP_SUM, NULL) == DIST_ERR_MISMATCH,
          "a count mismatch: %s", dist_last_error());
    CHECK(dist_comm_stats(fresh, stats, 16, &count) == DIST_OK && count == 1 && stats[0].calls == 1 && stats[0].failed == 1,
          "the mismatch counts as one failed call: %llu rows, %llu calls, %llu failed", (unsigned long long)count,
          (unsigned long long)stats[0].calls, (unsigned long long)stats[0].failed);
    dist_comm_destroy(fresh);
  }
  CHECK(dist_comm_stats_reset(NULL) == DIST_ERR_INVALID_ARGUMENT, "reset NULL: %s", dist_last_error());
}

/* A known sequence of calls for the timeline suite (test_timeline): 4
 * all-reduces of 1000 f32, one of 4 Mi f32 (large enough to reduce in
 * traced pieces, and long enough, well over the millisecond from which a
 * call's phases get spans of their own, on any machine: 1 Mi f32 took less
 * here once the copies got faster), 2 broadcasts of 10 i32 from rank 0, a
 * barrier. */
enum { kTimelineLargeCount = 1 << 22 };
static void scenario_timeline(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  static float values[kTimelineLargeCount];
  for (int i = 0; i < kTimelineLargeCount; ++i) values[i] = (float)(rank + 1);
  dist_buffer_t small = buffer_of(values, 1000, DIST_DTYPE_F32), large = buffer_of(values, kTimelineLargeCount, DIST_DTYPE_F32);
  for (int i = 0; i < 4; ++i) CHECK(dist_all_reduce(world, NULL, &small, DIST_OP_SUM, NULL) == DIST_OK, "all_reduce: %s", dist_last_error());
  for (int i = 0; i < 1000; ++i) values[i] = (float)(rank + 1);
  CHECK(dist_all_reduce(world, NULL, &large, DIST_OP_SUM, NULL) == DIST_OK, "large all_reduce: %s", dist_last_error());
  CHECK(values[kTimelineLargeCount - 1] == (float)(n * (n + 1) / 2), "large all_reduce: %g", values[kTimelineLargeCount - 1]);
  int32_t ten[10] = {0};
  dist_buffer_t some = buffer_of(ten, 10, DIST_DTYPE_I32);
  for (int i = 0; i < 2; ++i) CHECK(dist_broadcast(world, &some, 0, NULL) == DIST_OK, "broadcast: %s", dist_last_error());
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
}

/* ---- deterministic reductions ------------------------------------------------ */

static uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Rank r's element i: exact in its dtype, with exponents far enough apart
 * that sums round (half and bfloat16 values positive and normal, so that
 * their f32 sums stay normal; products near 1). */
static double det_input(int rank, uint64_t i, dist_dtype_t dtype, dist_op_t op) {
  const uint64_t h = mix64(((uint64_t)rank << 40) ^ i ^ ((uint64_t)dtype << 56) ^ ((uint64_t)op << 60));
  const double unit = (double)(h >> 11) * 0x1p-53; /* [0, 1) */
  if (op == DIST_OP_PROD) {
    if (dtype == DIST_DTYPE_F16) return 1.0 + (double)(h % 1024) * 0x1p-10;
    if (dtype == DIST_DTYPE_BF16) return 1.0 + (double)(h % 128) * 0x1p-7;
    return 1.0 + unit * 0x1p-6;
  }
  const int exponent = (int)(h % 17) - 8;
  if (dtype == DIST_DTYPE_F16) return ldexp(1024.0 + (double)(h % 1024), exponent - 10);
  if (dtype == DIST_DTYPE_BF16) return ldexp(128.0 + (double)(h % 128), exponent - 7);
  const double signed_unit = (h & 1) ? -unit : unit;
  return dtype == DIST_DTYPE_F32 ? (double)(float)ldexp(signed_unit, 2 * exponent) : ldexp(signed_unit, 2 * exponent);
}

/* float -> binary16 and bfloat16, rounding to nearest even (normal values). */
static uint16_t half_rne(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  int exponent = (int)((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = (bits & 0x7FFFFFu) >> 13;
  const uint32_t rest = bits & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (mantissa & 1u))) mantissa++;
  if (mantissa == 0x400u) {
    mantissa = 0;
    exponent++;
  }
  return (uint16_t)(sign | ((uint32_t)exponent << 10) | mantissa);
}

static uint16_t bf16_rne(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

/* The in-order result's bits for element i: rank 0's value, then 1's, ...,
 * combined in the dtype's accumulator (f32 for half and bfloat16, rounded
 * once), a MEAN divided after. */
static void det_expected(int n, uint64_t i, dist_dtype_t dtype, dist_op_t op, void* out) {
  if (dtype == DIST_DTYPE_F64) {
    double acc = det_input(0, i, dtype, op);
    for (int r = 1; r < n; ++r) acc = op == DIST_OP_PROD ? acc * det_input(r, i, dtype, op) : acc + det_input(r, i, dtype, op);
    if (op == DIST_OP_MEAN) acc = acc / (double)n;
    memcpy(out, &acc, 8);
    return;
  }
  float acc = (float)det_input(0, i, dtype, op);
  for (int r = 1; r < n; ++r) {
    const float x = (float)det_input(r, i, dtype, op);
    acc = op == DIST_OP_PROD ? acc * x : acc + x;
  }
  if (dtype == DIST_DTYPE_F32) {
    if (op == DIST_OP_MEAN) acc = acc / (float)n;
    memcpy(out, &acc, 4);
    return;
  }
  uint16_t bits = dtype == DIST_DTYPE_F16 ? half_rne(acc) : bf16_rne(acc);
  if (op == DIST_OP_MEAN) {
    const float sum = dtype == DIST_DTYPE_F16 ? (float)half_to_double(bits) : (float)bf16_to_double(bits);
    bits = dtype == DIST_DTYPE_F16 ? half_rne(sum / (float)n) : bf16_rne(sum / (float)n);
  }
  memcpy(out, &bits, 2);
}

static uint64_t fnv(uint64_t hash, const void* data, size_t bytes) {
  const unsigned char* p = data;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001B3ull;
  return hash;
}

/* Every float dtype and ordered op, all_reduce, reduce (root n-1) and
 * reduce_scatter, counts 0, 1, 7, 1000 and 65537: with DIST_DETERMINISTIC=1
 * each result must have the in-order bits; either way the rank prints a hash
 * of everything it got, which the suite compares across paths. */
static void scenario_deterministic(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  const char* mode = getenv("DIST_DETERMINISTIC");
  const int ordered = mode != NULL && strcmp(mode, "1") == 0;
  const dist_dtype_t dtypes[] = {DIST_DTYPE_F16, DIST_DTYPE_BF16, DIST_DTYPE_F32, DIST_DTYPE_F64};
  const dist_op_t ops[] = {DIST_OP_SUM, DIST_OP_PROD, DIST_OP_MEAN};
  const uint64_t counts[] = {0, 1, 7, 1000, 65537};
  uint64_t hash = 0xCBF29CE484222325ull;
  size_t mismatches = 0;
  for (size_t d = 0; d < 4; ++d) {
    for (size_t o = 0; o < 3; ++o) {
      for (size_t c = 0; c < 5; ++c) {
        const dist_dtype_t dtype = dtypes[d];
        const dist_op_t op = ops[o];
        const uint64_t count = counts[c];
        const size_t es = dtype_size(dtype);
        const uint64_t total = count * (uint64_t)n;
        unsigned char* send = malloc(es * (total + 1));
        unsigned char* recv = malloc(es * (total + 1));
        unsigned char expected[8];
        for (uint64_t i = 0; i < total; ++i) store_value(send, i, dtype, det_input(rank, i, dtype, op));
        dist_buffer_t s = buffer_of(send, count, dtype), r = buffer_of(recv, count, dtype);
        dist_buffer_t s_all = buffer_of(send, total, dtype);
        for (int kind = 0; kind < 3; ++kind) {
          dist_status_t st;
          uint64_t first = 0; /* the inputs' index of the result's element 0 */
          int has_result = 1;
          if (kind == 0) {
            st = dist_all_reduce(world, &s, &r, op, NULL);
          } else if (kind == 1) {
            st = dist_reduce(world, &s, &r, op, n - 1, NULL);
            has_result = rank == n - 1;
          } else {
            st = dist_reduce_scatter(world, &s_all, &r, op, NULL);
            first = (uint64_t)rank * count;
          }
          CHECK(st == DIST_OK, "dtype %d op %d count %llu kind %d: %s", dtype, op, (unsigned long long)count, kind,
                dist_last_error());
          if (st != DIST_OK || !has_result) continue;
          hash = fnv(hash, recv, es * count);
          for (uint64_t i = 0; ordered && i < count; ++i) {
            det_expected(n, first + i, dtype, op, expected);
            if (memcmp(recv + i * es, expected, es) != 0 && mismatches++ < 5) {
              CHECK(0, "dtype %d op %d count %llu kind %d: element %llu has other bits than the in-order result", dtype,
                    op, (unsigned long long)count, kind, (unsigned long long)i);
            }
          }
        }
        free(send);
        free(recv);
      }
    }
  }
  CHECK(mismatches == 0, "%zu elements differ from the in-order result", mismatches);
  printf("deterministic bits %016llx\n", (unsigned long long)hash);
  fflush(stdout);
}

/* Sleeps the whole time, also when a signal (a flight-recorder dump) comes. */
static void sleep_fully(int seconds) {
  struct timespec left = {seconds, 0};
  while (nanosleep(&left, &left) != 0) {
  }
}

/* A rank held back on purpose (the last): first for less than the deadline,
 * which the others report as a stall and then complete, then for longer,
 * which fails the call on every rank naming it. The suite reads the warnings
 * in the ranks' output. */
static void scenario_stall(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_TIMEOUT_MS | DIST_COMM_OPT_STALL_WARNING_MS;
  options.timeout_ms = 5000;
  options.stall_warning_ms = -1;
  CHECK(dist_comm_configure(world, &options) == DIST_ERR_INVALID_ARGUMENT && strstr(dist_last_error(), "stall_warning_ms -1"),
        "a negative stall warning is refused: %s", dist_last_error());
  options.stall_warning_ms = 1000;
  CHECK(dist_comm_configure(world, &options) == DIST_OK, "configure: %s", dist_last_error());
  const int late = n - 1;
  float x = 1;
  dist_buffer_t b = buffer_of(&x, 1, DIST_DTYPE_F32);
  CHECK(dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL) == DIST_OK, "call 0: %s", dist_last_error());
  if (rank == late) sleep_fully(3);
  x = 1;
  CHECK(dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL) == DIST_OK && x == (float)n, "call 1 after a stall: %s",
        dist_last_error());
  if (rank == late) sleep_fully(8);
  const dist_status_t st = dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  printf("call 2: %s: %s\n", dist_status_string(st), dist_last_error());
  fflush(stdout);
  char late_name[64];
  snprintf(late_name, sizeof late_name, "worker:%d is between calls (done with #", late);
  CHECK(st == DIST_ERR_TIMEOUT || st == DIST_ERR_PEER_FAILED, "call 2 fails: %s", dist_status_string(st));
  CHECK(strstr(dist_last_error(), late_name) != NULL, "call 2's error names %s: %s", late_name, dist_last_error());
}

/* The communicator took the expected path, and an all-reduce works on it. */
static void scenario_path(dist_context_t* context, int expected) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  dist_comm_path_t path = -1;
  CHECK(dist_comm_path(world, &path) == DIST_OK, "dist_comm_path: %s", dist_last_error());
  CHECK(path == expected, "path %d, expected %d", path, expected);
  /* The algorithm each call would run follows the path, the size and forcing. */
  const char* small = NULL;
  const char* large = NULL;
  const char* movement = NULL;
  CHECK(dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_REDUCE, 8, &small) == DIST_OK &&
            dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_REDUCE, 64 << 20, &large) == DIST_OK &&
            dist_comm_algorithm(world, DIST_COLLECTIVE_BROADCAST, 8 << 20, &movement) == DIST_OK,
        "dist_comm_algorithm: %s", dist_last_error());
  if (path == DIST_COMM_PATH_SHARED_MEMORY) {
    CHECK(strcmp(small, "shm_direct") == 0 && strcmp(large, "shm_split") == 0 && strcmp(movement, "shm") == 0,
          "shared-memory algorithms: %s %s %s", small, large, movement);
  } else if (path == DIST_COMM_PATH_HIERARCHICAL) {
    /* This rank's host alone: one segment, or one rank. */
    dist_comm_t* host = NULL;
    dist_comm_path_t host_path = -1;
    int32_t local_size = 0;
    CHECK(dist_comm_split_host(world, &host) == DIST_OK && dist_comm_path(host, &host_path) == DIST_OK &&
              dist_comm_local_size(world, &local_size) == DIST_OK,
          "split_host: %s", dist_last_error());
    CHECK(host_path == (local_size > 1 ? DIST_COMM_PATH_SHARED_MEMORY : DIST_COMM_PATH_SELF), "host path %d", host_path);
    int32_t host_rank = -1;
    if (host != NULL && dist_comm_rank(host, &host_rank) == DIST_OK) {
      check_reductions(host, host_rank, local_size, DIST_DTYPE_I32, DIST_OP_SUM, 1001, 0);
    }
    /* Whether the host's ranks reach each other's memory: its all-gathers of
     * 1 MiB blocks then read the peers' buffers. */
    const char* host_gather = "";
    if (host != NULL && local_size > 1) {
      CHECK(dist_comm_algorithm(host, DIST_COLLECTIVE_ALL_GATHER, 1 << 20, &host_gather) == DIST_OK,
            "host all-gather algorithm: %s", dist_last_error());
    }
    const int single_copy = strcmp(host_gather, "shm_single_copy") == 0;
    /* Rails where every host runs as many ranks (DIST_TEST_EVEN_HOSTS=1),
     * streamed between two hosts whose ranks reach each other's memory, else
     * leaders. */
    const char* even = getenv("DIST_TEST_EVEN_HOSTS");
    const int rails = even != NULL && strcmp(even, "1") == 0;
    const int two_hosts = local_size > 0 && n / local_size == 2;
    const char* expected_large = !rails                      ? "hier_allreduce_leaders"
                                 : two_hosts && single_copy ? "hier_allreduce_streamed"
                                                            : "hier_allreduce_rails";
    CHECK(strcmp(small, "hier_allreduce_leaders") == 0 && strcmp(large, expected_large) == 0 &&
              strcmp(movement, rails ? "hier_broadcast_rails" : "hier_broadcast_leaders") == 0,
          "hierarchical algorithms: %s %s %s (expected %s for the large all-reduce)", small, large, movement,
          expected_large);
    dist_comm_destroy(host);
  } else {
    CHECK(strcmp(small, "recursive_doubling") == 0 && strncmp(movement, "broadcast_", 10) == 0,
          "point-to-point algorithms: %s %s", small, movement);
  }
  CHECK(dist_comm_algorithm(world, 99, 8, &small) == DIST_ERR_INVALID_ARGUMENT &&
            strstr(dist_last_error(), "collective 99") != NULL,
        "a bad collective is refused: %s", dist_last_error());
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_ALLREDUCE;
  options.allreduce = DIST_ALLREDUCE_RING;
  CHECK(dist_comm_configure(world, &options) == DIST_OK &&
            dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_REDUCE, 8, &small) == DIST_OK && strcmp(small, "ring") == 0,
        "forced ring: %s", small);
  options.allreduce = DIST_ALLREDUCE_HIERARCHICAL;
  const dist_status_t hier = dist_comm_configure(world, &options);
  CHECK(path == DIST_COMM_PATH_HIERARCHICAL ? hier == DIST_OK : hier == DIST_ERR_UNSUPPORTED,
        "forcing the hierarchical all-reduce on path %d: %s", path, dist_last_error());
  if (hier == DIST_OK) check_reductions(world, rank, n, DIST_DTYPE_F32, DIST_OP_MEAN, 70001, 1);
  options.allreduce = DIST_ALLREDUCE_RING;
  CHECK(dist_comm_configure(world, &options) == DIST_OK, "forcing the ring again: %s", dist_last_error());
  options.allreduce = DIST_ALLREDUCE_SHARED_MEMORY;
  const dist_status_t st = dist_comm_configure(world, &options);
  if (path == DIST_COMM_PATH_SHARED_MEMORY) {
    CHECK(st == DIST_OK, "forcing the shared-memory all-reduce: %s", dist_last_error());
  } else {
    CHECK(st == DIST_ERR_UNSUPPORTED && strstr(dist_last_error(), "shared memory") != NULL,
          "forcing the shared-memory all-reduce without it: %s", dist_last_error());
  }
  check_reductions(world, rank, n, DIST_DTYPE_F64, DIST_OP_SUM, 100003, 0);
}

/* Broadcasts from every root, all-gathers and all-to-alls of large blocks,
 * in and out of place, after printing the algorithms the communicator chose
 * for them ("shm_single_copy" only when every rank can read every other's
 * memory and none turned it off; for a broadcast, only with a core for every
 * rank too). */
static void scenario_single_copy(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  const char* gather = NULL;
  const char* exchange = NULL;
  const char* broadcast = NULL;
  CHECK(dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_GATHER, 1 << 20, &gather) == DIST_OK &&
            dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_TO_ALL, 1 << 20, &exchange) == DIST_OK &&
            dist_comm_algorithm(world, DIST_COLLECTIVE_BROADCAST, 1 << 20, &broadcast) == DIST_OK,
        "dist_comm_algorithm: %s", dist_last_error());
  printf("algorithms %s %s %s\n", gather, exchange, broadcast);
  for (int in_place = 0; in_place <= 1; ++in_place) {
    check_movement(world, rank, n, DIST_DTYPE_F64, 65537, in_place);
    check_movement(world, rank, n, DIST_DTYPE_U8, (5u << 20) + 7, in_place);
  }
  /* Blocks beyond 16 MiB: an all-to-all with a core for every rank still
   * reads them singly, an all-gather goes through the slots. */
  check_movement(world, rank, n, DIST_DTYPE_U8, (17u << 20) + 3, 0);
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
}

/* Out-of-place all-reduces of sizes where the communicator learns between
 * two algorithms (it names shm_split_single_copy for them): rank 0 decides
 * for every rank, call by call, so every call must give the exact result
 * whichever ran and leave the input alone, and over the calls of a size both
 * must run (the first six of a size alternate). Prints "learned SPLIT
 * READ_WRITE", the calls each ran on this rank, which every rank must print
 * alike; or "learned not here (ALGORITHM)" where the split's single copy is
 * not taken (no single copies here, more ranks than cores). */
static void scenario_learned(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  const char* algorithm = NULL;
  CHECK(dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_REDUCE, 1 << 20, &algorithm) == DIST_OK, "algorithm: %s",
        dist_last_error());
  if (algorithm == NULL || strcmp(algorithm, "shm_split_single_copy") != 0) {
    printf("learned not here (%s)\n", algorithm != NULL ? algorithm : "none");
    return;
  }
  /* f32 sums of 256 KiB + 12 bytes and 1 MiB + 4 bytes; f64 means of 1 MiB + 40 bytes: exact values. */
  const uint64_t float_counts[] = {65536 + 3, (1u << 18) + 1};
  const int calls = 80;
  for (size_t c = 0; c < 2; ++c) {
    const uint64_t count = float_counts[c];
    float* send = malloc(count * sizeof *send);
    float* recv = malloc(count * sizeof *recv);
    for (int call = 0; call < calls; ++call) {
      for (uint64_t i = 0; i < count; ++i) send[i] = (float)((rank + 1) * (int)(i % 97) + call);
      memset(recv, 0xff, count * sizeof *recv);
      dist_buffer_t s = buffer_of(send, count, DIST_DTYPE_F32), r = buffer_of(recv, count, DIST_DTYPE_F32);
      CHECK(dist_all_reduce(world, &s, &r, DIST_OP_SUM, NULL) == DIST_OK, "all_reduce %d: %s", call, dist_last_error());
      for (uint64_t i = 0; i < count; ++i) {
        const float expected = (float)((int)(i % 97) * n * (n + 1) / 2 + n * call);
        const float input = (float)((rank + 1) * (int)(i % 97) + call);
        if (recv[i] != expected || send[i] != input) {
          CHECK(0, "call %d of %llu floats: [%llu] = %g (expected %g), input %g (was %g)", call,
                (unsigned long long)count, (unsigned long long)i, recv[i], expected, send[i], input);
          break;
        }
      }
    }
    free(send);
    free(recv);
  }
  const uint64_t count = (1u << 17) + 5;
  double* send = malloc(count * sizeof *send);
  double* recv = malloc(count * sizeof *recv);
  for (int call = 0; call < calls / 2; ++call) {
    for (uint64_t i = 0; i < count; ++i) send[i] = (double)((rank + 1) * (int)(i % 97) + call);
    dist_buffer_t s = buffer_of(send, count, DIST_DTYPE_F64), r = buffer_of(recv, count, DIST_DTYPE_F64);
    CHECK(dist_all_reduce(world, &s, &r, DIST_OP_MEAN, NULL) == DIST_OK, "mean %d: %s", call, dist_last_error());
    for (uint64_t i = 0; i < count; ++i) {
      const double expected = (double)((int)(i % 97) * (n + 1)) / 2.0 + call;
      if (recv[i] != expected) {
        CHECK(0, "mean %d: [%llu] = %g, expected %g", call, (unsigned long long)i, recv[i], expected);
        break;
      }
    }
  }
  free(send);
  free(recv);

  dist_comm_stat_t stats[8];
  uint64_t rows = 0, split = 0, read_write = 0, other = 0;
  CHECK(dist_comm_stats(world, stats, 8, &rows) == DIST_OK, "stats: %s", dist_last_error());
  for (uint64_t i = 0; i < rows && i < 8; ++i) {
    if (stats[i].collective != DIST_COLLECTIVE_ALL_REDUCE) continue;
    if (strcmp(stats[i].algorithm, "shm_split_single_copy") == 0) split += stats[i].calls;
    else if (strcmp(stats[i].algorithm, "shm_read_write") == 0) read_write += stats[i].calls;
    else other += stats[i].calls;
  }
  CHECK(split > 0 && read_write > 0 && other == 0 && split + read_write == (uint64_t)(2 * calls + calls / 2),
        "calls: %llu split, %llu read_write, %llu other", (unsigned long long)split, (unsigned long long)read_write,
        (unsigned long long)other);
  printf("learned %llu %llu\n", (unsigned long long)split, (unsigned long long)read_write);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: collective_worker matrix|big|quick|requests|split|mismatch HOW|kill RANK|abort|path EXPECTED|single_copy|learned|join\n");
    return 2;
  }
  const char* scenario = argv[1];
  int64_t timeout_ms = strcmp(scenario, "kill") == 0 ? 8000 : 30000;
  dist_context_t* context = join(timeout_ms);
  /* quick: one integer, one half and one single-precision type, and several MiB. */
  static const dist_dtype_t kQuickDtypes[] = {DIST_DTYPE_I64, DIST_DTYPE_BF16, DIST_DTYPE_F32};
  const size_t all_dtypes = sizeof kDtypes / sizeof kDtypes[0];
  if (strcmp(scenario, "matrix") == 0) scenario_matrix(context, 0, kDtypes, all_dtypes);
  else if (strcmp(scenario, "big") == 0) scenario_matrix(context, 1, kDtypes, all_dtypes);
  else if (strcmp(scenario, "quick") == 0) scenario_matrix(context, 1, kQuickDtypes, sizeof kQuickDtypes / sizeof kQuickDtypes[0]);
  else if (strcmp(scenario, "requests") == 0) scenario_requests(context);
  else if (strcmp(scenario, "split") == 0) scenario_split(context);
  else if (strcmp(scenario, "mismatch") == 0 && argc > 2) scenario_mismatch(context, argv[2]);
  else if (strcmp(scenario, "kill") == 0 && argc > 2) {
    scenario_kill(context, atoi(argv[2]), argc > 3 && strcmp(argv[3], "during") == 0);
  }
  else if (strcmp(scenario, "abort") == 0) scenario_abort(context);
  else if (strcmp(scenario, "path") == 0 && argc > 2) scenario_path(context, atoi(argv[2]));
  else if (strcmp(scenario, "single_copy") == 0) scenario_single_copy(context);
  else if (strcmp(scenario, "stats") == 0) scenario_stats(context);
  else if (strcmp(scenario, "learned") == 0) scenario_learned(context);
  else if (strcmp(scenario, "timeline") == 0) scenario_timeline(context);
  else if (strcmp(scenario, "stall") == 0) scenario_stall(context);
  else if (strcmp(scenario, "deterministic") == 0) scenario_deterministic(context);
  else if (strcmp(scenario, "join") != 0) {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  printf("%s: %d checks, %d failed\n", scenario, checks, failures);
  fflush(stdout);
  dist_context_destroy(context);
  return failures == 0 ? 0 : 1;
}
