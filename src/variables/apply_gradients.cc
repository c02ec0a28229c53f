#include "variables/apply_gradients.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/status.h"
#include "base/timeline.h"
#include "strategy/fused_all_reduce.h"
#ifdef DIST_HAVE_CUDA
#include "variables/device_apply_gradients.h"
#include "variables/device_copies.h"
#endif

namespace dist {
namespace {

void check_trainable(const Strategy& strategy, const Variable& variable, const std::vector<std::vector<TensorRef>>& gradients,
                     size_t i) {
  if (&variable.strategy() != &strategy) {
    fail_invalid("vars[" + std::to_string(i) + "] ('" + variable.name() + "') belongs to another strategy");
  }
  if (variable.on_servers()) {
    fail_invalid("vars[" + std::to_string(i) + "] ('" + variable.name() +
                 "') lives on the parameter servers: use dist_variable_apply_gradient");
  }
  if (variable.synchronization() == Synchronization::kOnRead) {
    fail_invalid("vars[" + std::to_string(i) + "] ('" + variable.name() +
                 "') is ON_READ; gradients update ON_WRITE variables");
  }
  WorkerOptimizer::check_dtype(variable);
  // Every local replica's gradient, not only the first's: each is read.
  for (size_t r = 0; r < gradients.size(); ++r) {
    const TensorRef& gradient = gradients[r][i];
    const std::string what = "replica " + std::to_string(r) + "'s gradient of vars[" + std::to_string(i) + "]";
    variable.check_buffer(gradient, what.c_str());
    if (gradient.on_device() && strategy.gpus() == nullptr) {
      fail_invalid(what + " is CUDA memory, but this strategy's replicas are not GPUs: pass host memory");
    }
  }
}

// The step on variables in host memory (fused_all_reduce); below.
void apply_gradients_on_host(Strategy& strategy, const std::vector<Variable*>& variables,
                             const std::vector<std::vector<TensorRef>>& gradients, WorkerOptimizer& optimizer);

// One update per variable and step: a variable listed twice would be stepped twice.
void check_each_once(const std::vector<Variable*>& variables) {
  std::vector<std::pair<const Variable*, size_t>> sorted;
  for (size_t i = 0; i < variables.size(); ++i) sorted.emplace_back(variables[i], i);
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 1; k < sorted.size(); ++k) {
    if (sorted[k].first == sorted[k - 1].first) {
      fail_invalid("vars[" + std::to_string(sorted[k - 1].second) + "] and vars[" + std::to_string(sorted[k].second) +
                   "] are the same variable ('" + sorted[k].first->name() + "')");
    }
  }
}

}  // namespace

void apply_gradients(Strategy& strategy, const std::vector<Variable*>& variables,
                     const std::vector<std::vector<TensorRef>>& gradients, WorkerOptimizer& optimizer) {
  bool one_per_variable = gradients.size() == static_cast<size_t>(strategy.num_local_replicas());
  for (const std::vector<TensorRef>& replica : gradients) one_per_variable &= replica.size() == variables.size();
  if (!one_per_variable) fail(Status::kInternal, "apply_gradients: not one gradient per variable and local replica");
  for (size_t i = 0; i < variables.size(); ++i) check_trainable(strategy, *variables[i], gradients, i);
  check_each_once(variables);
  TimelineSpan span(strategy.timeline(), "apply_gradients", "apply_gradients", "apply_gradients");
  if (span.recording()) {
    span.event().add("variables", static_cast<int64_t>(variables.size())).add("replicas", strategy.num_local_replicas());
  }
#ifdef DIST_HAVE_CUDA
  // A strategy's ON_WRITE variables are all on its GPU replicas, or none is.
  if (!variables.empty() && variables[0]->device_copies() != nullptr) {
    apply_gradients_on_devices(strategy, variables, gradients, optimizer);
    return;
  }
  // Variables on the host (CENTRAL_STORAGE over several GPUs): gradients
  // computed on the GPUs come to the host first.
  std::vector<std::vector<unsigned char>> staging;
  std::vector<std::vector<TensorRef>> on_host = gradients;
  const auto deadline = strategy.deadline();  // one for all the copies
  for (auto& replica : on_host) {
    for (TensorRef& gradient : replica) {
      if (!gradient.on_device()) continue;
      staging.emplace_back();
      const void* host = host_view(gradient, staging.back(), deadline);
      gradient = TensorRef{const_cast<void*>(host), gradient.count, gradient.dtype};
    }
  }
  apply_gradients_on_host(strategy, variables, on_host, optimizer);
#else
  apply_gradients_on_host(strategy, variables, gradients, optimizer);
#endif
}

namespace {

void apply_gradients_on_host(Strategy& strategy, const std::vector<Variable*>& variables,
                             const std::vector<std::vector<TensorRef>>& gradients, WorkerOptimizer& optimizer) {
  optimizer.begin_step();
  // On one host the worker that reduces a segment updates it and hands the
  // new weights to the others, who write them without reading their old
  // weights or the optimizer's slots (the same arithmetic, done once).
  const bool shared = strategy.all_reduces_pieces_across_workers();
  optimizer.begin_call(variables, shared, [&strategy](void* data, uint64_t count, DType dtype) {
    strategy.all_reduce_across_workers(TensorRef{data, count, dtype}, ReduceOp::SUM);
  });
  // A SUM on the wire; the optimizer divides by the replicas as it reads the
  // sum, which spares the bucket a pass of its own.
  const int64_t replicas = strategy.num_replicas_in_sync();
  const FusedFinisher share_update = [&](const FusedSegment& segment, const PartInputs& inputs, void* out) {
    Variable& v = *variables[segment.tensor];
    optimizer.apply_and_publish(v, segment.offset, inputs.buffers, inputs.size, out, segment.count, replicas);
    v.mirror_range(segment.offset, segment.count);
  };
  fused_all_reduce(
      strategy, ReduceOp::SUM, gradients,
      [&](const FusedSegment& segment, const void* data) {
        Variable& v = *variables[segment.tensor];
        if (segment.finished) return v.overwrite_range(segment.offset, data, segment.count);
        optimizer.apply(v, segment.offset, data, segment.count, replicas);
        v.mirror_range(segment.offset, segment.count);
      },
      shared ? &share_update : nullptr);
}

}  // namespace

}  // namespace dist
