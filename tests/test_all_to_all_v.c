/* dist_all_to_all_v between real processes on loopback (the suite's own
 * program is each rank, multiprocess/self_ranks.h): uneven counts with zeros
 * and ones, odd and large blocks, packed and explicit offsets with gaps, every
 * dtype, checked against blocks computed here; mismatched counts, bad
 * arguments and the nonblocking form. */
#include "multiprocess/element_values.h"
#include "multiprocess/self_ranks.h"

static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I8,  DIST_DTYPE_U8,  DIST_DTYPE_I32,  DIST_DTYPE_U32, DIST_DTYPE_I64,
                                       DIST_DTYPE_U64, DIST_DTYPE_F16, DIST_DTYPE_BF16, DIST_DTYPE_F32, DIST_DTYPE_F64};
enum { kNumDtypes = sizeof kDtypes / sizeof kDtypes[0], kMaxRanksHere = 3, kGap = 3 };
static const unsigned char kUntouched = 0x5A;

/* How many elements rank `from` sends to rank `to` in layout `layout`: zeros,
 * ones, odd sizes, and (layout 3) blocks past the 16 KiB inline limit. */
static uint64_t count_between(int from, int to, int layout) {
  static const uint64_t small[] = {0, 1, 3, 7, 2, 0, 5, 1, 9};
  if (layout == 3) return (uint64_t)(3000 + 1000 * from + 17 * to) * (uint64_t)((from + to) % 3 != 1);
  return small[(size_t)(from * 3 + to * 2 + layout) % 9];
}

/* Element e of the block rank `from` sends to rank `to`. */
static double block_value(int from, int to, uint64_t e) { return (double)(1 + (from * 7 + to * 3 + (int)(e % 50)) % 23); }

/* Offsets: packed (NULL), packed with gaps, or in reverse rank order with gaps. */
static uint64_t lay_out(const uint64_t* counts, int n, int style, uint64_t* offsets) {
  uint64_t at = 0;
  for (int k = 0; k < n; ++k) {
    const int j = style == 2 ? n - 1 - k : k;
    offsets[j] = at + (style == 0 ? 0 : kGap);
    at = offsets[j] + counts[j];
  }
  return at + (style == 0 ? 0 : kGap);
}

/* One call; every received element and every gap byte are checked. */
static void exchange(dist_comm_t* world, int32_t rank, int32_t n, dist_dtype_t dtype, int layout, int style,
                     int nonblocking) {
  const size_t element = dtype_size(dtype);
  uint64_t send_counts[kMaxRanksHere], recv_counts[kMaxRanksHere];
  uint64_t send_offsets[kMaxRanksHere], recv_offsets[kMaxRanksHere];
  for (int j = 0; j < n; ++j) {
    send_counts[j] = count_between(rank, j, layout);
    recv_counts[j] = count_between(j, rank, layout);
  }
  const uint64_t send_total = lay_out(send_counts, n, style, send_offsets);
  const uint64_t recv_total = lay_out(recv_counts, n, style, recv_offsets);
  unsigned char* send = malloc(send_total * element + 1);
  unsigned char* recv = malloc(recv_total * element + 1);
  memset(send, 0, send_total * element + 1);
  memset(recv, kUntouched, recv_total * element + 1);
  for (int j = 0; j < n; ++j) {
    for (uint64_t e = 0; e < send_counts[j]; ++e) store_value(send, send_offsets[j] + e, dtype, block_value(rank, j, e));
  }
  dist_buffer_t s = buffer_of(send, send_total, dtype), r = buffer_of(recv, recv_total, dtype);
  const int packed = style == 0;
  if (nonblocking) {
    dist_request_t* request = NULL;
    CHECK_OK(dist_all_to_all_v(world, &s, send_counts, packed ? NULL : send_offsets, &r, recv_counts,
                               packed ? NULL : recv_offsets, &request));
    if (request != NULL) CHECK_OK(dist_request_wait(request, -1));
    dist_request_free(request);
  } else {
    CHECK_OK(dist_all_to_all_v(world, &s, send_counts, packed ? NULL : send_offsets, &r, recv_counts,
                               packed ? NULL : recv_offsets, NULL));
  }
  uint64_t wrong = 0, touched = 0;
  unsigned char* covered = calloc(recv_total + 1, 1);
  for (int j = 0; j < n; ++j) {
    for (uint64_t e = 0; e < recv_counts[j]; ++e) {
      wrong += load_value(recv, recv_offsets[j] + e, dtype) != block_value(j, rank, e);
      covered[recv_offsets[j] + e] = 1;
    }
  }
  for (uint64_t i = 0; i < recv_total; ++i) {
    if (covered[i]) continue;
    for (size_t b = 0; b < element; ++b) touched += recv[i * element + b] != kUntouched;
  }
  CHECK(wrong == 0 && touched == 0, "dtype %d, layout %d, style %d%s: %llu wrong elements, %llu gap bytes written",
        dtype, layout, style, nonblocking ? ", nonblocking" : "", (unsigned long long)wrong,
        (unsigned long long)touched);
  free(covered);
  free(send);
  free(recv);
}

static void scenario_uneven(dist_comm_t* world, int32_t rank, int32_t n) {
  for (int d = 0; d < kNumDtypes; ++d) {
    for (int layout = 0; layout < 3; ++layout) exchange(world, rank, n, kDtypes[d], layout, d % 3, 0);
  }
  for (int style = 0; style < 3; ++style) exchange(world, rank, n, DIST_DTYPE_F64, 3, style, 0);
  exchange(world, rank, n, DIST_DTYPE_BF16, 3, 2, 1);
  exchange(world, rank, n, DIST_DTYPE_I32, 1, 1, 1);
}

/* Rank 0 sends rank 1 one element more than rank 1 expects: both fail with
 * MISMATCH naming both, within the deadline. */
static void scenario_mismatch(dist_comm_t* world, int32_t rank, int32_t n) {
  float send[16], recv[16];
  uint64_t send_counts[kMaxRanksHere] = {2, 2, 2}, recv_counts[kMaxRanksHere] = {2, 2, 2};
  if (rank == 0) send_counts[1] = 3;
  dist_buffer_t s = buffer_of(send, 16, DIST_DTYPE_F32), r = buffer_of(recv, 16, DIST_DTYPE_F32);
  memset(send, 0, sizeof send);
  const double start = now_seconds();
  const dist_status_t status = dist_all_to_all_v(world, &s, send_counts, NULL, &r, recv_counts, NULL, NULL);
  if (rank <= 1) {
    check_status("mismatched all_to_all_v", status, DIST_ERR_MISMATCH, "rank 0 sends 3 elements to rank 1",
                 "expects 2", "all_to_all_v", NULL);
  } else {
    /* Not concerned, but on the same failed communicator. */
    CHECK(status != DIST_OK, "rank 2 completed a failed all_to_all_v");
  }
  CHECK(now_seconds() - start < 30.0 + 5.0, "the mismatch took %.1f s", now_seconds() - start);
  (void)n;
}

static void scenario_bad_input(dist_comm_t* world, int32_t rank, int32_t n) {
  float send[8], recv[8];
  int32_t ints[8];
  uint64_t counts[kMaxRanksHere] = {1, 1, 1}, offsets[kMaxRanksHere] = {0, 1, 7};
  dist_buffer_t s = buffer_of(send, 8, DIST_DTYPE_F32), r = buffer_of(recv, 8, DIST_DTYPE_F32);
  dist_buffer_t i = buffer_of(ints, 8, DIST_DTYPE_I32), small = buffer_of(recv, 1, DIST_DTYPE_F32);
  CHECK_STATUS(dist_all_to_all_v(NULL, &s, counts, NULL, &r, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "comm is NULL");
  CHECK_STATUS(dist_all_to_all_v(world, NULL, counts, NULL, &r, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "send is NULL");
  CHECK_STATUS(dist_all_to_all_v(world, &s, NULL, NULL, &r, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "send_counts is NULL");
  CHECK_STATUS(dist_all_to_all_v(world, &s, counts, NULL, &r, NULL, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "recv_counts is NULL");
  CHECK_STATUS(dist_all_to_all_v(world, &s, counts, NULL, &i, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "send is f32 but recv is i32");
  CHECK_STATUS(dist_all_to_all_v(world, &s, counts, NULL, &small, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "recv_counts[1]", "outside recv");
  offsets[n - 1] = 8; /* one past the end */
  CHECK_STATUS(dist_all_to_all_v(world, &s, counts, offsets, &r, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "send_offsets", "outside send");
  CHECK_STATUS(dist_all_to_all_v(world, &r, counts, NULL, &r, counts, NULL, NULL), DIST_ERR_INVALID_ARGUMENT,
               "same buffer");
  dist_request_t* request = NULL;
  CHECK_STATUS(dist_all_to_all_v(world, &s, counts, NULL, &r, counts, offsets, &request), DIST_ERR_INVALID_ARGUMENT,
               "recv_offsets");
  CHECK(request == NULL, "a request was made for a bad call");
  /* Nothing was sent: a good call still runs. */
  for (int j = 0; j < 8; ++j) send[j] = (float)(rank * 10 + j);
  CHECK_OK(dist_all_to_all_v(world, &s, counts, NULL, &r, counts, NULL, NULL));
  for (int j = 0; j < n; ++j) CHECK(recv[j] == (float)(j * 10 + rank), "recv[%d] = %g", j, recv[j]);
}

static int run_rank(const char* scenario) {
  dist_context_t* context = join(30000);
  int32_t rank = -1, n = 0;
  dist_comm_t* world = world_with_timeout(context, 30000, &rank, &n);
  if (strcmp(scenario, "uneven") == 0) scenario_uneven(world, rank, n);
  else if (strcmp(scenario, "mismatch") == 0) scenario_mismatch(world, rank, n);
  else if (strcmp(scenario, "bad_input") == 0) scenario_bad_input(world, rank, n);
  else CHECK(0, "unknown scenario %s", scenario);
  dist_context_destroy(context);
  printf("%s: rank %d of %d: %d checks, %d failed\n", scenario, rank, n, checks, failures);
  return failures == 0 ? 0 : 1;
}

static void test_uneven_one_rank(void** state) { (void)state; run_ranks(1, "uneven", NULL, 90); }
static void test_uneven_two_ranks(void** state) { (void)state; run_ranks(2, "uneven", NULL, 180); }
static void test_uneven_three_ranks(void** state) { (void)state; run_ranks(3, "uneven", NULL, 240); }
static void test_mismatch_two_ranks(void** state) { (void)state; run_ranks(2, "mismatch", NULL, 90); }
static void test_mismatch_three_ranks(void** state) { (void)state; run_ranks(3, "mismatch", NULL, 90); }
static void test_bad_input(void** state) { (void)state; run_ranks(2, "bad_input", NULL, 90); }

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "rank") == 0) return run_rank(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_input),          cmocka_unit_test(test_uneven_one_rank),
      cmocka_unit_test(test_uneven_two_ranks),
      cmocka_unit_test(test_uneven_three_ranks), cmocka_unit_test(test_mismatch_two_ranks),
      cmocka_unit_test(test_mismatch_three_ranks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
