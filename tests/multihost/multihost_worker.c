/* One rank of the multi-host suites, started on an emulated host with
 * TF_CONFIG and DIST_CLUSTER_TOKEN set. Exits 0 only if everything it
 * checked held; prints what failed.
 *
 *   multihost_worker hosts PATH H0,H1,...   the path the world takes (PATH),
 *       where each rank runs (rank r on host Hr), the host-local ranks and
 *       communicators, and all-reduces on them and on the world with every
 *       all-reduce algorithm
 *   multihost_worker fault TIMEOUT_MS [BYTES]   all-reduces of BYTES (default
 *       16 MiB) with that deadline until one fails (the test, or
 *       bench/faults/trials, cuts a link or kills ranks); prints "looping"
 *       once the first call is checked, then when and how the loop ended, a
 *       later call's result, and "destroyed" once dist_context_destroy has
 *       returned
 *   multihost_worker messages   point-to-point messages around a ring (inline,
 *       past the inline limit, 8 MiB), from any source, a mismatch, and an
 *       uneven all_to_all_v, between ranks on the same and on other hosts */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "multiprocess/element_values.h"
#include "multiprocess/worker_support.h"

enum { kMaxRanks = 8 };

/* An all-reduce (SUM, f64) of `count` elements on comm against the reference
 * over the world ranks `members` (members[i] is comm rank i's world rank). */
static void check_all_reduce(dist_comm_t* comm, const char* what, const int* members, int n, int comm_rank,
                             uint64_t count) {
  double* data = malloc(sizeof(double) * (count + 1));
  for (uint64_t i = 0; i < count; ++i) data[i] = input_value(members[comm_rank], i, DIST_OP_SUM);
  dist_buffer_t b = buffer_of(data, count, DIST_DTYPE_F64);
  const dist_status_t st = dist_all_reduce(comm, NULL, &b, DIST_OP_SUM, NULL);
  CHECK(st == DIST_OK, "%s all_reduce of %llu: %s", what, (unsigned long long)count, dist_last_error());
  for (uint64_t i = 0; st == DIST_OK && i < count; ++i) {
    double expected = 0;
    for (int r = 0; r < n; ++r) expected += input_value(members[r], i, DIST_OP_SUM);
    if (data[i] != expected) {
      CHECK(0, "%s all_reduce of %llu: [%llu] = %g, expected %g", what, (unsigned long long)count,
            (unsigned long long)i, data[i], expected);
      break;
    }
  }
  free(data);
}

/* The world with each all-reduce algorithm forced, on small and large messages. */
static void check_forced_algorithms(dist_comm_t* world, const int* members, int n, int rank) {
  const dist_allreduce_algorithm_t algorithms[] = {DIST_ALLREDUCE_RING, DIST_ALLREDUCE_RABENSEIFNER,
                                                    DIST_ALLREDUCE_RECURSIVE_DOUBLING, DIST_ALLREDUCE_AUTO};
  const char* names[] = {"ring", "rabenseifner", "recursive_doubling", "auto"};
  for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; ++a) {
    dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
    options.field_mask = DIST_COMM_OPT_ALLREDUCE;
    options.allreduce = algorithms[a];
    CHECK(dist_comm_configure(world, &options) == DIST_OK, "forcing %s: %s", names[a], dist_last_error());
    check_all_reduce(world, names[a], members, n, rank, 3);
    check_all_reduce(world, names[a], members, n, rank, (1u << 20) + 5);
  }
}

/* The host-local view the library gives: rank and size among the ranks of
 * this host (in world rank order), the number of hosts, and a communicator
 * of this host's ranks. */
static void check_host_view(dist_comm_t* world, const int* host_of, int n, int rank) {
#ifdef DIST_COMM_PATH_HIERARCHICAL
  int local_rank = 0, local_size = 0, hosts = 0;
  int local_members[kMaxRanks];
  for (int r = 0; r < n; ++r) {
    if (host_of[r] == host_of[rank]) {
      if (r < rank) ++local_rank;
      local_members[local_size++] = r;
    }
    hosts = host_of[r] + 1 > hosts ? host_of[r] + 1 : hosts;
  }
  int32_t got_rank = -1, got_size = -1, got_hosts = -1;
  CHECK(dist_comm_local_rank(world, &got_rank) == DIST_OK && got_rank == local_rank, "local rank %d, expected %d: %s",
        got_rank, local_rank, dist_last_error());
  CHECK(dist_comm_local_size(world, &got_size) == DIST_OK && got_size == local_size, "local size %d, expected %d: %s",
        got_size, local_size, dist_last_error());
  CHECK(dist_comm_num_hosts(world, &got_hosts) == DIST_OK && got_hosts == hosts, "hosts %d, expected %d: %s",
        got_hosts, hosts, dist_last_error());
  CHECK(dist_comm_local_rank(NULL, &got_rank) == DIST_ERR_INVALID_ARGUMENT, "local rank of no communicator");
  CHECK(dist_comm_local_size(world, NULL) == DIST_ERR_INVALID_ARGUMENT, "local size into NULL");
  dist_comm_t* host_comm = NULL;
  CHECK(dist_comm_split_host(world, &host_comm) == DIST_OK && host_comm != NULL, "split_host: %s", dist_last_error());
  if (host_comm != NULL) {
    int32_t sub_rank = -1, sub_size = -1;
    dist_comm_path_t path = -1;
    dist_comm_rank(host_comm, &sub_rank);
    dist_comm_size(host_comm, &sub_size);
    dist_comm_path(host_comm, &path);
    CHECK(sub_rank == local_rank && sub_size == local_size, "host communicator: rank %d of %d, expected %d of %d",
          sub_rank, sub_size, local_rank, local_size);
    const dist_comm_path_t expected = local_size > 1 ? DIST_COMM_PATH_SHARED_MEMORY : DIST_COMM_PATH_SELF;
    CHECK(path == expected, "host communicator path %d, expected %d", path, expected);
    check_all_reduce(host_comm, "host communicator", local_members, local_size, local_rank, 65537);
    dist_comm_destroy(host_comm);
  }
#else
  (void)world;
  (void)host_of;
  (void)n;
  (void)rank;
  printf("no host-local view in this library (DIST_COMM_PATH_HIERARCHICAL is not defined)\n");
#endif
}

static void scenario_hosts(dist_context_t* context, dist_comm_path_t expected_path, const char* hosts_text) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  int host_of[kMaxRanks], members[kMaxRanks], count = 0;
  for (const char* p = hosts_text; *p != '\0' && count < kMaxRanks; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0)) {
    host_of[count++] = atoi(p);
  }
  CHECK(count == n, "the launcher placed %d ranks, the world has %d", count, n);
  if (count != n) return;
  for (int r = 0; r < n; ++r) members[r] = r;
  /* The launcher ran this rank where it meant to: the host's own name. */
  char hostname[256] = "", suffix[16];
  gethostname(hostname, sizeof hostname);
  snprintf(suffix, sizeof suffix, "-h%d", host_of[rank]);
  const size_t length = strlen(hostname), suffix_length = strlen(suffix);
  CHECK(length > suffix_length && strcmp(hostname + length - suffix_length, suffix) == 0,
        "rank %d runs on %s, not on host %d", rank, hostname, host_of[rank]);

  dist_comm_path_t path = -1;
  CHECK(dist_comm_path(world, &path) == DIST_OK && path == expected_path, "world path %d, expected %d: %s", path,
        expected_path, dist_last_error());
  const char* algorithm = "?";
  dist_comm_algorithm(world, DIST_COLLECTIVE_ALL_REDUCE, 64 << 20, &algorithm);
  printf("rank %d on %s: path %d, 64 MiB all-reduce by %s\n", rank, hostname, path, algorithm);

  /* A split by host works today: all its ranks share one host, so it takes
   * the shared-memory path, which only a host detected right allows. */
  dist_comm_t* by_host = NULL;
  int local_members[kMaxRanks], local_size = 0, local_rank = 0;
  for (int r = 0; r < n; ++r) {
    if (host_of[r] != host_of[rank]) continue;
    if (r == rank) local_rank = local_size;
    local_members[local_size++] = r;
  }
  CHECK(dist_comm_split(world, host_of[rank], rank, &by_host) == DIST_OK, "split by host: %s", dist_last_error());
  if (by_host != NULL) {
    dist_comm_path_t host_path = -1;
    dist_comm_path(by_host, &host_path);
    const dist_comm_path_t expected = local_size > 1 ? DIST_COMM_PATH_SHARED_MEMORY : DIST_COMM_PATH_SELF;
    CHECK(host_path == expected, "split by host: path %d, expected %d", host_path, expected);
    check_all_reduce(by_host, "split by host", local_members, local_size, local_rank, 100003);
    dist_comm_destroy(by_host);
  }
  check_host_view(world, host_of, n, rank);
  check_forced_algorithms(world, members, n, rank);
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
}

static int is_peer_loss(dist_status_t status) { return status == DIST_ERR_PEER_FAILED || status == DIST_ERR_TIMEOUT; }

/* Fills with rank + 1 and all-reduces: the sum is n(n+1)/2 everywhere. */
static dist_status_t summed_all_reduce(dist_comm_t* world, float* data, size_t count, int rank, int n) {
  for (size_t i = 0; i < count; ++i) data[i] = (float)(rank + 1);
  dist_buffer_t b = buffer_of(data, count, DIST_DTYPE_F32);
  const dist_status_t st = dist_all_reduce(world, NULL, &b, DIST_OP_SUM, NULL);
  const float expected = (float)(n * (n + 1) / 2);
  if (st == DIST_OK) {
    CHECK(data[0] == expected && data[count / 2] == expected && data[count - 1] == expected,
          "all_reduce gave %g %g %g, expected %g", data[0], data[count / 2], data[count - 1], expected);
  }
  return st;
}

static void scenario_fault(dist_context_t* context, int64_t timeout_ms, int64_t bytes) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_TIMEOUT_MS;
  options.timeout_ms = timeout_ms;
  CHECK(dist_comm_configure(world, &options) == DIST_OK, "deadline: %s", dist_last_error());
  const size_t count = bytes >= (int64_t)sizeof(float) ? (size_t)bytes / sizeof(float) : 1;
  float* data = malloc(sizeof(float) * count);
  if (data == NULL) {
    fprintf(stderr, "fault: no memory for %zu floats\n", count);
    exit(2);
  }
  dist_status_t st = summed_all_reduce(world, data, count, rank, n);
  CHECK(st == DIST_OK, "first all_reduce: %s", dist_last_error());
  printf("looping\n");
  fflush(stdout);
  /* Until the fault the test makes; bounded should it never come. */
  const double start = now_seconds();
  int calls = 0;
  while (st == DIST_OK && now_seconds() - start < 120) {
    st = summed_all_reduce(world, data, count, rank, n);
    ++calls;
  }
  printf("failed %s at %.3f after %d calls: %s\n", dist_status_string(st), now_seconds(), calls, dist_last_error());
  fflush(stdout);
  CHECK(is_peer_loss(st), "the loop ended with %s, expected a lost peer", dist_status_string(st));
  /* The communicator stays failed: a later call fails too, within the deadline. */
  const double later_start = now_seconds();
  const dist_status_t later = dist_barrier(world, NULL);
  const double later_seconds = now_seconds() - later_start;
  printf("later %s after %.3f s: %s\n", dist_status_string(later), later_seconds, dist_last_error());
  CHECK(is_peer_loss(later), "a later call returned %s", dist_status_string(later));
  CHECK(later_seconds <= (double)timeout_ms / 1000 + 2, "a later call took %.3f s", later_seconds);
  free(data);
}

/* Element i of the message from `from` to `to`: small integers, exact. */
static double message_value(int from, int to, uint64_t i) { return (double)(1 + (from * 5 + to * 3 + (int)(i % 89)) % 41); }

static void scenario_messages(dist_context_t* context) {
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  const int32_t next = (rank + 1) % n, previous = (rank - 1 + n) % n;
  const uint64_t counts[] = {1, 5000, 8u << 20};
  const dist_dtype_t dtypes[] = {DIST_DTYPE_F64, DIST_DTYPE_F32, DIST_DTYPE_U8};
  for (int c = 0; c < 3; ++c) {
    const size_t bytes = counts[c] * dtype_size(dtypes[c]);
    unsigned char* out = malloc(bytes);
    unsigned char* in = calloc(bytes, 1);
    for (uint64_t i = 0; i < counts[c]; ++i) store_value(out, i, dtypes[c], message_value(rank, next, i));
    dist_buffer_t o = buffer_of(out, counts[c], dtypes[c]), b = buffer_of(in, counts[c], dtypes[c]);
    dist_request_t* receive = NULL;
    CHECK(dist_recv(world, &b, previous, c, &receive) == DIST_OK, "recv: %s", dist_last_error());
    CHECK(dist_send(world, &o, next, c, NULL) == DIST_OK, "send %llu: %s", (unsigned long long)counts[c],
          dist_last_error());
    if (receive != NULL) CHECK(dist_request_wait(receive, -1) == DIST_OK, "recv: %s", dist_last_error());
    dist_request_free(receive);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < counts[c]; ++i) wrong += load_value(in, i, dtypes[c]) != message_value(previous, rank, i);
    CHECK(wrong == 0, "message of %llu from rank %d: %llu wrong elements", (unsigned long long)counts[c], previous,
          (unsigned long long)wrong);
    free(out);
    free(in);
  }

  /* Rank 0 hears from every other rank, in any order. */
  int64_t value = rank;
  dist_buffer_t v = buffer_of(&value, 1, DIST_DTYPE_I64);
  if (rank == 0) {
    int seen = 0;
    for (int k = 1; k < n; ++k) {
      dist_request_t* request = NULL;
      int32_t source = -1;
      CHECK(dist_recv(world, &v, DIST_ANY_SOURCE, 50, &request) == DIST_OK, "recv any: %s", dist_last_error());
      CHECK(dist_request_wait(request, -1) == DIST_OK && dist_request_source(request, &source) == DIST_OK,
            "recv any: %s", dist_last_error());
      CHECK(source > 0 && source < n && value == source, "from any source: %d sent %lld", source, (long long)value);
      if (source > 0 && source < n) seen |= 1 << source;
      dist_request_free(request);
    }
    CHECK(seen == (1 << n) - 2, "sources seen: %#x", seen);
  } else {
    CHECK(dist_send(world, &v, 0, 50, NULL) == DIST_OK, "send to 0: %s", dist_last_error());
  }

  /* A dtype that disagrees: the receiver fails naming both, the sender completes. */
  double wide[2] = {1, 2};
  float narrow[2];
  dist_buffer_t w = buffer_of(wide, 2, DIST_DTYPE_F64), f = buffer_of(narrow, 2, DIST_DTYPE_F32);
  if (rank == 1) CHECK(dist_send(world, &w, 0, 51, NULL) == DIST_OK, "mismatched send: %s", dist_last_error());
  if (rank == 0) {
    const dist_status_t st = dist_recv(world, &f, 1, 51, NULL);
    CHECK(st == DIST_ERR_MISMATCH && strstr(dist_last_error(), "f64 x 2") != NULL &&
              strstr(dist_last_error(), "f32 x 2") != NULL,
          "mismatched recv: %s: %s", dist_status_string(st), dist_last_error());
  }

  /* Uneven all_to_all_v: rank i sends (i + 2j) % 4 * 3000 + j elements to j. */
  uint64_t send_counts[kMaxRanks], recv_counts[kMaxRanks], send_total = 0, recv_total = 0;
  for (int j = 0; j < n; ++j) {
    send_counts[j] = (uint64_t)((rank + 2 * j) % 4) * 3000 + (uint64_t)j;
    recv_counts[j] = (uint64_t)((j + 2 * rank) % 4) * 3000 + (uint64_t)rank;
    send_total += send_counts[j];
    recv_total += recv_counts[j];
  }
  int32_t* send = malloc(sizeof(int32_t) * (send_total + 1));
  int32_t* recv = calloc(recv_total + 1, sizeof(int32_t));
  uint64_t at = 0;
  for (int j = 0; j < n; ++j) {
    for (uint64_t e = 0; e < send_counts[j]; ++e) send[at++] = (int32_t)message_value(rank, j, e);
  }
  dist_buffer_t s = buffer_of(send, send_total, DIST_DTYPE_I32), r = buffer_of(recv, recv_total, DIST_DTYPE_I32);
  CHECK(dist_all_to_all_v(world, &s, send_counts, NULL, &r, recv_counts, NULL, NULL) == DIST_OK, "all_to_all_v: %s",
        dist_last_error());
  uint64_t wrong = 0;
  at = 0;
  for (int j = 0; j < n; ++j) {
    for (uint64_t e = 0; e < recv_counts[j]; ++e) wrong += recv[at++] != (int32_t)message_value(j, rank, e);
  }
  CHECK(wrong == 0, "all_to_all_v: %llu wrong elements", (unsigned long long)wrong);
  free(send);
  free(recv);
  CHECK(dist_barrier(world, NULL) == DIST_OK, "barrier: %s", dist_last_error());
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "messages") == 0) {
    dist_context_t* context = join(30000);
    scenario_messages(context);
    printf("%s: %d checks, %d failed\n", argv[1], checks, failures);
    fflush(stdout);
    dist_context_destroy(context);
    return failures == 0 ? 0 : 1;
  }
  if (argc < 3 || (strcmp(argv[1], "hosts") == 0 && argc < 4)) {
    fprintf(stderr, "usage: multihost_worker hosts PATH H0,H1,... | fault TIMEOUT_MS [BYTES] | messages\n");
    return 2;
  }
  dist_context_t* context = join(30000);
  if (strcmp(argv[1], "hosts") == 0) scenario_hosts(context, atoi(argv[2]), argv[3]);
  else if (strcmp(argv[1], "fault") == 0) scenario_fault(context, atoll(argv[2]), argc > 3 ? atoll(argv[3]) : 16 << 20);
  else {
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  printf("%s: %d checks, %d failed\n", argv[1], checks, failures);
  fflush(stdout);
  dist_context_destroy(context);
  printf("destroyed\n");
  fflush(stdout);
  return failures == 0 ? 0 : 1;
}
