// dist_optimizer_*, dist_strategy_batch_all_reduce and
// dist_strategy_apply_gradients: their arguments as per-replica tensors; the
// step itself is variables/apply_gradients.h.
#include "c_api/guard.h"
#include "c_api/optimizer_options.h"
#include "c_api/strategy_handles.h"
#include "strategy/fused_all_reduce.h"
#include "variables/apply_gradients.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

// buffers[r * n + i] as per_replica[r][i].
// Host or CUDA memory (the strategy checks which its replicas take).
std::vector<std::vector<TensorRef>> per_replica_tensors(const Strategy& strategy, const dist_buffer_t* buffers,
                                                        size_t n, const char* name) {
  if (n > 0) require(buffers, name);
  const size_t replicas = static_cast<size_t>(strategy.num_local_replicas());
  std::vector<std::vector<TensorRef>> out(replicas);
  for (size_t r = 0; r < replicas; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const std::string field = std::string(name) + "[" + std::to_string(r * n + i) + "]";
      out[r].push_back(host_or_device_tensor_of(&buffers[r * n + i], field.c_str()));
    }
  }
  return out;
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
    dist::batch_all_reduce(s, reduce_op, tensors);
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
    }
    dist::apply_gradients(s, variables, gradients, opt);
  });
}

}  // extern "C"
