#include "strategy/reduce.h"

#include <cstring>
#include <string>

#include "collectives/reduce_kernels.h"
#include "strategy/replica_context.h"
#ifdef DIST_HAVE_CUDA
#include "strategy/device_all_reduce.h"
#endif

namespace dist {
namespace {

void check_arguments(const Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& values, int axis,
                     const TensorRef& result) {
  if (op != ReduceOp::SUM && op != ReduceOp::MEAN) {
    fail_invalid(std::string("op ") + name(op) + " is not SUM or MEAN (strategy.reduce's ReduceOp)");
  }
  if (axis != kAxisNone && axis != 0) {
    fail_invalid("axis " + std::to_string(axis) + " is not DIST_AXIS_NONE or 0");
  }
  if (static_cast<int>(values.size()) != strategy.num_local_replicas()) {
    fail_invalid(std::to_string(values.size()) + " values given for " + std::to_string(strategy.num_local_replicas()) +
                 " local replicas");
  }
  if (axis == 0 && result.count == 0) fail_invalid("axis 0 needs a result of at least one element (one row)");
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string field = "values[" + std::to_string(i) + "]";
    if (values[i].memory != values[0].memory) {
      fail_invalid(field + " and values[0] lie in different kinds of memory (host and CUDA)");
    }
    if (values[i].dtype != result.dtype) {
      fail_invalid(field + " is " + name(values[i].dtype) + " but result is " + name(result.dtype));
    }
    if (axis == kAxisNone && values[i].count != result.count) {
      fail_invalid(field + " has count " + std::to_string(values[i].count) + ", expected " +
                   std::to_string(result.count) + " (the result's)");
    }
    if (axis == 0 && values[i].count % result.count != 0) {
      fail_invalid(field + " has count " + std::to_string(values[i].count) + ", not whole rows of " +
                   std::to_string(result.count) + " elements");
    }
  }
}

// Every row of every local value, summed into result (then across workers by
// the caller). Returns the number of local rows.
uint64_t sum_local_rows(const std::vector<TensorRef>& values, const TensorRef& result) {
  std::memset(result.data, 0, result.bytes());  // zero bits are zero in every dtype
  uint64_t rows = 0;
  const size_t row_bytes = result.bytes();
  for (const TensorRef& value : values) {
    const uint64_t value_rows = value.count / result.count;
    const auto* base = static_cast<const unsigned char*>(value.data);
    for (uint64_t r = 0; r < value_rows; ++r) {
      reduce(result.data, result.data, base + r * row_bytes, result.count, result.dtype, ReduceOp::SUM);
    }
    rows += value_rows;
  }
  return rows;
}

}  // namespace

// reduce_per_replica on host memory.
void reduce_host_values(Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& values, int axis,
                        const TensorRef& result) {
  if (axis == kAxisNone) {
    std::vector<const void*> inputs;
    for (const TensorRef& value : values) inputs.push_back(value.data);
    reduce_across_replicas(strategy, op, inputs, result);
    return;
  }
  uint64_t rows = sum_local_rows(values, result);
  strategy.all_reduce_across_workers(result, ReduceOp::SUM);
  if (op == ReduceOp::SUM) return;
  strategy.all_reduce_across_workers(TensorRef{&rows, 1, DType::U64}, ReduceOp::SUM);
  if (rows == 0) fail_invalid("MEAN over axis 0 of an empty batch: no replica holds a row");
  finalize_mean(result.data, result.count, result.dtype, static_cast<int64_t>(rows));
}

void reduce_per_replica(Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& values, int axis,
                        const TensorRef& result) {
  check_arguments(strategy, op, values, axis, result);
  bool on_device = result.on_device();
  for (const TensorRef& value : values) on_device = on_device || value.on_device();
  if (!on_device) {
    reduce_host_values(strategy, op, values, axis, result);
    return;
  }
#ifdef DIST_HAVE_CUDA
  // Combined in host memory: the same bits as host values.
  with_host_copies(strategy, values, result, [&](const std::vector<TensorRef>& host_values, const TensorRef& host_result) {
    reduce_host_values(strategy, op, host_values, axis, host_result);
  });
#else
  fail(Status::kInternal, "device values in a build without CUDA");
#endif
}

}  // namespace dist
