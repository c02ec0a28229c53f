/* The collectives' argument checks, and the one-process communicator (a
 * cluster without tasks), through the public C ABI. */
#include "test_support.h"

static dist_context_t* context;
static dist_comm_t* world;

static int setup(void** state) {
  (void)state;
  dist_cluster_t* cluster = NULL;
  if (dist_cluster_from_json("{}", &cluster) != DIST_OK) return -1;
  dist_status_t status = dist_context_create(cluster, NULL, &context);
  dist_cluster_destroy(cluster);
  if (status != DIST_OK || dist_comm_world(context, &world) != DIST_OK) return -1;
  return 0;
}

static int teardown(void** state) {
  (void)state;
  dist_context_destroy(context);
  return 0;
}

static dist_buffer_t f32(float* data, uint64_t count) {
  dist_buffer_t b = {data, count, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  return b;
}

static void test_single_process(void** state) {
  (void)state;
  int32_t rank = -1, size = -1;
  assert_dist_ok(dist_context_rank(context, &rank));
  assert_dist_ok(dist_context_size(context, &size));
  assert_int_equal(rank, 0);
  assert_int_equal(size, 1);
  float in[5] = {1, 2, 3, 4, 5}, out[5] = {0};
  dist_buffer_t s = f32(in, 5), r = f32(out, 5);
  assert_dist_ok(dist_all_reduce(world, &s, &r, DIST_OP_MEAN, NULL));
  for (int i = 0; i < 5; ++i) assert_true(out[i] == in[i]);
  assert_dist_ok(dist_all_gather(world, &s, &r, NULL));
  assert_dist_ok(dist_broadcast(world, &r, 0, NULL));
  dist_request_t* request = NULL;
  assert_dist_ok(dist_barrier(world, &request));
  assert_dist_ok(dist_request_wait(request, 5000));
  int32_t done = 0;
  assert_dist_ok(dist_request_test(request, &done));
  assert_int_equal(done, 1);
  dist_request_free(request);
  dist_request_free(NULL);
  dist_comm_t* self = NULL;
  assert_dist_ok(dist_comm_split(world, 3, 0, &self));
  assert_non_null(self);
  assert_dist_ok(dist_comm_size(self, &size));
  assert_int_equal(size, 1);
  dist_comm_destroy(self);
  dist_comm_destroy(world); /* the world is the context's: a no-op */
}

static void test_bad_buffers(void** state) {
  (void)state;
  float data[8] = {0};
  dist_buffer_t good = f32(data, 8), bad = good;
  assert_dist_error(dist_all_reduce(NULL, NULL, &good, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT, "comm is NULL");
  assert_dist_error(dist_all_reduce(world, NULL, NULL, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT, "recv is NULL");
  bad.dtype = 42;
  assert_dist_error(dist_all_reduce(world, NULL, &bad, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT, "42");
  bad = good;
  bad.memory_kind = 7;
  assert_dist_error(dist_all_reduce(world, NULL, &bad, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "memory_kind 7");
  bad = good;
  bad.stream = data;
  assert_dist_error(dist_all_reduce(world, NULL, &bad, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT, "stream");
  bad = good;
  bad.data = NULL;
  assert_dist_error(dist_all_reduce(world, NULL, &bad, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "data is NULL for count 8");
  bad = good;
  bad.count = UINT64_MAX / 2;
  assert_dist_error(dist_all_reduce(world, NULL, &bad, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT, "too large");
  bad = good;
  bad.count = 4;
  assert_dist_error(dist_all_reduce(world, &bad, &good, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "send has count 4, expected 8");
  bad = good;
  bad.dtype = DIST_DTYPE_I32;
  assert_dist_error(dist_all_reduce(world, &bad, &good, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "send is i32 but recv is f32");
  assert_dist_error(dist_all_reduce(world, NULL, &good, 9, NULL), DIST_ERR_INVALID_ARGUMENT, "9");
  /* Count 0 with NULL data is a valid empty call. */
  dist_buffer_t empty = f32(NULL, 0);
  assert_dist_ok(dist_all_reduce(world, NULL, &empty, DIST_OP_SUM, NULL));
}

/* CUDA memory: refused by a build without CUDA, and, in one with it, where
 * no device is usable or the data is host memory; never taken as host memory.
 * Point-to-point messages and all_to_all_v take host memory only. */
static void test_cuda_buffers(void** state) {
  (void)state;
  float data[8] = {0};
  dist_buffer_t cuda = f32(data, 8);
  cuda.memory_kind = DIST_MEMORY_CUDA;
  const dist_status_t status = dist_all_reduce(world, NULL, &cuda, DIST_OP_SUM, NULL);
  if ((dist_build_features() & DIST_FEATURE_CUDA) == 0) {
    assert_int_equal(status, DIST_ERR_UNSUPPORTED);
    assert_non_null(strstr(dist_last_error(), "built without CUDA"));
  } else if (status == DIST_ERR_UNAVAILABLE) {
    assert_non_null(strstr(dist_last_error(), "recv is CUDA memory but"));
  } else {
    /* A device is there: this is host memory. */
    assert_int_equal(status, DIST_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dist_last_error(), "data is host memory"));
  }
  /* No call on CUDA memory ran: the device path is not chosen. */
  dist_comm_path_t path = -1;
  assert_dist_error(dist_comm_device_path(world, &path), DIST_ERR_UNAVAILABLE,
                    (dist_build_features() & DIST_FEATURE_CUDA) ? "no call on CUDA memory" : "without CUDA");
  assert_int_equal(path, -1);
  assert_dist_error(dist_comm_device_path(world, NULL), DIST_ERR_INVALID_ARGUMENT, "path is NULL");
  /* The same refusal from the calls that take host memory only (before any
   * of their own checks). */
  dist_buffer_t host = f32(data, 8);
  assert_int_equal(dist_send(world, &cuda, 0, 0, NULL), status);
  assert_non_null(strstr(dist_last_error(), "buffer"));
  assert_int_equal(dist_all_to_all_v(world, &host, NULL, NULL, &cuda, NULL, NULL, NULL), status);
  assert_non_null(strstr(dist_last_error(), "recv"));
}

static void test_bad_roots_and_shapes(void** state) {
  (void)state;
  float data[8] = {0};
  dist_buffer_t b = f32(data, 8);
  assert_dist_error(dist_broadcast(world, &b, 1, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "root 1 is out of range for a communicator of 1 ranks");
  assert_dist_error(dist_reduce(world, &b, &b, DIST_OP_SUM, -1, NULL), DIST_ERR_INVALID_ARGUMENT, "root -1");
  assert_dist_error(dist_reduce(world, &b, NULL, DIST_OP_SUM, 0, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "recv is NULL at the root");
  dist_buffer_t four = f32(data, 4);
  assert_dist_error(dist_all_gather(world, &four, &b, NULL), DIST_ERR_INVALID_ARGUMENT, "send has count 4, expected 8");
  assert_dist_error(dist_reduce_scatter(world, &four, &b, DIST_OP_SUM, NULL), DIST_ERR_INVALID_ARGUMENT,
                    "send has count 4, expected 8");
  assert_dist_error(dist_barrier(NULL, NULL), DIST_ERR_INVALID_ARGUMENT, "comm is NULL");
  assert_dist_error(dist_request_wait(NULL, 0), DIST_ERR_INVALID_ARGUMENT, "request is NULL");
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_ALLREDUCE;
  options.allreduce = 17;
  assert_dist_error(dist_comm_configure(world, &options), DIST_ERR_INVALID_ARGUMENT, "allreduce 17");
  options.field_mask = DIST_COMM_OPT_TIMEOUT_MS;
  options.timeout_ms = 0;
  assert_dist_error(dist_comm_configure(world, &options), DIST_ERR_INVALID_ARGUMENT, "timeout_ms 0");
}

static void test_context_arguments(void** state) {
  (void)state;
  dist_context_t* other = NULL;
  assert_dist_error(dist_context_create(NULL, NULL, &other), DIST_ERR_INVALID_ARGUMENT, "cluster is NULL");
  dist_cluster_t* cluster = NULL;
  assert_dist_ok(dist_cluster_from_json(
      "{\"cluster\": {\"worker\": [\"127.0.0.1:1\", \"127.0.0.1:2\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}",
      &cluster));
  dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
  options.field_mask = DIST_CONTEXT_OPT_TIMEOUT_MS;
  options.timeout_ms = -5;
  assert_dist_error(dist_context_create(cluster, &options, &other), DIST_ERR_INVALID_ARGUMENT, "timeout_ms -5");
  /* Two members and no token anywhere: refused before any connection. */
  options.field_mask = DIST_CONTEXT_OPT_TOKEN_FILE;
  options.token_file = "/nonexistent/token";
  assert_dist_error(dist_context_create(cluster, &options, &other), DIST_ERR_INVALID_ARGUMENT,
                    "token file '/nonexistent/token'");
  assert_null(other);
  dist_cluster_destroy(cluster);
  assert_dist_error(dist_context_abort(NULL, "x"), DIST_ERR_INVALID_ARGUMENT, "context is NULL");
  dist_context_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_process),
      cmocka_unit_test(test_bad_buffers),
      cmocka_unit_test(test_cuda_buffers),
      cmocka_unit_test(test_bad_roots_and_shapes),
      cmocka_unit_test(test_context_arguments),
  };
  return cmocka_run_group_tests_name("collective_arguments", tests, setup, teardown);
}
