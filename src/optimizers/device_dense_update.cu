// device_dense_update: optimizers/update_rules.h's rules, with the workers'
// mean gradient (variables/worker_optimizer.cc's with_mean), in CUDA kernels.
//
// Every operation is written as the IEEE round-to-nearest intrinsic of its
// type (__fadd_rn, __dmul_rn, __fsqrt_rn, ...), in the order and grouping of
// the host's expressions: the intrinsics are never contracted into fused
// multiply-adds, which the host does not use either (and this file is also
// compiled -fmad=false, src/CMakeLists.txt). The constants the rules derive
// from the config (the step size in T, 1 - beta, Adam's bias-corrected
// alpha in double) are computed here on the host, as update_rules.h does.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "base/numbers.h"
#include "base/status.h"
#include "gpu/kernel_launch.h"
#include "optimizers/device_dense_update.h"
#include "optimizers/optimizer_slots.h"

namespace dist {
namespace {

using namespace kernels;  // launch shape and errors (gpu/kernel_launch.h)

// ---- Correctly rounded operations, per type -----------------------------------------

__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ inline float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float divide(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline double divide(double a, double b) { return __ddiv_rn(a, b); }
__device__ inline float root(float a) { return __fsqrt_rn(a); }
__device__ inline double root(double a) { return __dsqrt_rn(a); }

// ---- The kernels' arguments -----------------------------------------------------------

// with_mean: sum * (1 / divisor) for a power of two, else sum / divisor.
template <typename T>
struct Mean {
  const T* sums;
  T operand;  // the reciprocal or the divisor, in T
  bool by_reciprocal;
  __device__ T operator()(uint64_t i) const { return by_reciprocal ? mul(sums[i], operand) : divide(sums[i], operand); }
};

// The rules' constants, converted to T as update_rules.h converts them.
template <typename T>
struct Constants {
  T lr;           // SGD, Momentum, Adagrad
  T mu;           // Momentum
  bool nesterov;  // Momentum
  T eps;          // Adagrad, Adam
  T alpha;        // Adam: the bias-corrected step size
  T b1, one_minus_b1, b2, one_minus_b2;
};

// ---- The rules (update_rules.h), one element each -----------------------------------

template <typename T>
__global__ void sgd_kernel(T* var, Mean<T> grad, uint64_t count, Constants<T> c) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    var[i] = sub(var[i], mul(c.lr, grad(i)));
  }
}

template <typename T>
__global__ void momentum_kernel(T* var, T* velocity, Mean<T> grad, uint64_t count, Constants<T> c) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const T g = grad(i);
    const T v = sub(mul(c.mu, velocity[i]), mul(c.lr, g));
    velocity[i] = v;
    var[i] = add(var[i], c.nesterov ? sub(mul(c.mu, v), mul(c.lr, g)) : v);
  }
}

template <typename T>
__global__ void adagrad_kernel(T* var, T* accumulator, Mean<T> grad, uint64_t count, Constants<T> c) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const T g = grad(i);
    const T a = add(accumulator[i], mul(g, g));
    accumulator[i] = a;
    var[i] = sub(var[i], divide(mul(c.lr, g), add(root(a), c.eps)));
  }
}

template <typename T>
__global__ void adam_kernel(T* var, T* m, T* v, Mean<T> grad, uint64_t count, Constants<T> c) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const T g = grad(i);
    const T m_new = add(mul(c.b1, m[i]), mul(c.one_minus_b1, g));
    const T v_new = add(mul(c.b2, v[i]), mul(mul(c.one_minus_b2, g), g));
    m[i] = m_new;
    v[i] = v_new;
    var[i] = sub(var[i], divide(mul(c.alpha, m_new), add(root(v_new), c.eps)));
  }
}

// ---- Host side ------------------------------------------------------------------------

template <typename T>
void update(const OptimizerConfig& config, int64_t step, const UpdateTarget& target, const void* gradient_sum,
            int64_t divisor, void* stream) {
  Mean<T> grad;
  grad.sums = static_cast<const T*>(gradient_sum);
  grad.by_reciprocal = is_power_of_two(divisor);
  grad.operand = grad.by_reciprocal ? T(1) / static_cast<T>(divisor) : static_cast<T>(divisor);

  Constants<T> c{};
  c.lr = static_cast<T>(config.learning_rate);
  c.mu = static_cast<T>(config.momentum);
  c.nesterov = config.nesterov;
  c.eps = static_cast<T>(config.epsilon);
  c.b1 = static_cast<T>(config.beta_1);
  c.b2 = static_cast<T>(config.beta_2);
  c.one_minus_b1 = T(1) - c.b1;
  c.one_minus_b2 = T(1) - c.b2;
  if (config.kind == OptimizerKind::kAdam) {
    const double t = static_cast<double>(step);
    c.alpha = static_cast<T>(config.learning_rate * std::sqrt(1.0 - std::pow(config.beta_2, t)) /
                             (1.0 - std::pow(config.beta_1, t)));
  }

  T* values = static_cast<T*>(target.values);
  T* first = static_cast<T*>(target.slots[0]);
  T* second = static_cast<T*>(target.slots[1]);
  const uint64_t count = target.count;
  const unsigned blocks = blocks_for(count);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  clear_last_error();
  switch (config.kind) {
    case OptimizerKind::kSgd: sgd_kernel<T><<<blocks, kThreads, 0, s>>>(values, grad, count, c); break;
    case OptimizerKind::kMomentum:
      momentum_kernel<T><<<blocks, kThreads, 0, s>>>(values, first, grad, count, c);
      break;
    case OptimizerKind::kAdagrad:
      adagrad_kernel<T><<<blocks, kThreads, 0, s>>>(values, first, grad, count, c);
      break;
    case OptimizerKind::kAdam: adam_kernel<T><<<blocks, kThreads, 0, s>>>(values, first, second, grad, count, c); break;
  }
  check_launch((std::string("device_dense_update: the ") + optimizer_name(config.kind) + " kernel launch").c_str());
}

}  // namespace

void device_dense_update(const OptimizerConfig& config, int64_t step, DType dtype, const UpdateTarget& target,
                         const void* gradient_sum, int64_t divisor, void* stream) {
  const OptimizerKind kind = optimizer_kind_from_int(static_cast<int32_t>(config.kind));
  const DType checked = dtype_from_int(static_cast<int32_t>(dtype));
  if (!optimizer_updates(checked)) {
    fail_invalid(std::string("device_dense_update: the optimizers update f32 and f64 values, not ") + name(checked));
  }
  if (divisor < 1) {
    fail_invalid("device_dense_update: divisor " + std::to_string(divisor) + " is not a count (must be >= 1)");
  }
  if (kind == OptimizerKind::kAdam && step < 1) {
    fail_invalid("device_dense_update: Adam's step " + std::to_string(step) + " is not 1-based");
  }
  if (target.count == 0) return;
  if (target.values == nullptr || gradient_sum == nullptr) {
    fail_invalid("device_dense_update: the values or the gradient of " + std::to_string(target.count) +
                 " elements are null");
  }
  for (int k = 0; k < slot_count(kind); ++k) {
    if (target.slots[k] == nullptr) {
      fail_invalid(std::string("device_dense_update: ") + optimizer_name(kind) + "'s slot " + std::to_string(k) +
                   " is null");
    }
  }
  if (checked == DType::F32) {
    update<float>(config, step, target, gradient_sum, divisor, stream);
  } else {
    update<double>(config, step, target, gradient_sum, divisor, stream);
  }
}

}  // namespace dist
