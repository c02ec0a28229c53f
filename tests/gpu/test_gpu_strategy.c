/* Strategies on GPU replicas: MIRRORED over this process's GPUs with each of
 * tf.distribute's cross-device ops, against the same strategy on as many CPU
 * replicas (host arithmetic); and MULTI_WORKER_MIRRORED across 2 and 3
 * processes sharing GPU 0 (gpu_strategy_worker.c says what each scenario checks).
 * Skips, saying why, where no CUDA device is usable. Every rank is bounded in
 * time and reaped by PID. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <signal.h>
#include <unistd.h>

#include "gpu/device_check.h"

#define DIST_GPU_LAUNCHER
#include "gpu/gpu_ranks.h"

static const char* kToken = "test-token-gpu-strategy-0123456789";

/* Every worker on GPU 0, one replica each, whatever the machine has. */
static const char* const kOnGpu0[] = {"CUDA_VISIBLE_DEVICES=0", NULL};

static void run_ranks(int n, const char* scenario, const char* argument, double seconds) {
  const char* args[] = {scenario, argument, NULL};
  run_gpu_ranks("DIST_GPU_STRATEGY_WORKER", kToken, n, args, kOnGpu0, seconds);
}

static const dist_dtype_t kDtypes[] = {DIST_DTYPE_I32, DIST_DTYPE_I64, DIST_DTYPE_U8, DIST_DTYPE_F16,
                                       DIST_DTYPE_BF16, DIST_DTYPE_F32, DIST_DTYPE_F64};
static const size_t kElementBytes[] = {4, 8, 1, 2, 2, 4, 8};
static const dist_op_t kOps[] = {DIST_OP_SUM, DIST_OP_PROD, DIST_OP_MIN, DIST_OP_MAX, DIST_OP_MEAN};
enum { kMaxReplicas = 16, kCount = 4099 };

struct mirrored_job {
  size_t bytes;
  uint64_t count;
  dist_dtype_t dtype;
  dist_op_t op;
  unsigned seed;
  int on_gpu;
  unsigned char* out[kMaxReplicas]; /* each replica's result, host memory */
  dist_status_t status[kMaxReplicas];
  int device_ok[kMaxReplicas];
};

static void fill(unsigned char* bytes, size_t n, int replica, unsigned seed) {
  for (size_t i = 0; i < n; ++i) bytes[i] = (unsigned char)((replica * 37u + i * 11u + seed) % 61u);
}

static dist_status_t mirrored_replica(dist_replica_context_t* replica, void* user_data) {
  struct mirrored_job* job = user_data;
  int32_t index = 0, device = -2;
  void* stream = NULL;
  dist_replica_local_index(replica, &index);
  dist_replica_device(replica, &device);
  dist_replica_stream(replica, &stream);
  unsigned char* host = job->out[index];
  fill(host, job->bytes, index, job->seed);
  dist_buffer_t b;
  memset(&b, 0, sizeof b);
  b.count = job->count;
  b.dtype = job->dtype;
  if (!job->on_gpu) {
    b.data = host;
    job->device_ok[index] = device == -1 && stream == NULL;
    job->status[index] = dist_replica_all_reduce(replica, job->op, &b);
    return DIST_OK;
  }
  int current = -1;
  cudaGetDevice(&current);
  job->device_ok[index] = device == index && current == device && stream != NULL;
  void* data = NULL;
  if (cudaMalloc(&data, job->bytes) != cudaSuccess) return DIST_ERR_NO_MEMORY;
  cudaMemcpyAsync(data, host, job->bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream);
  b.data = data;
  b.memory_kind = DIST_MEMORY_CUDA;
  b.stream = stream;
  job->status[index] = dist_replica_all_reduce(replica, job->op, &b);
  cudaMemcpyAsync(host, data, job->bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream);
  cudaStreamSynchronize((cudaStream_t)stream);
  cudaFree(data);
  return DIST_OK;
}

static dist_strategy_t* mirrored(int cpu_devices, dist_cross_device_ops_t ops, const char* reduce_to) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND;
  options.kind = DIST_STRATEGY_MIRRORED;
  if (cpu_devices > 0) {
    options.field_mask |= DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
    options.num_cpu_devices = cpu_devices;
  } else {
    options.field_mask |= DIST_STRATEGY_OPT_CROSS_DEVICE_OPS;
    options.cross_device_ops = ops;
    if (reduce_to != NULL) {
      options.field_mask |= DIST_STRATEGY_OPT_REDUCE_TO_DEVICE;
      options.reduce_to_device = reduce_to;
    }
  }
  dist_strategy_t* strategy = NULL;
  const dist_status_t status = dist_strategy_create(NULL, &options, &strategy);
  if (status == DIST_ERR_UNSUPPORTED && ops == DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE) return NULL;
  assert_dist_ok(status);
  return strategy;
}

/* Whether the two results must be the same bits: integers always; floats
 * where the GPUs add in the host's order (reduction to one device, or two
 * replicas, where every order is the same). */
static int exact(dist_dtype_t dtype, dist_cross_device_ops_t ops, int replicas) {
  const int is_float = dtype == DIST_DTYPE_F16 || dtype == DIST_DTYPE_BF16 || dtype == DIST_DTYPE_F32 ||
                       dtype == DIST_DTYPE_F64;
  if (!is_float) return 1;
  if (ops == DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE) return 0;
  return ops == DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE || replicas <= 2;
}

static void check_mirrored(dist_cross_device_ops_t ops, const char* reduce_to) {
  dist_strategy_t* gpu = mirrored(0, ops, reduce_to);
  if (gpu == NULL) {
    print_message("NcclAllReduce: NCCL not usable here, refused at creation\n");
    return;
  }
  int32_t replicas = 0;
  assert_dist_ok(dist_strategy_num_local_replicas(gpu, &replicas));
  assert_true(replicas >= 1 && replicas <= kMaxReplicas);
  if (replicas < 2) {
    /* A green run here is not coverage of the ops themselves. */
    print_message("cross_device_ops %d: one GPU, one replica: the ops combine nothing here (they need 2+ GPUs)\n",
                  ops);
  }
  dist_strategy_t* cpu = mirrored(replicas, 0, NULL);
  unsigned seed = 5;
  for (size_t d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
    for (size_t o = 0; o < sizeof kOps / sizeof kOps[0]; ++o, ++seed) {
      struct mirrored_job g, h;
      memset(&g, 0, sizeof g);
      g.count = kCount;
      g.bytes = kCount * kElementBytes[d];
      g.dtype = kDtypes[d];
      g.op = kOps[o];
      g.seed = seed;
      h = g;
      g.on_gpu = 1;
      for (int r = 0; r < replicas; ++r) {
        assert_non_null(g.out[r] = malloc(g.bytes));
        assert_non_null(h.out[r] = malloc(h.bytes));
      }
      assert_dist_ok(dist_strategy_run(gpu, mirrored_replica, &g));
      assert_dist_ok(dist_strategy_run(cpu, mirrored_replica, &h));
      for (int r = 0; r < replicas; ++r) {
        assert_int_equal(g.status[r], DIST_OK);
        assert_int_equal(h.status[r], DIST_OK);
        assert_true(g.device_ok[r]);
        assert_true(h.device_ok[r]);
        /* Every replica holds the same result. */
        assert_memory_equal(g.out[r], g.out[0], g.bytes);
      }
      if (exact(kDtypes[d], ops, replicas)) {
        if (memcmp(g.out[0], h.out[0], g.bytes) != 0) {
          fail_msg("cross_device_ops %d (%s), dtype %d, op %d: the GPU replicas' result differs from the CPU "
                   "replicas'", ops, reduce_to ? reduce_to : "default", kDtypes[d], kOps[o]);
        }
      } else if (kDtypes[d] == DIST_DTYPE_F32) {
        for (uint64_t i = 0; i < kCount; ++i) {
          float a, b;
          memcpy(&a, g.out[0] + i * 4, 4);
          memcpy(&b, h.out[0] + i * 4, 4);
          if (!(fabsf(a - b) <= 1e-5f * fabsf(b) + 1e-30f) && !(a != a && b != b)) {
            fail_msg("f32 op %d element %llu: %g on the GPUs, %g on the CPUs", kOps[o], (unsigned long long)i, a, b);
          }
        }
      }
      for (int r = 0; r < replicas; ++r) {
        free(g.out[r]);
        free(h.out[r]);
      }
    }
  }
  dist_strategy_destroy(cpu);
  dist_strategy_destroy(gpu);
}

static void test_mirrored_cross_device_ops(void** state) {
  (void)state;
  check_mirrored(DIST_CROSS_DEVICE_OPS_AUTO, NULL);
  check_mirrored(DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, NULL);
  check_mirrored(DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "CPU:0");
  check_mirrored(DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "/device:GPU:0");
  check_mirrored(DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY, NULL);
  check_mirrored(DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE, NULL);
}

/* CUDA memory where it cannot go: the calls that take host memory only say
 * so, and variables of CPU replicas (held in host memory) refuse it. */
static void test_device_memory_arguments(void** state) {
  (void)state;
  dist_strategy_t* gpu = mirrored(0, DIST_CROSS_DEVICE_OPS_AUTO, NULL);
  dist_cross_device_ops_t ops = -1;
  assert_dist_ok(dist_strategy_cross_device_ops(gpu, &ops));
  assert_true(ops == DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE || ops == DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE);
  dist_strategy_t* cpu = mirrored(1, 0, NULL);
  float init[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
  options.field_mask = DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
  options.shape = shape;
  options.rank = 1;
  options.initial_value = init;
  dist_variable_t* on_host = NULL;
  dist_variable_t* on_gpus = NULL;
  assert_dist_ok(dist_variable_create(cpu, &options, &on_host));
  assert_dist_ok(dist_variable_create(gpu, &options, &on_gpus));
  void* device = NULL;
  assert_int_equal(cudaMalloc(&device, sizeof init), cudaSuccess);
  dist_buffer_t b;
  memset(&b, 0, sizeof b);
  b.data = device;
  b.count = 4;
  b.dtype = DIST_DTYPE_F32;
  b.memory_kind = DIST_MEMORY_CUDA;
  assert_dist_error(dist_variable_assign(on_host, NULL, &b), DIST_ERR_INVALID_ARGUMENT, "held in host memory");
  assert_dist_error(dist_variable_read(on_host, NULL, &b), DIST_ERR_INVALID_ARGUMENT, "held in host memory");
  assert_dist_error(dist_variable_apply_gradient(on_gpus, NULL, &b), DIST_ERR_UNSUPPORTED, "takes host memory only");
  /* The GPU replicas' copy takes it, and gives it back. */
  assert_dist_ok(dist_variable_read(on_gpus, NULL, &b));
  float back[4] = {0};
  cudaMemcpy(back, device, sizeof back, cudaMemcpyDeviceToHost);
  assert_memory_equal(back, init, sizeof init);
  cudaFree(device);
  dist_variable_destroy(on_host);
  dist_variable_destroy(on_gpus);
  dist_strategy_destroy(cpu);
  dist_strategy_destroy(gpu);
}

/* ---- Variables and apply_gradients on the GPU replicas --------------------------- */

enum { kWeights = 3001, kSteps = 4 };

struct train_job {
  dist_strategy_t* strategy;
  dist_variable_t* vars[2];
  dist_optimizer_t* optimizer;
  int on_gpu;
  int step;
  dist_status_t status;
};

/* Replica r's gradient of weight i at `step` (mean over replicas differs
 * from any one replica's). */
static double gradient_value(int replica, int step, size_t i) {
  return (double)((int)((replica * 13 + step * 7 + (int)i * 3) % 23) - 11) / 16.0;
}

static void fill_gradients(int replica, int step, float* f32, double* f64) {
  for (size_t i = 0; i < kWeights; ++i) {
    f32[i] = (float)gradient_value(replica, step, i);
    f64[i] = gradient_value(replica, step, i) / 3.0;
  }
}

/* The step from cross-replica context, each replica's gradients in host or
 * device memory (on its own GPU). */
static void train_step(struct train_job* job, int replicas) {
  dist_buffer_t grads[2 * kMaxReplicas];
  float* f32[kMaxReplicas];
  double* f64[kMaxReplicas];
  void* device[2 * kMaxReplicas] = {0};
  for (int r = 0; r < replicas; ++r) {
    f32[r] = malloc(kWeights * sizeof(float));
    f64[r] = malloc(kWeights * sizeof(double));
    fill_gradients(r, job->step, f32[r], f64[r]);
    memset(&grads[2 * r], 0, 2 * sizeof(dist_buffer_t));
    grads[2 * r] = (dist_buffer_t){f32[r], kWeights, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    grads[2 * r + 1] = (dist_buffer_t){f64[r], kWeights, DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
    if (job->on_gpu && r % 2 == 0) { /* device memory on even replicas, host memory on odd ones */
      assert_int_equal(cudaSetDevice(r), cudaSuccess);
      assert_int_equal(cudaMalloc(&device[2 * r], kWeights * sizeof(float)), cudaSuccess);
      assert_int_equal(cudaMalloc(&device[2 * r + 1], kWeights * sizeof(double)), cudaSuccess);
      cudaMemcpy(device[2 * r], f32[r], kWeights * sizeof(float), cudaMemcpyHostToDevice);
      cudaMemcpy(device[2 * r + 1], f64[r], kWeights * sizeof(double), cudaMemcpyHostToDevice);
      /* Pageable cudaMemcpy may return before its DMA ends, and the
       * replicas' non-blocking streams do not wait for it. */
      assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
      grads[2 * r].data = device[2 * r];
      grads[2 * r].memory_kind = DIST_MEMORY_CUDA;
      grads[2 * r + 1].data = device[2 * r + 1];
      grads[2 * r + 1].memory_kind = DIST_MEMORY_CUDA;
    }
  }
  cudaSetDevice(0);
  assert_dist_ok(dist_strategy_apply_gradients(job->strategy, job->vars, grads, 2, job->optimizer));
  for (int r = 0; r < replicas; ++r) {
    free(f32[r]);
    free(f64[r]);
    cudaFree(device[2 * r]);
    cudaFree(device[2 * r + 1]);
  }
}

/* num_packs > 0: hierarchical copies (which take num_packs) instead of the
 * reduction to one device. */
static dist_strategy_t* training_strategy_packed(dist_strategy_kind_t kind, int cpu_devices, int num_packs) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_BYTES_PER_PACK;
  options.kind = kind;
  options.bytes_per_pack = 4096; /* several buckets, variables split across them */
  if (cpu_devices > 0) {
    options.field_mask |= DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
    options.num_cpu_devices = cpu_devices;
  } else if (kind == DIST_STRATEGY_MIRRORED && num_packs > 0) {
    options.field_mask |= DIST_STRATEGY_OPT_CROSS_DEVICE_OPS | DIST_STRATEGY_OPT_NUM_PACKS;
    options.cross_device_ops = DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY;
    options.num_packs = num_packs;
  } else if (kind == DIST_STRATEGY_MIRRORED) {
    /* The host's order of sums, so that the bits must match. */
    options.field_mask |= DIST_STRATEGY_OPT_CROSS_DEVICE_OPS;
    options.cross_device_ops = DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE;
  }
  dist_strategy_t* strategy = NULL;
  assert_dist_ok(dist_strategy_create(NULL, &options, &strategy));
  return strategy;
}

/* The same steps on the GPUs and on the CPUs. */
static void train_both(struct train_job* gpu, struct train_job* cpu, int replicas) {
  for (int step = 0; step < kSteps; ++step) {
    gpu->step = cpu->step = step;
    train_step(gpu, replicas);
    train_step(cpu, replicas);
  }
}

/* Their optimizers and strategies (the variables go first, by the caller). */
static void release_training(struct train_job* gpu, struct train_job* cpu) {
  dist_optimizer_destroy(gpu->optimizer);
  dist_optimizer_destroy(cpu->optimizer);
  dist_strategy_destroy(gpu->strategy);
  dist_strategy_destroy(cpu->strategy);
}

static dist_strategy_t* training_strategy_of(dist_strategy_kind_t kind, int cpu_devices) {
  return training_strategy_packed(kind, cpu_devices, 0);
}

static void make_variables(struct train_job* job, dist_optimizer_kind_t kind) {
  float w32[kWeights];
  double w64[kWeights];
  for (size_t i = 0; i < kWeights; ++i) {
    w32[i] = (float)((int)(i % 17) - 8) / 8.0f;
    w64[i] = (double)((int)(i % 11) - 5) / 7.0;
  }
  int64_t shape[1] = {kWeights};
  const void* initial[2] = {w32, w64};
  const dist_dtype_t dtypes[2] = {DIST_DTYPE_F32, DIST_DTYPE_F64};
  for (int v = 0; v < 2; ++v) {
    dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
    options.field_mask = DIST_VARIABLE_OPT_DTYPE | DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE;
    options.dtype = dtypes[v];
    options.shape = shape;
    options.rank = 1;
    options.initial_value = initial[v];
    assert_dist_ok(dist_variable_create(job->strategy, &options, &job->vars[v]));
  }
  dist_optimizer_options_t optimizer = DIST_OPTIMIZER_OPTIONS_INIT;
  optimizer.field_mask = DIST_OPTIMIZER_OPT_KIND | DIST_OPTIMIZER_OPT_NESTEROV;
  optimizer.kind = kind;
  optimizer.nesterov = 1;
  assert_dist_ok(dist_optimizer_create(&optimizer, &job->optimizer));
}

/* Every copy of every variable, on the GPUs and on the CPUs, after the same
 * steps: the same bits (the device kernels follow the host's rules). */
static void check_apply_gradients_on_gpus(int num_packs) {
  const dist_optimizer_kind_t kinds[] = {DIST_OPTIMIZER_SGD, DIST_OPTIMIZER_MOMENTUM, DIST_OPTIMIZER_ADAM,
                                         DIST_OPTIMIZER_ADAGRAD};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    struct train_job gpu = {training_strategy_packed(DIST_STRATEGY_MIRRORED, 0, num_packs), {NULL, NULL}, NULL, 1, 0,
                            DIST_OK};
    int32_t replicas = 0;
    assert_dist_ok(dist_strategy_num_local_replicas(gpu.strategy, &replicas));
    if (num_packs > 0 && replicas > 2) {
      /* Hierarchical copies add the halves last: not the CPU's order. */
      print_message("num_packs: %d GPUs, not compared bit for bit\n", replicas);
      dist_strategy_destroy(gpu.strategy);
      return;
    }
    struct train_job cpu = {training_strategy_of(DIST_STRATEGY_MIRRORED, replicas), {NULL, NULL}, NULL, 0, 0,
                            DIST_OK};
    make_variables(&gpu, kinds[k]);
    make_variables(&cpu, kinds[k]);
    int32_t copies = 0;
    assert_dist_ok(dist_variable_num_copies(gpu.vars[0], &copies));
    assert_int_equal(copies, replicas);
    train_both(&gpu, &cpu, replicas);
    for (int v = 0; v < 2; ++v) {
      const size_t bytes = kWeights * (v == 0 ? sizeof(float) : sizeof(double));
      unsigned char* expected = malloc(bytes);
      unsigned char* got = malloc(bytes);
      void* device = NULL;
      assert_int_equal(cudaMalloc(&device, bytes), cudaSuccess);
      dist_buffer_t out = {expected, kWeights, v == 0 ? DIST_DTYPE_F32 : DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
      assert_dist_ok(dist_variable_read_copy(cpu.vars[v], 0, &out));
      for (int r = 0; r < replicas; ++r) {
        dist_buffer_t to_host = out;
        to_host.data = got;
        assert_dist_ok(dist_variable_read_copy(gpu.vars[v], r, &to_host));
        if (memcmp(got, expected, bytes) != 0) {
          fail_msg("optimizer %d, variable %d, copy %d: the GPU replicas' weights differ from the CPU replicas'",
                   kinds[k], v, r);
        }
        /* The same copy read into device memory. */
        dist_buffer_t to_device = out;
        to_device.data = device;
        to_device.memory_kind = DIST_MEMORY_CUDA;
        assert_dist_ok(dist_variable_read_copy(gpu.vars[v], r, &to_device));
        memset(got, 0, bytes);
        cudaMemcpy(got, device, bytes, cudaMemcpyDeviceToHost);
        assert_memory_equal(got, expected, bytes);
      }
      cudaFree(device);
      free(expected);
      free(got);
      dist_variable_destroy(gpu.vars[v]);
      dist_variable_destroy(cpu.vars[v]);
    }
    release_training(&gpu, &cpu);
  }
}

static void test_apply_gradients_on_gpus(void** state) {
  (void)state;
  check_apply_gradients_on_gpus(0);
}

/* TF's num_packs: 3001 weights of each dtype in 3 uneven packs. */
static void test_apply_gradients_in_packs(void** state) {
  (void)state;
  check_apply_gradients_on_gpus(3);
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CROSS_DEVICE_OPS | DIST_STRATEGY_OPT_NUM_PACKS;
  options.kind = DIST_STRATEGY_MIRRORED;
  options.cross_device_ops = DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY;
  dist_strategy_t* strategy = NULL;
  options.num_packs = 0;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "num_packs 0");
  options.num_packs = 65;
  assert_dist_error(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT, "num_packs 65");
  options.kind = DIST_STRATEGY_CENTRAL_STORAGE;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_PACKS;
  options.num_packs = 2;
  assert_int_equal(dist_strategy_create(NULL, &options, &strategy), DIST_ERR_INVALID_ARGUMENT);
  assert_null(strategy);
}

/* CENTRAL_STORAGE with one GPU keeps its one copy there (TF's placement),
 * and trains it as one CPU device does, bit for bit; with more GPUs, on the
 * host. */
static void test_central_storage_on_gpus(void** state) {
  (void)state;
  struct train_job gpu = {training_strategy_of(DIST_STRATEGY_CENTRAL_STORAGE, 0), {NULL, NULL}, NULL, 1, 0, DIST_OK};
  int32_t replicas = 0;
  assert_dist_ok(dist_strategy_num_local_replicas(gpu.strategy, &replicas));
  struct train_job cpu = {training_strategy_of(DIST_STRATEGY_CENTRAL_STORAGE, replicas), {NULL, NULL}, NULL, 0, 0,
                          DIST_OK};
  make_variables(&gpu, DIST_OPTIMIZER_ADAM);
  make_variables(&cpu, DIST_OPTIMIZER_ADAM);
  int32_t copies = 0;
  assert_dist_ok(dist_variable_num_copies(gpu.vars[0], &copies));
  assert_int_equal(copies, 1);
  /* Where the copy lives: a copy on the host refuses CUDA memory. (With
   * several GPUs the steps below also stage the GPUs' gradients to the host.) */
  void* device_out = NULL;
  assert_int_equal(cudaMalloc(&device_out, kWeights * sizeof(float)), cudaSuccess);
  dist_buffer_t d = {device_out, kWeights, DIST_DTYPE_F32, DIST_MEMORY_CUDA, NULL};
  if (replicas == 1) {
    assert_dist_ok(dist_variable_read_copy(gpu.vars[0], 0, &d));
  } else {
    assert_dist_error(dist_variable_read_copy(gpu.vars[0], 0, &d), DIST_ERR_INVALID_ARGUMENT, "held in host memory");
  }
  cudaFree(device_out);
  train_both(&gpu, &cpu, replicas);
  for (int v = 0; v < 2; ++v) {
    const size_t bytes = kWeights * (v == 0 ? sizeof(float) : sizeof(double));
    unsigned char* expected = malloc(bytes);
    unsigned char* got = malloc(bytes);
    dist_buffer_t out = {expected, kWeights, v == 0 ? DIST_DTYPE_F32 : DIST_DTYPE_F64, DIST_MEMORY_HOST, NULL};
    assert_dist_ok(dist_variable_read(cpu.vars[v], NULL, &out));
    out.data = got;
    assert_dist_ok(dist_variable_read(gpu.vars[v], NULL, &out));
    assert_memory_equal(got, expected, bytes);
    free(expected);
    free(got);
    dist_variable_destroy(gpu.vars[v]);
    dist_variable_destroy(cpu.vars[v]);
  }
  release_training(&gpu, &cpu);
}

/* Assignments on the GPU replicas' copies, from host and device memory, in
 * cross-replica and replica context, against the same on CPU replicas. */
struct assign_job {
  dist_variable_t* variable;
  int on_gpu;
  dist_status_t status[kMaxReplicas]; /* each replica's own */
};

static dist_status_t assign_add_in_replica(dist_replica_context_t* replica, void* user_data) {
  struct assign_job* job = user_data;
  int32_t index = 0;
  dist_replica_local_index(replica, &index);
  float value[8];
  for (int i = 0; i < 8; ++i) value[i] = (float)(index + 1) * 0.5f + (float)i;
  dist_buffer_t b = {value, 8, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
  void* device = NULL;
  if (job->on_gpu) {
    void* stream = NULL;
    dist_replica_stream(replica, &stream);
    if (cudaMalloc(&device, sizeof value) != cudaSuccess) return DIST_ERR_NO_MEMORY;
    cudaMemcpyAsync(device, value, sizeof value, cudaMemcpyHostToDevice, (cudaStream_t)stream);
    b.data = device;
    b.memory_kind = DIST_MEMORY_CUDA;
    b.stream = stream;
  }
  job->status[index] = dist_variable_assign_add(job->variable, replica, &b);
  if (device != NULL) cudaFree(device);
  return DIST_OK;
}

static void test_variables_on_gpus(void** state) {
  (void)state;
  dist_strategy_t* strategies[2] = {mirrored(0, DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, NULL), NULL};
  int32_t replicas = 0;
  assert_dist_ok(dist_strategy_num_local_replicas(strategies[0], &replicas));
  strategies[1] = mirrored(replicas, 0, NULL);
  float results[2][8];
  for (int s = 0; s < 2; ++s) {
    float initial[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t shape[1] = {8};
    dist_variable_options_t options = DIST_VARIABLE_OPTIONS_INIT;
    options.field_mask = DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_INITIAL_VALUE | DIST_VARIABLE_OPT_AGGREGATION;
    options.shape = shape;
    options.rank = 1;
    options.initial_value = initial;
    options.aggregation = DIST_AGGREGATION_MEAN;
    dist_variable_t* v = NULL;
    assert_dist_ok(dist_variable_create(strategies[s], &options, &v));
    /* Cross-replica assign from device memory (GPU) or host memory. */
    float assigned[8] = {0.25f, -1, 2, 3.5f, 4, 5, 6, 7};
    void* device = NULL;
    dist_buffer_t value = {assigned, 8, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    if (s == 0) {
      assert_int_equal(cudaMalloc(&device, sizeof assigned), cudaSuccess);
      cudaMemcpy(device, assigned, sizeof assigned, cudaMemcpyHostToDevice);
      assert_int_equal(cudaDeviceSynchronize(), cudaSuccess); /* the DMA may outlast cudaMemcpy */
      value.data = device;
      value.memory_kind = DIST_MEMORY_CUDA;
    }
    assert_dist_ok(dist_variable_assign(v, NULL, &value));
    assert_dist_ok(dist_variable_assign_sub(v, NULL, &value)); /* back to zeros */
    assert_dist_ok(dist_variable_assign(v, NULL, &value));
    struct assign_job job;
    memset(&job, 0, sizeof job);
    job.variable = v;
    job.on_gpu = s == 0;
    for (int r = 0; r < kMaxReplicas; ++r) job.status[r] = DIST_ERR_INTERNAL;
    assert_dist_ok(dist_strategy_run(strategies[s], assign_add_in_replica, &job));
    for (int r = 0; r < replicas; ++r) assert_int_equal(job.status[r], DIST_OK);
    dist_buffer_t out = {results[s], 8, DIST_DTYPE_F32, DIST_MEMORY_HOST, NULL};
    assert_dist_ok(dist_variable_read(v, NULL, &out));
    if (device != NULL) cudaFree(device);
    dist_variable_destroy(v);
  }
  assert_memory_equal(results[0], results[1], sizeof results[0]);
  /* assigned + mean over replicas of (index + 1) * 0.5 + i */
  assert_true(results[1][0] == 0.25f + 0.5f * (float)(replicas + 1) / 2.0f);
  dist_strategy_destroy(strategies[0]);
  dist_strategy_destroy(strategies[1]);
}

/* The final "test accuracy" an example printed, or -1. */
static double example_accuracy(const char* program, const char* epochs, const char* data) {
  char command[4096];
  snprintf(command, sizeof command, "timeout 600 '%s' %s '%s' 2>&1", program, epochs, data);
  FILE* out = popen(command, "r");
  if (out == NULL) return -1;
  char line[512];
  double accuracy = -1;
  while (fgets(line, sizeof line, out) != NULL) {
    fputs(line, stdout);
    if (strstr(line, "replica(s), first") != NULL && strstr(line, "device:GPU:") == NULL) {
      print_message("the example did not run on GPU replicas\n");
      accuracy = -2;
      break;
    }
    const char* at = strstr(line, "test accuracy ");
    if (at != NULL && strstr(line, "weights fnv1a64") != NULL) accuracy = atof(at + strlen("test accuracy "));
  }
  const int status = pclose(out);
  if (accuracy == -2) return -1;
  return status == 0 ? accuracy : -1;
}

/* The digits example as MIRRORED on the GPUs (every pass on the devices)
 * reaches the accuracy of the same training on CPU replicas. */
static void test_digits_example(void** state) {
  (void)state;
  const char* gpu = getenv("DIST_MIRRORED_GPU_EXAMPLE");
  const char* cpu = getenv("DIST_ONE_DEVICE_EXAMPLE");
  const char* data = getenv("DIST_DIGITS_PATH");
  if (data == NULL) data = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
  const char* quick = getenv("DIST_TEST_QUICK"); /* under compute-sanitizer: ran unchecked just before */
  if (quick != NULL && strcmp(quick, "1") == 0) skip();
  if (gpu == NULL || cpu == NULL || access(data, R_OK) != 0) {
    print_message("skipped: the digits examples or their data (%s) are not here\n", data);
    skip();
  }
  const double on_gpus = example_accuracy(gpu, "20", data);
  const double on_cpu = example_accuracy(cpu, "20", data);
  print_message("digits, 20 epochs: test accuracy %.4f on the GPUs, %.4f on one CPU device\n", on_gpus, on_cpu);
  assert_true(on_cpu > 0.9);
  assert_true(on_gpus >= on_cpu - 0.03);
}

static void test_workers_all_reduce(void** state) {
  (void)state;
  run_ranks(2, "all_reduce", "auto", 600);
  const char* quick = getenv("DIST_TEST_QUICK");
  if (quick != NULL && strcmp(quick, "1") == 0) return;
  run_ranks(3, "all_reduce", "auto", 600);
  run_ranks(2, "all_reduce", "ring", 600);
}

static void test_workers_reduce(void** state) {
  (void)state;
  run_ranks(2, "reduce", "", 120);
}

static void test_workers_train(void** state) {
  (void)state;
  run_ranks(2, "train", "", 300);
}

/* Rank 1 kills itself between two steps; rank 0 must report the loss (its
 * own checks) and exit 0. */
static void test_workers_lost_peer(void** state) {
  (void)state;
  const char* worker = getenv("DIST_GPU_STRATEGY_WORKER");
  if (worker == NULL) fail_msg("DIST_GPU_STRATEGY_WORKER is not set (run through ctest)");
  struct launch launch;
  launch_prepare(&launch, 2);
  const char* args[] = {worker, "lost_peer", NULL};
  for (int r = 0; r < 2; ++r) launch_rank(&launch, r, kToken, kOnGpu0, args);
  if (launch_wait(&launch, 120) != 0) fail_msg("lost_peer did not finish within 120 s:\n%s", launch_output(&launch, 0));
  if (launch.exit_codes[0] != 0) fail_msg("rank 0 exited %d:\n%s", launch.exit_codes[0], launch_output(&launch, 0));
  assert_int_equal(launch.exit_codes[1], -SIGKILL);
}

static void test_workers_nccl_refused(void** state) {
  (void)state;
  run_ranks(2, "nccl", "", 120);
}

int main(void) {
  skip_without_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mirrored_cross_device_ops),
      cmocka_unit_test(test_device_memory_arguments),
      cmocka_unit_test(test_variables_on_gpus),
      cmocka_unit_test(test_apply_gradients_on_gpus),
      cmocka_unit_test(test_apply_gradients_in_packs),
      cmocka_unit_test(test_central_storage_on_gpus),
      cmocka_unit_test(test_digits_example),
      cmocka_unit_test(test_workers_all_reduce),
      cmocka_unit_test(test_workers_reduce),
      cmocka_unit_test(test_workers_train),
      cmocka_unit_test(test_workers_lost_peer),
      cmocka_unit_test(test_workers_nccl_refused),
  };
  return cmocka_run_group_tests_name("gpu_strategy", tests, NULL, NULL);
}
