/* One rank of test_staged_cuda: collectives on cudaMalloc'd buffers (the
 * staged path) against the same calls on host buffers, which must give the
 * same bits, since the staged path runs the host algorithms on a pinned copy.
 * Every rank shares the machine's one GPU. Scenarios:
 *   matrix    every collective, dtype, op and count, in place and not,
 *             blocking and with a request on a stream of its own
 *   ordering  the stream's work before a call is in its input, and work
 *             enqueued after a request-taking call sees its result, before
 *             the request is waited for
 *   mismatch  rank 0 passes CUDA memory where the others pass host memory:
 *             every rank fails with DIST_ERR_MISMATCH
 * Exits 0 when every check held. */
#include <cuda_runtime_api.h>

#include "gpu/gpu_ranks.h"
#include "multiprocess/worker_support.h"


static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I8,  DIST_DTYPE_U8,  DIST_DTYPE_I32,  DIST_DTYPE_U32,
                                       DIST_DTYPE_I64, DIST_DTYPE_U64, DIST_DTYPE_F16,  DIST_DTYPE_BF16,
                                       DIST_DTYPE_F32, DIST_DTYPE_F64};
static const size_t kElementBytes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
static const dist_op_t kOps[] = {DIST_OP_SUM, DIST_OP_PROD, DIST_OP_MIN, DIST_OP_MAX, DIST_OP_MEAN};

enum Kind { kAllReduce, kReduce, kBroadcast, kAllGather, kReduceScatter, kAllToAll, kKinds };
static const char* const kKindNames[] = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter",
                                         "all_to_all"};

/* Bytes that are small values in every dtype (no overflow to infinity, few
 * NaN patterns), different per rank and position. */
static void fill(unsigned char* bytes, size_t n, int rank, unsigned seed) {
  for (size_t i = 0; i < n; ++i) bytes[i] = (unsigned char)((rank * 37u + i * 11u + seed) % 61u);
}

/* The call of `kind` on send/recv (send == recv: in place), on `where`'s
 * memory kind and stream. */
static dist_status_t call(dist_comm_t* comm, enum Kind kind, void* send, void* recv, uint64_t count, uint64_t all,
                          dist_dtype_t dtype, dist_op_t op, int memory, cudaStream_t stream, dist_request_t** request) {
  dist_buffer_t s = buffer_of(send, count, dtype), r = buffer_of(recv, count, dtype);
  s.memory_kind = r.memory_kind = memory;
  s.stream = r.stream = memory == DIST_MEMORY_CUDA ? (void*)stream : NULL;
  const int in_place = send == recv;
  switch (kind) {
    case kAllReduce: return dist_all_reduce(comm, in_place ? NULL : &s, &r, op, request);
    case kReduce: return dist_reduce(comm, in_place ? NULL : &s, &r, op, 0, request);
    case kBroadcast: return dist_broadcast(comm, &r, 0, request);
    case kAllGather:
      r.count = all;
      return dist_all_gather(comm, in_place ? NULL : &s, &r, request);
    case kReduceScatter:
      s.count = all;
      if (in_place) r.count = count;
      return dist_reduce_scatter(comm, in_place ? NULL : &s, &r, op, request);
    case kAllToAll:
      s.count = r.count = all;
      return dist_all_to_all(comm, in_place ? NULL : &s, &r, request);
    default: return DIST_ERR_INVALID_ARGUMENT;
  }
}

/* Elements of send and recv for `kind` with `count` per rank. */
static void shape(enum Kind kind, uint64_t count, int n, int in_place, uint64_t* send, uint64_t* recv) {
  const uint64_t all = count * (uint64_t)n;
  *send = kind == kReduceScatter || kind == kAllToAll ? all : count;
  *recv = kind == kAllGather || kind == kAllToAll ? all : count;
  if (in_place && kind == kReduceScatter) *recv = all;
}

static void scenario_matrix(dist_comm_t* comm, int rank, int n, cudaStream_t stream) {
  const uint64_t counts[] = {0, 1, 7, (uint64_t)n + 1, 65537};
  unsigned seed = 1;
  for (int kind = 0; kind < kKinds; ++kind) {
    const int reduces = kind == kAllReduce || kind == kReduce || kind == kReduceScatter;
    for (size_t d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
      for (size_t o = 0; o < (reduces ? sizeof kOps / sizeof kOps[0] : 1); ++o) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
          for (int variant = 0; variant < 4; ++variant, ++seed) {
            const int in_place = variant & 1 || kind == kBroadcast;
            const int with_request = variant >> 1;
            const uint64_t count = counts[c];
            uint64_t send_count, recv_count;
            shape((enum Kind)kind, count, n, in_place, &send_count, &recv_count);
            const size_t element = kElementBytes[d];
            const size_t send_bytes = send_count * element, recv_bytes = recv_count * element;
            const size_t bytes = (send_bytes > recv_bytes ? send_bytes : recv_bytes) + 1;
            unsigned char* host_send = malloc(bytes);
            unsigned char* host_recv = malloc(bytes);
            unsigned char* staged = malloc(bytes);
            fill(host_send, bytes, rank, seed);
            fill(host_recv, bytes, rank + 100, seed);
            void* device_send = NULL;
            void* device_recv = NULL;
            CUDA_OK(cudaMalloc(&device_send, bytes));
            CUDA_OK(cudaMalloc(&device_recv, bytes));
            CUDA_OK(cudaMemcpy(device_send, host_send, bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemcpy(device_recv, in_place ? host_send : host_recv, bytes, cudaMemcpyHostToDevice));
            /* Pageable cudaMemcpy may return before its DMA ends, and the
             * non-blocking stream does not wait for it. */
            CUDA_OK(cudaDeviceSynchronize());
            /* The reference: the same call on host memory. */
            unsigned char* reference_out = in_place ? host_send : host_recv;
            const dist_status_t host = call(comm, (enum Kind)kind, host_send, reference_out, count,
                                            count * (uint64_t)n, kDtypes[d], kOps[o], DIST_MEMORY_HOST, NULL, NULL);
            dist_request_t* request = NULL;
            dist_status_t device = call(comm, (enum Kind)kind, in_place ? device_recv : device_send, device_recv,
                                        count, count * (uint64_t)n, kDtypes[d], kOps[o], DIST_MEMORY_CUDA, stream,
                                        with_request ? &request : NULL);
            if (device == DIST_OK && request != NULL) {
              device = dist_request_wait(request, 60000);
              dist_request_free(request);
            }
            CUDA_OK(cudaStreamSynchronize(stream));
            CUDA_OK(cudaMemcpy(staged, device_recv, bytes, cudaMemcpyDeviceToHost));
            const int root_only = kind == kReduce && rank != 0;
            /* In place, a reduce-scatter's result is recv's first block only. */
            const size_t result_bytes = kind == kReduceScatter ? count * element : recv_bytes;
            const int equal = memcmp(staged, reference_out, result_bytes) == 0;
            CHECK(host == DIST_OK && device == DIST_OK && (root_only || equal),
                  "%s dtype %d op %d count %llu in_place %d request %d: host %s, staged %s, results %s", kKindNames[kind],
                  kDtypes[d], kOps[o], (unsigned long long)count, in_place, with_request, dist_status_string(host),
                  dist_status_string(device), equal ? "equal" : "differ");
            CUDA_OK(cudaFree(device_send));
            CUDA_OK(cudaFree(device_recv));
            free(host_send);
            free(host_recv);
            free(staged);
          }
        }
      }
    }
  }
}

static void scenario_ordering(dist_comm_t* comm, int rank, int n, cudaStream_t stream) {
  enum { kCount = 1 << 20 };
  int32_t* device = NULL;
  int32_t* result = NULL;
  static int32_t host[kCount];
  CUDA_OK(cudaMalloc((void**)&device, kCount * sizeof(int32_t)));
  CUDA_OK(cudaMalloc((void**)&result, kCount * sizeof(int32_t)));
  for (int round = 0; round < 8; ++round) {
    /* Written on the stream just before the call: the call must see it. */
    const unsigned char byte = (unsigned char)(rank + round + 1);
    CUDA_OK(cudaMemsetAsync(device, byte, kCount * sizeof(int32_t), stream));
    dist_buffer_t b = buffer_of(device, kCount, DIST_DTYPE_I32);
    b.memory_kind = DIST_MEMORY_CUDA;
    b.stream = stream;
    dist_request_t* request = NULL;
    CHECK(dist_all_reduce(comm, NULL, &b, DIST_OP_SUM, &request) == DIST_OK, "all_reduce: %s", dist_last_error());
    /* Enqueued after the call, before its request is waited for. */
    CUDA_OK(cudaMemcpyAsync(result, device, kCount * sizeof(int32_t), cudaMemcpyDeviceToDevice, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(host, result, sizeof host, cudaMemcpyDeviceToHost));
    int32_t expected = 0;
    for (int r = 0; r < n; ++r) {
      const uint32_t b8 = (uint32_t)(r + round + 1);
      expected += (int32_t)(b8 | b8 << 8 | b8 << 16 | b8 << 24);
    }
    int wrong = 0;
    for (int i = 0; i < kCount; ++i) wrong += host[i] != expected;
    CHECK(wrong == 0, "round %d: %d of %d elements differ from %d (first %d)", round, wrong, kCount, expected, host[0]);
    if (request != NULL) {
      CHECK(dist_request_wait(request, 60000) == DIST_OK, "wait: %s", dist_last_error());
      dist_request_free(request);
    }
  }
  CUDA_OK(cudaFree(device));
  CUDA_OK(cudaFree(result));
}

static void scenario_mismatch(dist_comm_t* comm, int rank, cudaStream_t stream) {
  enum { kCount = 64 };
  float host[kCount] = {0};
  void* device = NULL;
  CUDA_OK(cudaMalloc(&device, sizeof host));
  dist_buffer_t b = buffer_of(rank == 0 ? device : host, kCount, DIST_DTYPE_F32);
  if (rank == 0) {
    b.memory_kind = DIST_MEMORY_CUDA;
    b.stream = stream;
  }
  const dist_status_t status = dist_all_reduce(comm, NULL, &b, DIST_OP_SUM, NULL);
  CHECK(status == DIST_ERR_MISMATCH && strstr(dist_last_error(), "CUDA") != NULL, "mismatch: %s: %s",
        dist_status_string(status), dist_last_error());
  CUDA_OK(cudaFree(device));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: staged_worker matrix|ordering|mismatch\n");
    return 2;
  }
  /* Every rank on the one device: the staged path, never NCCL. */
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream = NULL;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  dist_context_t* context = join(30000);
  int32_t rank = 0, n = 0;
  dist_comm_t* world = world_of(context, &rank, &n);
  if (strcmp(argv[1], "matrix") == 0) scenario_matrix(world, rank, n, stream);
  else if (strcmp(argv[1], "ordering") == 0) scenario_ordering(world, rank, n, stream);
  else if (strcmp(argv[1], "mismatch") == 0) scenario_mismatch(world, rank, stream);
  else {
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  dist_context_destroy(context);
  CUDA_OK(cudaStreamDestroy(stream));
  printf("%s: %d checks, %d failed\n", argv[1], checks, failures);
  return failures == 0 ? 0 : 1;
}
