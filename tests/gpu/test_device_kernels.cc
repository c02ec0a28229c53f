// The CUDA kernels of collectives/device_reduce_kernels.h and
// optimizers/device_dense_update.h against the host code they
// mirror, bit for bit (memcmp): device_reduce against reduce for every dtype
// and op, device_finalize_mean against finalize_mean, device_dense_update
// against dense_update with the workers' mean gradient, over a few steps.
// Inputs include NaN (quiet, signaling, with payloads and signs), zeros of
// both signs, infinities, subnormals and integer overflow.
//
// Where no CUDA device is usable, only the argument checks run (they reach no
// device), and the suite then exits 77 saying why.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/half.h"
#include "base/numbers.h"
#include "collectives/reduce_kernels.h"
#include "collectives/reduce_op.h"
#include "collectives/device_reduce_kernels.h"
#include "optimizers/device_dense_update.h"
#include "optimizers/dense_update.h"
#include "optimizers/optimizer_slots.h"

#include "gpu/device_check.h"
// Last: cmocka's fail() macro would clash with dist::fail.
#include "internal_test_support.h"

namespace {

using dist::DType;
using dist::ReduceOp;

#define CUDA_OK(call) assert_int_equal(static_cast<int>(call), static_cast<int>(cudaSuccess))

const DType kDTypes[] = {DType::I8,  DType::U8,   DType::I32, DType::U32, DType::I64,
                         DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
const ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::PROD, ReduceOp::MIN, ReduceOp::MAX, ReduceOp::MEAN};
const uint64_t kCounts[] = {0, 1, 7, 1000, (uint64_t{1} << 20) + 3};
constexpr uint64_t kMaxCount = (uint64_t{1} << 20) + 3;

// ---- Device memory and a stream ----------------------------------------------------

struct DeviceBuffer {
  void* data = nullptr;
  explicit DeviceBuffer(size_t bytes) { CUDA_OK(cudaMalloc(&data, bytes == 0 ? 1 : bytes)); }
  ~DeviceBuffer() { (void)cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() { CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(stream); }
  void sync() const { CUDA_OK(cudaStreamSynchronize(stream)); }
};

// The kernels run on non-blocking streams, which cudaMemcpy does not wait
// for (a kernel may still read the buffer), and from pageable memory
// cudaMemcpy may return before its DMA ends: the device is idle on both sides.
void to_device(void* device, const std::vector<uint8_t>& host, size_t bytes) {
  CUDA_OK(cudaDeviceSynchronize());
  if (bytes > 0) CUDA_OK(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
}

std::vector<uint8_t> from_device(const void* device, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  if (bytes > 0) CUDA_OK(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost));
  return host;
}

// Fails naming the first element whose bits differ.
void expect_same_bits(const std::vector<uint8_t>& device, const std::vector<uint8_t>& host, size_t bytes,
                      size_t element, const std::string& what) {
  if (bytes == 0 || std::memcmp(device.data(), host.data(), bytes) == 0) return;
  for (size_t i = 0; i < bytes / element; ++i) {
    uint64_t got = 0, expected = 0;
    std::memcpy(&got, device.data() + i * element, element);
    std::memcpy(&expected, host.data() + i * element, element);
    if (got != expected) {
      fail_msg("%s: element %zu is 0x%llx on the device, 0x%llx on the host", what.c_str(), i,
               static_cast<unsigned long long>(got), static_cast<unsigned long long>(expected));
    }
  }
}

// ---- Inputs --------------------------------------------------------------------------

// Values every dtype's inputs start with, as raw bits (truncated to the width).
std::vector<uint64_t> special_bits(DType dtype) {
  switch (dtype) {
    case DType::I8:
    case DType::U8: return {0, 1, 0xff, 0x7f, 0x80, 0x81, 0x7e, 2, 0xfe, 0x10, 0x55};
    case DType::I32:
    case DType::U32:
      return {0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 0x80000001, 0x7ffffffe, 2, 0xfffffffe, 0x10000, 0x55555555};
    case DType::I64:
    case DType::U64:
      return {0,          1, ~uint64_t{0}, 0x7fffffffffffffff, 0x8000000000000000, 0x8000000000000001,
              0x100000000, 2, 0xfffffffe,   0xffffffff,         0x5555555555555555};
    case DType::F16:
      // 0, -0, inf, -inf, NaN, -NaN with payload, sNaN, 1, -1, smallest
      // subnormal (both signs), largest subnormal, smallest normal, largest
      // finite (both signs), 1/3, 2049/1024.
      return {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7d00, 0x3c00, 0xbc00,
              0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3555, 0x4001};
    case DType::BF16:
      return {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7fa0, 0x3f80, 0xbf80,
              0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f, 0xff7f, 0x3eab, 0x3f81};
    case DType::F32:
      // ... as for f16, plus 1 + ulp and 1e30 (whose square overflows).
      return {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00123, 0x7f800001,
              0x3f800000, 0xbf800000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff,
              0xff7fffff, 0x3eaaaaab, 0x3f800001, 0x7149f2ca};
    case DType::F64:
      return {0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
              0x7ff8000000000000, 0xfff8000000000123, 0x7ff0000000000001, 0x3ff0000000000000,
              0xbff0000000000000, 0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff,
              0x0010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff, 0x3fd5555555555555,
              0x3ff0000000000001, 0x7e37e43c8800759c};
  }
  return {};
}

void put(std::vector<uint8_t>& buffer, size_t i, size_t element, uint64_t bits) {
  std::memcpy(buffer.data() + i * element, &bits, element);  // little-endian: the low bytes
}

uint64_t get(const std::vector<uint8_t>& buffer, size_t i, size_t element) {
  uint64_t bits = 0;
  std::memcpy(&bits, buffer.data() + i * element, element);
  return bits;
}

// Element i of a random operand pair: first every pair of special values
// (a[i] = s[i % n], b[i] = s[i / n]), then random values. Floats draw half
// of them as raw bits (every class of value, NaN included) and half as
// moderate values with fractions, whose sums and products round.
void fill_pair(DType dtype, uint64_t count, std::mt19937_64& random, std::vector<uint8_t>& a,
               std::vector<uint8_t>& b) {
  const size_t element = dist::size_of(dtype);
  a.assign(count * element, 0);
  b.assign(count * element, 0);
  const std::vector<uint64_t> specials = special_bits(dtype);
  const size_t n = specials.size();
  std::uniform_real_distribution<double> moderate(-1000.0, 1000.0);
  auto draw = [&]() -> uint64_t {
    if (!dist::is_floating(dtype) || (random() & 1) != 0) return random();
    const double value = moderate(random);
    switch (dtype) {
      case DType::F16: return dist::f32_to_f16(static_cast<float>(value));
      case DType::BF16: return dist::f32_to_bf16(static_cast<float>(value));
      case DType::F32: {
        const float f = static_cast<float>(value);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        return bits;
      }
      default: {
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        return bits;
      }
    }
  };
  for (uint64_t i = 0; i < count; ++i) {
    if (i < n * n) {
      put(a, i, element, specials[i % n]);
      put(b, i, element, specials[i / n]);
    } else {
      put(a, i, element, draw());
      put(b, i, element, draw());
    }
  }
}

bool is_nan(DType dtype, uint64_t bits) {
  switch (dtype) {
    case DType::F16: return (bits & 0x7fff) > 0x7c00;
    case DType::BF16: return (bits & 0x7fff) > 0x7f80;
    case DType::F32: return (bits & 0x7fffffff) > 0x7f800000;
    case DType::F64: return (bits & 0x7fffffffffffffff) > 0x7ff0000000000000;
    default: return false;
  }
}

// SUM and PROD of two NaNs give one of them, and which one the host gives
// depends on the order its compiler put the operands in (reduce_kernels.h:
// "NaN payloads aside"); the device gives the first. Those elements get the
// same NaN on both sides, so that either answer has the same bits. (MIN and
// MAX pick by rule: all pairs stay.)
std::vector<uint8_t> without_two_nan_payloads(DType dtype, ReduceOp op, const std::vector<uint8_t>& a,
                                              std::vector<uint8_t> b) {
  if (op == ReduceOp::MIN || op == ReduceOp::MAX || !dist::is_floating(dtype)) return b;
  const size_t element = dist::size_of(dtype);
  for (size_t i = 0; i < a.size() / element; ++i) {
    if (is_nan(dtype, get(a, i, element)) && is_nan(dtype, get(b, i, element))) put(b, i, element, get(a, i, element));
  }
  return b;
}

std::string describe(const char* what, DType dtype, ReduceOp op, uint64_t count) {
  return std::string(what) + " " + dist::name(dtype) + " " + dist::name(op) + " count " + std::to_string(count);
}

// ---- device_reduce -------------------------------------------------------------------

void test_reduce_matches_host(void**) {
  Stream stream;
  DeviceBuffer acc(kMaxCount * 8), x(kMaxCount * 8);
  std::mt19937_64 random(20240611);
  std::vector<uint8_t> a, b;
  for (DType dtype : kDTypes) {
    const size_t element = dist::size_of(dtype);
    for (uint64_t count : kCounts) {
      fill_pair(dtype, count, random, a, b);
      const size_t bytes = count * element;
      for (ReduceOp op : kOps) {
        const std::vector<uint8_t> operand = without_two_nan_payloads(dtype, op, a, b);
        std::vector<uint8_t> expected = a;
        dist::reduce(expected.data(), expected.data(), operand.data(), count, dtype, op);
        to_device(acc.data, a, bytes);
        to_device(x.data, operand, bytes);
        dist::device_reduce(acc.data, x.data, count, dtype, op, stream.stream);
        stream.sync();
        expect_same_bits(from_device(acc.data, bytes), expected, bytes, element,
                         describe("device_reduce", dtype, op, count));
      }
    }
  }
}

// acc op acc (both arguments one buffer), and the legacy default stream.
void test_reduce_in_place_on_default_stream(void**) {
  constexpr uint64_t kCount = 4099;
  DeviceBuffer acc(kCount * 8);
  std::mt19937_64 random(7);
  std::vector<uint8_t> a, b;
  for (DType dtype : kDTypes) {
    const size_t element = dist::size_of(dtype);
    const size_t bytes = kCount * element;
    fill_pair(dtype, kCount, random, a, b);
    for (ReduceOp op : kOps) {
      std::vector<uint8_t> expected = a;
      dist::reduce(expected.data(), expected.data(), expected.data(), kCount, dtype, op);
      to_device(acc.data, a, bytes);
      dist::device_reduce(acc.data, acc.data, kCount, dtype, op, nullptr);
      CUDA_OK(cudaDeviceSynchronize());
      expect_same_bits(from_device(acc.data, bytes), expected, bytes, element,
                       describe("device_reduce in place", dtype, op, kCount));
    }
  }
}

// device_reduce_many against the host's reduce_many for 1..5 inputs: one
// rounding of f16/bf16 at the end, not one per pair. For SUM and PROD, NaNs
// stay in the first input only: which of two NaN payloads a chain returns is
// the host compiler's choice (as above).
void test_reduce_many_matches_host(void**) {
  constexpr uint64_t kCount = 4099;
  constexpr size_t kMost = 5;
  Stream stream;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (size_t j = 0; j < kMost + 1; ++j) buffers.push_back(std::make_unique<DeviceBuffer>(kCount * 8));
  std::mt19937_64 random(99);
  std::vector<uint8_t> a, b;
  for (DType dtype : kDTypes) {
    const size_t element = dist::size_of(dtype);
    const size_t bytes = kCount * element;
    for (size_t k = 1; k <= kMost; ++k) {
      for (ReduceOp op : kOps) {
        std::vector<std::vector<uint8_t>> inputs;
        for (size_t j = 0; j < k; ++j) {
          fill_pair(dtype, kCount, random, a, b);
          if (j > 0 && dist::is_floating(dtype) && op != ReduceOp::MIN && op != ReduceOp::MAX) {
            for (size_t i = 0; i < kCount; ++i) {
              if (is_nan(dtype, get(a, i, element))) put(a, i, element, 0);
            }
          }
          inputs.push_back(a);
        }
        std::vector<const void*> host_inputs, device_inputs;
        for (size_t j = 0; j < k; ++j) {
          host_inputs.push_back(inputs[j].data());
          to_device(buffers[j]->data, inputs[j], bytes);
          device_inputs.push_back(buffers[j]->data);
        }
        std::vector<uint8_t> expected(bytes);
        dist::reduce_many(expected.data(), host_inputs.data(), k, kCount, dtype, op);
        dist::device_reduce_many(buffers[kMost]->data, device_inputs.data(), k, kCount, dtype, op, stream.stream);
        stream.sync();
        expect_same_bits(from_device(buffers[kMost]->data, bytes), expected, bytes, element,
                         describe("device_reduce_many", dtype, op, kCount) + " of " + std::to_string(k));
      }
    }
  }
}

// Count 0 enqueues nothing, so null pointers are fine.
void test_reduce_count_zero(void**) {
  for (DType dtype : kDTypes) {
    for (ReduceOp op : kOps) dist::device_reduce(nullptr, nullptr, 0, dtype, op, nullptr);
    dist::device_finalize_mean(nullptr, 0, dtype, 3, nullptr);
  }
  CUDA_OK(cudaDeviceSynchronize());
}

// ---- device_finalize_mean ------------------------------------------------------------

void test_finalize_mean_matches_host(void**) {
  // 1, 2, 3, 4, 7, then divisors that take the host's other branches: beyond
  // 2^24 (f32 divides in f64), a power of two beyond it, beyond 2^53 (f64
  // rounds the divisor), and beyond 2^32 (64-bit integer division).
  const int64_t divisors[] = {1, 2, 3, 4, 7, (int64_t{1} << 24) + 3, int64_t{1} << 40, (int64_t{1} << 53) + 1,
                              (int64_t{1} << 32) + 5};
  Stream stream;
  DeviceBuffer buf(kMaxCount * 8);
  std::mt19937_64 random(99);
  std::vector<uint8_t> values, unused;
  for (DType dtype : kDTypes) {
    const size_t element = dist::size_of(dtype);
    for (uint64_t count : kCounts) {
      fill_pair(dtype, count, random, values, unused);
      const size_t bytes = count * element;
      for (int64_t divisor : divisors) {
        std::vector<uint8_t> expected = values;
        dist::finalize_mean(expected.data(), count, dtype, divisor);
        to_device(buf.data, values, bytes);
        dist::device_finalize_mean(buf.data, count, dtype, divisor, stream.stream);
        stream.sync();
        expect_same_bits(from_device(buf.data, bytes), expected, bytes, element,
                         std::string("device_finalize_mean ") + dist::name(dtype) + " count " +
                             std::to_string(count) + " divisor " + std::to_string(divisor));
      }
    }
  }
}

// ---- device_dense_update -------------------------------------------------------------

// variables/worker_optimizer.cc's apply: gradient(i) is sums[i] over
// `divisor`, by the reciprocal of a power of two, else by division.
void host_update(const dist::OptimizerConfig& config, int64_t step, DType dtype, const dist::UpdateTarget& target,
                 const void* sums_bytes, int64_t divisor) {
  dist::dense_update(config, step, dtype, target, [&](auto zero, auto&& update) {
    using T = decltype(zero);
    const T* sums = static_cast<const T*>(sums_bytes);
    if (dist::is_power_of_two(divisor)) {
      const T reciprocal = T(1) / static_cast<T>(divisor);
      update([sums, reciprocal](size_t i) { return sums[i] * reciprocal; });
    } else {
      const T by = static_cast<T>(divisor);
      update([sums, by](size_t i) { return sums[i] / by; });
    }
  });
}

template <typename T>
std::vector<uint8_t> random_array(uint64_t count, double low, double high, std::mt19937_64& random) {
  std::uniform_real_distribution<double> values(low, high);
  std::vector<uint8_t> bytes(count * sizeof(T));
  for (uint64_t i = 0; i < count; ++i) {
    const T value = static_cast<T>(values(random));
    std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
  return bytes;
}

struct Optimizer {
  const char* name;
  dist::OptimizerConfig config;
};

std::vector<Optimizer> optimizers() {
  std::vector<Optimizer> list;
  dist::OptimizerConfig c;
  c.learning_rate = 0.05;
  c.kind = dist::OptimizerKind::kSgd;
  list.push_back({"sgd", c});
  c.kind = dist::OptimizerKind::kMomentum;
  list.push_back({"momentum", c});
  c.nesterov = true;
  list.push_back({"nesterov momentum", c});
  c.nesterov = false;
  c.kind = dist::OptimizerKind::kAdagrad;
  list.push_back({"adagrad", c});
  c.kind = dist::OptimizerKind::kAdam;
  list.push_back({"adam", c});
  return list;
}

void check_dense_update(const Optimizer& optimizer, DType dtype, int64_t divisor, uint64_t count,
                        std::mt19937_64& random, const Stream& stream) {
  constexpr int kSteps = 4;
  const size_t element = dist::size_of(dtype);
  const size_t bytes = count * element;
  const dist::OptimizerConfig& config = optimizer.config;
  const int slots = dist::slot_count(config.kind);

  // Host: the values, the slots at their starting values.
  std::vector<uint8_t> values = dtype == DType::F32 ? random_array<float>(count, -2.0, 2.0, random)
                                                    : random_array<double>(count, -2.0, 2.0, random);
  std::vector<std::vector<uint8_t>> host_slots = dist::new_slots(config, dtype, count);
  const dist::UpdateTarget host_target = dist::update_target(values.data(), host_slots, dtype, 0, count);

  // Device: the same.
  DeviceBuffer device_values(bytes), gradient(bytes), slot0(bytes), slot1(bytes);
  to_device(device_values.data, values, bytes);
  dist::UpdateTarget device_target;
  device_target.values = device_values.data;
  device_target.count = count;
  void* const device_slots[2] = {slot0.data, slot1.data};
  for (int k = 0; k < slots; ++k) {
    to_device(device_slots[k], host_slots[k], bytes);
    device_target.slots[k] = device_slots[k];
  }

  for (int64_t step = 1; step <= kSteps; ++step) {
    // A sum over `divisor` replicas, some elements exactly zero.
    const double range = 3.0 * static_cast<double>(divisor);
    std::vector<uint8_t> sums = dtype == DType::F32 ? random_array<float>(count, -range, range, random)
                                                    : random_array<double>(count, -range, range, random);
    for (uint64_t i = 0; i < count; i += 17) std::memset(sums.data() + i * element, 0, element);
    to_device(gradient.data, sums, bytes);
    host_update(config, step, dtype, host_target, sums.data(), divisor);
    dist::device_dense_update(config, step, dtype, device_target, gradient.data, divisor, stream.stream);
  }
  stream.sync();
  const std::string what = std::string(optimizer.name) + " " + dist::name(dtype) + " divisor " +
                           std::to_string(divisor) + " count " + std::to_string(count) + " after " +
                           std::to_string(kSteps) + " steps: ";
  expect_same_bits(from_device(device_values.data, bytes), values, bytes, element, what + "values");
  for (int k = 0; k < slots; ++k) {
    expect_same_bits(from_device(device_slots[k], bytes), host_slots[k], bytes, element,
                     what + "slot " + std::to_string(k));
  }
}

void test_dense_update_matches_host(void**) {
  Stream stream;
  std::mt19937_64 random(31337);
  for (const Optimizer& optimizer : optimizers()) {
    for (DType dtype : {DType::F32, DType::F64}) {
      for (int64_t divisor : {1, 2, 3}) {
        for (uint64_t count : {uint64_t{1}, uint64_t{1000}, (uint64_t{1} << 20) + 3}) {
          check_dense_update(optimizer, dtype, divisor, count, random, stream);
        }
      }
    }
  }
}

// ---- Arguments (no device needed) ----------------------------------------------------

void test_invalid_arguments(void**) {
  float value = 0;
  const void* none[1] = {nullptr};
  expect_invalid("device_reduce_many of 0 inputs", "0 inputs", [&] {
    dist::device_reduce_many(&value, none, 0, 1, DType::F32, ReduceOp::SUM, nullptr);
  });
  expect_invalid("device_reduce_many of 65 inputs", "65 inputs", [&] {
    dist::device_reduce_many(&value, none, 65, 1, DType::F32, ReduceOp::SUM, nullptr);
  });
  dist::OptimizerConfig sgd;
  dist::UpdateTarget target;
  target.values = &value;
  target.count = 1;
  expect_invalid("device_dense_update f16", "f16", [&] {
    dist::device_dense_update(sgd, 1, DType::F16, target, &value, 1, nullptr);
  });
  expect_invalid("device_dense_update i32", "i32", [&] {
    dist::device_dense_update(sgd, 1, DType::I32, target, &value, 1, nullptr);
  });
  expect_invalid("device_dense_update dtype 42", "42", [&] {
    dist::device_dense_update(sgd, 1, static_cast<DType>(42), target, &value, 1, nullptr);
  });
  dist::OptimizerConfig bad_kind;
  bad_kind.kind = static_cast<dist::OptimizerKind>(9);
  expect_invalid("device_dense_update kind 9", "9", [&] {
    dist::device_dense_update(bad_kind, 1, DType::F32, target, &value, 1, nullptr);
  });
  expect_invalid("device_dense_update divisor 0", "divisor 0", [&] {
    dist::device_dense_update(sgd, 1, DType::F32, target, &value, 0, nullptr);
  });
  dist::OptimizerConfig momentum;
  momentum.kind = dist::OptimizerKind::kMomentum;
  expect_invalid("device_dense_update without a slot", "slot 0", [&] {
    dist::device_dense_update(momentum, 1, DType::F32, target, &value, 1, nullptr);
  });
  dist::OptimizerConfig adam;
  adam.kind = dist::OptimizerKind::kAdam;
  expect_invalid("device_dense_update adam step 0", "step 0", [&] {
    dist::device_dense_update(adam, 0, DType::F32, target, &value, 1, nullptr);
  });
  expect_invalid("device_reduce op 7", "reduction op 7", [&] {
    dist::device_reduce(&value, &value, 1, DType::F32, static_cast<ReduceOp>(7), nullptr);
  });
  expect_invalid("device_reduce op -1", "reduction op -1", [&] {
    dist::device_reduce(&value, &value, 0, DType::F32, static_cast<ReduceOp>(-1), nullptr);
  });
  expect_invalid("device_reduce dtype 10", "10", [&] {
    dist::device_reduce(&value, &value, 0, static_cast<DType>(10), ReduceOp::SUM, nullptr);
  });
  expect_invalid("device_finalize_mean dtype -1", "-1", [&] {
    dist::device_finalize_mean(&value, 0, static_cast<DType>(-1), 2, nullptr);
  });
  expect_invalid("device_finalize_mean divisor 0", "divisor 0", [&] {
    dist::device_finalize_mean(&value, 1, DType::F32, 0, nullptr);
  });
}

// ---- Skipping ------------------------------------------------------------------------

// After skip_without_device: "" when device 0 runs this build's kernels, else
// why not (it has no code of this build's architectures, CMAKE_CUDA_ARCHITECTURES).
// Another failure of the probe fails the suite.
std::string why_kernels_cannot_run() {
  void* probe = nullptr;
  if (cudaMalloc(&probe, 8) != cudaSuccess) {
    (void)cudaGetLastError();
    return "cudaMalloc of 8 bytes failed on device 0";
  }
  std::string why;
  try {
    dist::device_reduce(probe, probe, 1, DType::F32, ReduceOp::SUM, nullptr);
    const cudaError_t error = cudaDeviceSynchronize();
    if (error != cudaSuccess) {
      std::printf("the probe kernel failed on device 0 (%s)\n", cudaGetErrorString(error));
      std::exit(1);
    }
  } catch (const dist::Error& e) {
    const std::string message = e.what();
    if (message.find("NoKernelImage") == std::string::npos) {
      std::printf("the probe kernel failed on device 0: %s\n", message.c_str());
      std::exit(1);
    }
    why = "device 0 cannot run this build's kernels (" + message + ")";
  }
  (void)cudaFree(probe);
  return why;
}

}  // namespace

int main() {
  const struct CMUnitTest arguments[] = {cmocka_unit_test(test_invalid_arguments)};
  const int failed = cmocka_run_group_tests_name("device_kernels_arguments", arguments, nullptr, nullptr);
  if (failed != 0) return failed;
  skip_without_device();
  const std::string why = why_kernels_cannot_run();
  if (!why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_matches_host),       cmocka_unit_test(test_reduce_in_place_on_default_stream),
      cmocka_unit_test(test_reduce_count_zero),         cmocka_unit_test(test_finalize_mean_matches_host),
      cmocka_unit_test(test_reduce_many_matches_host),
      cmocka_unit_test(test_dense_update_matches_host),
  };
  return cmocka_run_group_tests_name("device_kernels", tests, nullptr, nullptr);
}
