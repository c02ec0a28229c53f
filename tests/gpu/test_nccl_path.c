/* Calls on CUDA memory in one process: the path its communicator chooses
 * (NCCL in a build with NCCL, staged with DIST_NCCL=0), every collective and
 * dtype against the values a single rank must get, with and without requests,
 * and stream order on both sides of a call. Skips, saying why, where no CUDA
 * device is usable. */
#include <cuda_runtime_api.h>

#include "gpu/device_check.h"

#include "test_support.h"

#define CUDA_OK(call) assert_int_equal((call), cudaSuccess)

static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I8,  DIST_DTYPE_U8,  DIST_DTYPE_I32,  DIST_DTYPE_U32,
                                       DIST_DTYPE_I64, DIST_DTYPE_U64, DIST_DTYPE_F16,  DIST_DTYPE_BF16,
                                       DIST_DTYPE_F32, DIST_DTYPE_F64};
static const size_t kElementBytes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};

static dist_context_t* join_alone(void) {
  dist_cluster_t* cluster = NULL;
  assert_dist_ok(dist_cluster_from_json("{}", &cluster));
  dist_context_t* context = NULL;
  assert_dist_ok(dist_context_create(cluster, NULL, &context));
  dist_cluster_destroy(cluster);
  return context;
}

static dist_buffer_t device_buffer(void* data, uint64_t count, dist_dtype_t dtype, cudaStream_t stream) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_CUDA, stream};
  return b;
}

/* One rank: every collective leaves the input as the result (MEAN over one
 * rank included), in place and not, blocking and with a request. */
static void check_every_collective(dist_comm_t* comm, cudaStream_t stream) {
  enum { kCount = 4099 };
  for (size_t d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
    const size_t bytes = kCount * kElementBytes[d];
    unsigned char* input = malloc(bytes);
    unsigned char* output = malloc(bytes);
    /* Small values in every dtype: no rounding in a sum of one. */
    for (size_t i = 0; i < bytes; ++i) input[i] = (unsigned char)(i % 23);
    void* send = NULL;
    void* recv = NULL;
    CUDA_OK(cudaMalloc(&send, bytes));
    CUDA_OK(cudaMalloc(&recv, bytes));
    for (int kind = 0; kind < 6; ++kind) {
      for (int variant = 0; variant < 2; ++variant) {
        CUDA_OK(cudaMemcpy(send, input, bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(recv, 0xEE, bytes));
        if (kind == 2) CUDA_OK(cudaMemcpy(recv, input, bytes, cudaMemcpyHostToDevice));
        /* Pageable cudaMemcpy and cudaMemset may return before the device
         * has the data, and the non-blocking stream does not wait for them. */
        CUDA_OK(cudaDeviceSynchronize());
        dist_buffer_t s = device_buffer(send, kCount, kDtypes[d], stream);
        dist_buffer_t r = device_buffer(recv, kCount, kDtypes[d], stream);
        dist_request_t* request = NULL;
        dist_request_t** with = variant ? &request : NULL;
        dist_status_t status = DIST_OK;
        switch (kind) {
          case 0: status = dist_all_reduce(comm, &s, &r, DIST_OP_MEAN, with); break;
          case 1: status = dist_reduce(comm, &s, &r, DIST_OP_MAX, 0, with); break;
          case 2: status = dist_broadcast(comm, &r, 0, with); break;
          case 3: status = dist_all_gather(comm, &s, &r, with); break;
          case 4: status = dist_reduce_scatter(comm, &s, &r, DIST_OP_SUM, with); break;
          default: status = dist_all_to_all(comm, &s, &r, with); break;
        }
        if (status == DIST_OK && request != NULL) status = dist_request_wait(request, 60000);
        dist_request_free(request);
        if (status != DIST_OK) fail_msg("collective %d dtype %d request %d: %s", kind, kDtypes[d], variant, dist_last_error());
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(output, recv, bytes, cudaMemcpyDeviceToHost));
        if (memcmp(output, input, bytes) != 0) {
          size_t at = 0;
          while (output[at] == input[at]) ++at;
          const size_t element = at / kElementBytes[d] * kElementBytes[d];
          uint64_t got = 0, expected = 0;
          memcpy(&got, output + element, kElementBytes[d]);
          memcpy(&expected, input + element, kElementBytes[d]);
          fail_msg("collective %d dtype %d request %d: element %zu is 0x%llx, expected 0x%llx", kind, kDtypes[d],
                   variant, element / kElementBytes[d], (unsigned long long)got, (unsigned long long)expected);
        }
      }
    }
    CUDA_OK(cudaFree(send));
    CUDA_OK(cudaFree(recv));
    free(input);
    free(output);
  }
}

/* Written on the stream before the call, read on it after, before the
 * request is waited for. */
static void check_stream_order(dist_comm_t* comm, cudaStream_t stream) {
  enum { kCount = 1 << 20 };
  int32_t* data = NULL;
  int32_t* copy = NULL;
  static int32_t host[kCount];
  CUDA_OK(cudaMalloc((void**)&data, sizeof host));
  CUDA_OK(cudaMalloc((void**)&copy, sizeof host));
  for (int round = 1; round <= 4; ++round) {
    CUDA_OK(cudaMemsetAsync(data, round, sizeof host, stream));
    dist_buffer_t b = device_buffer(data, kCount, DIST_DTYPE_I32, stream);
    dist_request_t* request = NULL;
    assert_dist_ok(dist_all_reduce(comm, NULL, &b, DIST_OP_SUM, &request));
    CUDA_OK(cudaMemcpyAsync(copy, data, sizeof host, cudaMemcpyDeviceToDevice, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(host, copy, sizeof host, cudaMemcpyDeviceToHost));
    const int32_t expected = round | round << 8 | round << 16 | round << 24;
    for (int i = 0; i < kCount; ++i) {
      if (host[i] != expected) fail_msg("round %d: element %d is %d, expected %d", round, i, host[i], expected);
    }
    assert_dist_ok(dist_request_wait(request, 60000));
    dist_request_free(request);
  }
  CUDA_OK(cudaFree(data));
  CUDA_OK(cudaFree(copy));
}

static void run_path(int expected_path) {
  dist_context_t* context = join_alone();
  dist_comm_t* world = NULL;
  assert_dist_ok(dist_comm_world(context, &world));
  cudaStream_t stream = NULL;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  check_every_collective(world, stream);
  dist_comm_path_t path = -1;
  assert_dist_ok(dist_comm_device_path(world, &path));
  assert_int_equal(path, expected_path);
  check_stream_order(world, stream);
  CUDA_OK(cudaStreamDestroy(stream));
  dist_context_destroy(context);
}

static void test_nccl(void** state) {
  (void)state;
  if ((dist_build_features() & DIST_FEATURE_NCCL) == 0) skip();
  unsetenv("DIST_NCCL");
  run_path(DIST_COMM_PATH_NCCL);
}

static void test_staged(void** state) {
  (void)state;
  setenv("DIST_NCCL", "0", 1);
  run_path(DIST_COMM_PATH_STAGED);
  unsetenv("DIST_NCCL");
}

int main(void) {
  skip_without_device();
  if (cudaSetDevice(0) != cudaSuccess) {
    printf("cudaSetDevice(0) failed\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nccl),
      cmocka_unit_test(test_staged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
