/* One rank of test_gpu_strategy: MULTI_WORKER_MIRRORED on GPU replicas
 * (every rank on the machine's GPU 0, so the workers meet through the staged
 * path or the host ring) against the same strategy on a CPU replica, which
 * must give the same bits. Scenarios (argv[1]):
 *   all_reduce auto|ring  dist_replica_all_reduce on device memory for every
 *                         dtype, op and count; integer sums also against
 *                         sums computed here
 *   reduce                dist_strategy_reduce of device values into host
 *                         and device results, axis none and 0
 *   train                 Adam on a variable of the GPU replica (gradients in
 *                         device memory) and of the CPU replica: the same
 *                         weights, bit for bit, on every worker
 *   lost_peer             rank 1 is SIGKILLed between two steps: rank 0's
 *                         device all-reduce fails in bounded time
 *   nccl                  communication NCCL with every rank on one GPU:
 *                         NCCL refuses it, and every rank gets the error
 *                         from its first device all-reduce, in bounded time
 * Exits 0 when every check held. */
#include <cuda_runtime_api.h>
#include <signal.h>

#include <stdint.h>

#include "gpu/gpu_ranks.h"
#include "multiprocess/worker_support.h"


static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I8,  DIST_DTYPE_U8,  DIST_DTYPE_I32,  DIST_DTYPE_U32,
                                       DIST_DTYPE_I64, DIST_DTYPE_U64, DIST_DTYPE_F16,  DIST_DTYPE_BF16,
                                       DIST_DTYPE_F32, DIST_DTYPE_F64};
static const size_t kElementBytes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
static const dist_op_t kOps[] = {DIST_OP_SUM, DIST_OP_PROD, DIST_OP_MIN, DIST_OP_MAX, DIST_OP_MEAN};
static const uint64_t kCounts[] = {0, 1, 7, 65537};

static size_t element_bytes(dist_dtype_t dtype) {
  for (size_t d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
    if (kDtypes[d] == dtype) return kElementBytes[d];
  }
  return 0;
}

/* Small values in every dtype, different per rank and position. */
static void fill(unsigned char* bytes, size_t n, int rank, unsigned seed) {
  for (size_t i = 0; i < n; ++i) bytes[i] = (unsigned char)((rank * 37u + i * 11u + seed) % 61u);
}

static dist_strategy_t* make_strategy(dist_context_t* context, int on_cpu, dist_communication_t communication) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_COMMUNICATION | DIST_STRATEGY_OPT_TIMEOUT_SECONDS;
  options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
  options.communication = communication;
  options.timeout_seconds = 20;
  if (on_cpu) {
    options.field_mask |= DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
    options.num_cpu_devices = 1;
  }
  dist_strategy_t* strategy = NULL;
  if (dist_strategy_create(context, &options, &strategy) != DIST_OK) {
    fprintf(stderr, "strategy: %s\n", dist_last_error());
    exit(2);
  }
  return strategy;
}

/* What one replica call does: all-reduce `host` (pinned, `count` elements)
 * on the replica's memory kind, the result back in `host`. */
struct job {
  unsigned char* host;
  void* device;  /* NULL: all-reduce `host` itself (CPU replica) */
  uint64_t count;
  dist_dtype_t dtype;
  dist_op_t op;
  dist_status_t status;
  char message[256];
  int32_t replica_device;
  void* replica_stream;
};

static dist_status_t all_reduce_job(dist_replica_context_t* replica, void* user_data) {
  struct job* job = user_data;
  dist_replica_device(replica, &job->replica_device);
  dist_replica_stream(replica, &job->replica_stream);
  dist_buffer_t b = buffer_of(job->host, job->count, job->dtype);
  if (job->device != NULL) {
    /* The input is written on the replica's stream just before the call:
     * the all-reduce must be ordered after it. */
    cudaStream_t stream = job->replica_stream;
    const size_t size = job->count * element_bytes(job->dtype);
    CUDA_OK(cudaMemcpyAsync(job->device, job->host, size, cudaMemcpyHostToDevice, stream));
    b.data = job->device;
    b.memory_kind = DIST_MEMORY_CUDA;
    b.stream = stream;
    job->status = dist_replica_all_reduce(replica, job->op, &b);
    CUDA_OK(cudaMemcpyAsync(job->host, job->device, size, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
  } else {
    job->status = dist_replica_all_reduce(replica, job->op, &b);
  }
  if (job->status != DIST_OK) snprintf(job->message, sizeof job->message, "%s", dist_last_error());
  return DIST_OK;
}

static void scenario_all_reduce(dist_context_t* context, int rank, int n, dist_communication_t communication) {
  dist_strategy_t* gpu = make_strategy(context, 0, communication);
  dist_strategy_t* cpu = make_strategy(context, 1, communication);
  unsigned char *on_gpu = NULL, *on_cpu = NULL;
  void* device = NULL;
  const size_t most = 65537 * 8;
  CUDA_OK(cudaMallocHost((void**)&on_gpu, most));
  CUDA_OK(cudaMallocHost((void**)&on_cpu, most));
  CUDA_OK(cudaMalloc(&device, most));
  unsigned seed = 1;
  for (size_t d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
    for (size_t o = 0; o < sizeof kOps / sizeof kOps[0]; ++o) {
      for (size_t c = 0; c < sizeof kCounts / sizeof kCounts[0]; ++c, ++seed) {
        const uint64_t count = kCounts[c];
        const size_t bytes = count * kElementBytes[d];
        fill(on_gpu, bytes, rank, seed);
        memcpy(on_cpu, on_gpu, bytes);
        struct job g = {on_gpu, device, count, kDtypes[d], kOps[o], DIST_OK, "", -2, NULL};
        struct job h = {on_cpu, NULL, count, kDtypes[d], kOps[o], DIST_OK, "", -2, NULL};
        CHECK(dist_strategy_run(gpu, all_reduce_job, &g) == DIST_OK, "run: %s", dist_last_error());
        CHECK(dist_strategy_run(cpu, all_reduce_job, &h) == DIST_OK, "run: %s", dist_last_error());
        CHECK(g.status == DIST_OK, "dtype %d op %d count %llu on the GPU: %s", kDtypes[d], kOps[o],
              (unsigned long long)count, g.message);
        CHECK(h.status == DIST_OK, "dtype %d op %d count %llu on the CPU: %s", kDtypes[d], kOps[o],
              (unsigned long long)count, h.message);
        CHECK(memcmp(on_gpu, on_cpu, bytes) == 0, "dtype %d op %d count %llu: the GPU replicas' result differs from "
              "the CPU replicas'", kDtypes[d], kOps[o], (unsigned long long)count);
        CHECK(g.replica_device == 0 && g.replica_stream != NULL, "GPU replica: device %d stream %p",
              g.replica_device, g.replica_stream);
        CHECK(h.replica_device == -1 && h.replica_stream == NULL, "CPU replica: device %d stream %p",
              h.replica_device, h.replica_stream);
        if (kDtypes[d] == DIST_DTYPE_I32 && kOps[o] == DIST_OP_SUM) {
          /* An independent reference: the sum over ranks of what fill wrote. */
          for (uint64_t i = 0; i < count; ++i) {
            /* Wrapping as the library's integer sums do: in unsigned arithmetic. */
            uint32_t expected = 0;
            for (int r = 0; r < n; ++r) {
              unsigned char v[4];
              for (int k = 0; k < 4; ++k) v[k] = (unsigned char)((r * 37u + (i * 4 + k) * 11u + seed) % 61u);
              uint32_t x;
              memcpy(&x, v, 4);
              expected += x;
            }
            uint32_t got;
            memcpy(&got, on_gpu + i * 4, 4);
            if (got != expected) {
              CHECK(0, "i32 sum element %llu: %u, expected %u", (unsigned long long)i, got, expected);
              break;
            }
          }
        }
      }
    }
  }
  CUDA_OK(cudaFree(device));
  CUDA_OK(cudaFreeHost(on_gpu));
  CUDA_OK(cudaFreeHost(on_cpu));
  dist_strategy_destroy(cpu);
  dist_strategy_destroy(gpu);
}

static void scenario_reduce(dist_context_t* context, int rank) {
  dist_strategy_t* gpu = make_strategy(context, 0, DIST_COMMUNICATION_AUTO);
  dist_strategy_t* cpu = make_strategy(context, 1, DIST_COMMUNICATION_AUTO);
  enum { kRows = 3, kColumns = 5 };
  float values[kRows * kColumns], host_result[kRows * kColumns], reference[kRows * kColumns];
  for (int i = 0; i < kRows * kColumns; ++i) values[i] = (float)(rank + 1) * 0.25f + (float)i;
  void *device_values = NULL, *device_result = NULL;
  CUDA_OK(cudaMalloc(&device_values, sizeof values));
  CUDA_OK(cudaMalloc(&device_result, sizeof values));
  CUDA_OK(cudaMemcpy(device_values, values, sizeof values, cudaMemcpyHostToDevice));
  /* Pageable cudaMemcpy may return before its DMA ends, and the replicas'
   * non-blocking streams do not wait for it. */
  CUDA_OK(cudaDeviceSynchronize());
  const int32_t axes[] = {DIST_AXIS_NONE, 0};
  const dist_op_t ops[] = {DIST_OP_SUM, DIST_OP_MEAN};
  for (int a = 0; a < 2; ++a) {
    for (int o = 0; o < 2; ++o) {
      const uint64_t out_count = axes[a] == 0 ? kColumns : kRows * kColumns;
      dist_buffer_t host_in = buffer_of(values, kRows * kColumns, DIST_DTYPE_F32);
      dist_buffer_t ref_out = buffer_of(reference, out_count, DIST_DTYPE_F32);
      CHECK(dist_strategy_reduce(cpu, ops[o], &host_in, 1, axes[a], &ref_out) == DIST_OK, "cpu reduce: %s",
            dist_last_error());
      dist_buffer_t device_in = buffer_of(device_values, kRows * kColumns, DIST_DTYPE_F32);
      device_in.memory_kind = DIST_MEMORY_CUDA;
      dist_buffer_t to_host = buffer_of(host_result, out_count, DIST_DTYPE_F32);
      CHECK(dist_strategy_reduce(gpu, ops[o], &device_in, 1, axes[a], &to_host) == DIST_OK, "reduce to host: %s",
            dist_last_error());
      CHECK(memcmp(host_result, reference, out_count * sizeof(float)) == 0, "axis %d op %d: device values, host "
            "result differs", axes[a], ops[o]);
      dist_buffer_t to_device = buffer_of(device_result, out_count, DIST_DTYPE_F32);
      to_device.memory_kind = DIST_MEMORY_CUDA;
      CHECK(dist_strategy_reduce(gpu, ops[o], &device_in, 1, axes[a], &to_device) == DIST_OK,
            "reduce to device: %s", dist_last_error());
      memset(host_result, 0, sizeof host_result);
      CUDA_OK(cudaMemcpy(host_result, device_result, out_count * sizeof(float), cudaMemcpyDeviceToHost));
      CHECK(memcmp(host_result, reference, out_count * sizeof(float)) == 0, "axis %d op %d: device result differs",
            axes[a], ops[o]);
    }
  }
  CUDA_OK(cudaFree(device_values));
  CUDA_OK(cudaFree(device_result));
  dist_strategy_destroy(cpu);
  dist_strategy_destroy(gpu);
}

/* Two variables trained on the GPU replica and on a CPU replica of the same
 * workers, with Adam, gradients in device memory on the GPU: the same bits
 * on every worker and on both. */
static void scenario_train(dist_context_t* context, int rank) {
  enum { kWeights = 2049, kSteps = 3 };
  dist_strategy_t* strategies[2] = {make_strategy(context, 0, DIST_COMMUNICATION_AUTO),
                                    make_strategy(context, 1, DIST_COMMUNICATION_AUTO)};
  float weights[2][kWeights];
  float gradient[kWeights];
  void* device = NULL;
  CUDA_OK(cudaMalloc(&device, sizeof gradient));
  for (int s = 0; s < 2; ++s) {
    float initial[kWeights];
    for (int i = 0; i < kWeights; ++i) initial[i] = (float)(i % 13) / 4.0f - 1.5f;
    int64_t shape[1] = {kWeights};
    dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
    options.field_mask = DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
    options.shape = shape;
    options.rank = 1;
    options.initial_value = initial;
    dist_variable_t* v = NULL;
    CHECK(dist_variable_create(strategies[s], &options, &v) == DIST_OK, "variable: %s", dist_last_error());
    dist_optimizer_options_t adam = DIST_OPTIMIZER_OPTIONS_INIT;
    adam.field_mask = DIST_OPTIMIZER_OPT_KIND;
    adam.kind = DIST_OPTIMIZER_ADAM;
    dist_optimizer_t* optimizer = NULL;
    CHECK(dist_optimizer_create(&adam, &optimizer) == DIST_OK, "optimizer: %s", dist_last_error());
    for (int step = 0; step < kSteps; ++step) {
      for (int i = 0; i < kWeights; ++i) gradient[i] = (float)((rank * 5 + step * 3 + i) % 19 - 9) / 8.0f;
      dist_buffer_t g = buffer_of(gradient, kWeights, DIST_DTYPE_F32);
      if (s == 0) {
        CUDA_OK(cudaMemcpy(device, gradient, sizeof gradient, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize()); /* the DMA may outlast cudaMemcpy (above) */
        g.data = device;
        g.memory_kind = DIST_MEMORY_CUDA;
      }
      CHECK(dist_strategy_apply_gradients(strategies[s], &v, &g, 1, optimizer) == DIST_OK, "step %d: %s", step,
            dist_last_error());
    }
    dist_buffer_t out = buffer_of(weights[s], kWeights, DIST_DTYPE_F32);
    CHECK(dist_variable_read(v, NULL, &out) == DIST_OK, "read: %s", dist_last_error());
    dist_optimizer_destroy(optimizer);
    dist_variable_destroy(v);
  }
  CHECK(memcmp(weights[0], weights[1], sizeof weights[0]) == 0,
        "the weights trained on the GPU replica differ from those on the CPU replica");
  /* The same on every worker: rank 0's weights, broadcast, against ours. */
  float first[kWeights];
  memcpy(first, weights[0], sizeof first);
  dist_comm_t* world = NULL;
  int32_t unused = 0;
  world = world_of(context, &unused, NULL);
  dist_buffer_t b = buffer_of(first, kWeights, DIST_DTYPE_F32);
  CHECK(dist_broadcast(world, &b, 0, NULL) == DIST_OK, "broadcast: %s", dist_last_error());
  CHECK(memcmp(first, weights[0], sizeof first) == 0, "the workers' weights differ");
  CUDA_OK(cudaFree(device));
  dist_strategy_destroy(strategies[0]);
  dist_strategy_destroy(strategies[1]);
}

/* A worker killed in the middle of training: rank 1 dies by SIGKILL once
 * the workers have met; rank 0's next device all-reduce fails with
 * PEER_FAILED or TIMEOUT within the strategy's deadline (10 s) plus 5 s. */
static void scenario_lost_peer(dist_context_t* context, int rank) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_TIMEOUT_SECONDS;
  options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
  options.timeout_seconds = 10;
  dist_strategy_t* strategy = NULL;
  if (dist_strategy_create(context, &options, &strategy) != DIST_OK) {
    fprintf(stderr, "strategy: %s\n", dist_last_error());
    exit(2);
  }
  unsigned char host[4096];
  void* device = NULL;
  CUDA_OK(cudaMalloc(&device, sizeof host));
  fill(host, sizeof host, rank, 9);
  struct job job = {host, device, sizeof host / 4, DIST_DTYPE_F32, DIST_OP_SUM, DIST_OK, "", -2, NULL};
  CHECK(dist_strategy_run(strategy, all_reduce_job, &job) == DIST_OK && job.status == DIST_OK, "first step: %s",
        job.message);
  fflush(stdout);
  if (rank == 1) raise(SIGKILL);
  const double start = now_seconds();
  CHECK(dist_strategy_run(strategy, all_reduce_job, &job) == DIST_OK, "run: %s", dist_last_error());
  const double took = now_seconds() - start;
  CHECK(job.status == DIST_ERR_PEER_FAILED || job.status == DIST_ERR_TIMEOUT,
        "after the peer died: status %d (%s)", job.status, job.message);
  CHECK(took < 15, "the failure took %.1f s", took);
  printf("lost_peer: failed after %.1f s: %s\n", took, job.message);
  CUDA_OK(cudaFree(device));
  dist_strategy_destroy(strategy);
}

static void scenario_nccl(dist_context_t* context) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_COMMUNICATION | DIST_STRATEGY_OPT_TIMEOUT_SECONDS;
  options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
  options.communication = DIST_COMMUNICATION_NCCL;
  options.timeout_seconds = 15;
  dist_strategy_t* strategy = NULL;
  const dist_status_t created = dist_strategy_create(context, &options, &strategy);
  if (created == DIST_ERR_UNSUPPORTED) {
    printf("nccl: NCCL is not usable here (%s): creation refused it, as it must\n", dist_last_error());
    return;
  }
  CHECK(created == DIST_OK, "create: %s", dist_last_error());
  if (created != DIST_OK) return;
  unsigned char host[64];
  void* device = NULL;
  CUDA_OK(cudaMalloc(&device, sizeof host));
  fill(host, sizeof host, 0, 3);
  struct job job = {host, device, 16, DIST_DTYPE_F32, DIST_OP_SUM, DIST_OK, "", -2, NULL};
  const double start = now_seconds();
  CHECK(dist_strategy_run(strategy, all_reduce_job, &job) == DIST_OK, "run: %s", dist_last_error());
  const double took = now_seconds() - start;
  CHECK(job.status == DIST_ERR_UNAVAILABLE, "NCCL over two ranks on one GPU: status %d, expected UNAVAILABLE (%s)",
        job.status, job.message);
  CHECK(strstr(job.message, "NCCL") != NULL, "the error does not name NCCL: %s", job.message);
  CHECK(took < 40, "the failure took %.1f s", took);
  printf("nccl: every rank failed in %.1f s: %s\n", took, job.message);
  CUDA_OK(cudaFree(device));
  dist_strategy_destroy(strategy);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gpu_strategy_worker all_reduce auto|ring | reduce | train | lost_peer | nccl\n");
    return 2;
  }
  dist_context_t* context = join(30000);
  int32_t rank = 0, n = 0;
  world_of(context, &rank, &n);
  if (strcmp(argv[1], "all_reduce") == 0 && argc > 2) {
    scenario_all_reduce(context, rank, n, strcmp(argv[2], "ring") == 0 ? DIST_COMMUNICATION_RING
                                                                       : DIST_COMMUNICATION_AUTO);
  } else if (strcmp(argv[1], "reduce") == 0) {
    scenario_reduce(context, rank);
  } else if (strcmp(argv[1], "lost_peer") == 0) {
    scenario_lost_peer(context, rank);
  } else if (strcmp(argv[1], "train") == 0) {
    scenario_train(context, rank);
  } else if (strcmp(argv[1], "nccl") == 0) {
    scenario_nccl(context);
  } else {
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  dist_context_destroy(context);
  printf("%s: %d checks, %d failed\n", argv[1], checks, failures);
  return failures == 0 ? 0 : 1;
}
