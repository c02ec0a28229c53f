// dist_optimizer_*, dist_strategy_batch_all_reduce and
// dist_strategy_apply_gradients: the fused gradient step.
#include <algorithm>

#include "c_api/guard.h"
#include "c_api/optimizer_options.h"
#include "c_api/strategy_handles.h"
#include "strategy/fused_all_reduce.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

// buffers[r * n + i] as per_replica[r][i].
std::vector<std::vector<TensorRef>> per_replica_tensors(const Strategy& strategy, const dist_buffer_t* buffers,
                                                        size_t n, const char* name) {
  if (n > 0) require(buffers, name);
  const size_t replicas = static_cast<size_t>(strategy.num_local_replicas());
  std::vector<std::vector<TensorRef>> out(replicas);
  for (size_t r = 0; r < replicas; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const std::string field = std::string(name) + "[" + std::to_string(r * n + i) + "]";
      out[r].push_back(tensor_of(&buffers[r * n + i], field.c_str()));
    }
  }
  return out;
}

void check_trainable(const Strategy& strategy, const Variable& variable, const TensorRef& gradient, size_t i) {
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
  variable.check_buffer(gradient, ("the gradient of vars[" + std::to_string(i) + "]").c_str());
}

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
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_optimizer_create(const dist_optimizer_options_t* options, dist_optimizer_t** optimizer) {
  return call_guarded(__func__, [&] {
    require(optimizer, "optimizer");
    auto created = std::make_unique<dist_optimizer>();
    created->optimizer = std::make_unique<dist::WorkerOptimizer>(dist::read_optimizer_options(options));
    *optimizer = created.release();
  });
}

DIST_EXPORT void dist_optimizer_destroy(dist_optimizer_t* optimizer) { delete optimizer; }

DIST_EXPORT dist_status_t dist_optimizer_iterations(const dist_optimizer_t* optimizer, int64_t* iterations) {
  return call_guarded(__func__, [&] {
    *require(iterations, "iterations") = require(optimizer, "optimizer")->optimizer->iterations();
  });
}

DIST_EXPORT dist_status_t dist_strategy_batch_all_reduce(dist_strategy_t* strategy, dist_op_t op,
                                                         const dist_buffer_t* buffers, size_t n) {
  return call_guarded(__func__, [&] {
    dist::Strategy& s = *require(strategy, "strategy")->strategy;
    s.require_cross_replica("dist_strategy_batch_all_reduce");
    const dist::ReduceOp reduce_op = dist::reduce_op_from_int(op);
    const auto tensors = dist::per_replica_tensors(s, buffers, n, "buffers");
    dist::fused_all_reduce(s, reduce_op, tensors, dist::write_back_to_replicas(tensors));
  });
}

DIST_EXPORT dist_status_t dist_strategy_apply_gradients(dist_strategy_t* strategy, dist_variable_t* const* vars,
                                                        const dist_buffer_t* grads, size_t n,
                                                        dist_optimizer_t* optimizer) {
  return call_guarded(__func__, [&] {
    dist::Strategy& s = *require(strategy, "strategy")->strategy;
    s.require_cross_replica("dist_strategy_apply_gradients");
    dist::WorkerOptimizer& opt = *require(optimizer, "optimizer")->optimizer;
    if (n > 0) require(vars, "vars");
    const auto gradients = dist::per_replica_tensors(s, grads, n, "grads");
    std::vector<dist::Variable*> variables;
    for (size_t i = 0; i < n; ++i) {
      const std::string field = "vars[" + std::to_string(i) + "]";
      variables.push_back(require(vars[i], field.c_str())->variable.get());
      dist::check_trainable(s, *variables.back(), gradients[0][i], i);
    }
    dist::check_each_once(variables);
    opt.begin_step();
    // On one host the worker that reduces a segment updates it and hands the
    // new weights to the others, who write them without reading their old
    // weights or the optimizer's slots (the same arithmetic, done once).
    const bool shared = s.all_reduces_pieces_across_workers();
    opt.begin_call(variables, shared, [&s](void* data, uint64_t count, dist::DType dtype) {
      s.all_reduce_across_workers(dist::TensorRef{data, count, dtype}, dist::ReduceOp::SUM);
    });
    // A SUM on the wire; the optimizer divides by the replicas as it reads the
    // sum, which spares the bucket a pass of its own.
    const int64_t replicas = s.num_replicas_in_sync();
    const dist::FusedFinisher share_update = [&](const dist::FusedSegment& segment, const dist::PartInputs& inputs,
                                                 void* out) {
      dist::Variable& v = *variables[segment.tensor];
      opt.apply_and_publish(v, segment.offset, inputs.buffers, inputs.size, out, segment.count, replicas);
      v.mirror_range(segment.offset, segment.count);
    };
    dist::fused_all_reduce(
        s, dist::ReduceOp::SUM, gradients,
        [&](const dist::FusedSegment& segment, const void* data) {
          dist::Variable& v = *variables[segment.tensor];
          if (segment.finished) return v.overwrite_range(segment.offset, data, segment.count);
          opt.apply(v, segment.offset, data, segment.count, replicas);
          v.mirror_range(segment.offset, segment.count);
        },
        shared ? &share_update : nullptr);
  });
}

}  // extern "C"
