#include "ps/spec_codec.h"

#include <optional>
#include <string>

#include "base/status.h"

namespace dist::ps {
namespace {

// The protocol numbers optimizers its own, older way (create requests and
// checkpoint shard files carry it): 0 none, then these kinds from 1.
constexpr OptimizerKind kWireOptimizers[] = {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdagrad,
                                             OptimizerKind::kAdam};
constexpr int32_t kWireOptimizerCount = sizeof kWireOptimizers / sizeof kWireOptimizers[0];

int32_t optimizer_to_wire(const std::optional<OptimizerConfig>& optimizer) {
  if (!optimizer) return 0;
  for (int32_t i = 0; i < kWireOptimizerCount; ++i) {
    if (kWireOptimizers[i] == optimizer->kind) return i + 1;
  }
  fail(Status::kInternal,
       "optimizer kind " + std::to_string(static_cast<int32_t>(optimizer->kind)) + " has no number on the wire");
}

std::optional<OptimizerKind> optimizer_from_wire(int32_t value) {
  if (value < 0 || value > kWireOptimizerCount) {
    fail_invalid("optimizer " + std::to_string(value) +
                 " is not one of 0 none, 1 sgd, 2 momentum, 3 adagrad, 4 adam");
  }
  if (value == 0) return std::nullopt;
  return kWireOptimizers[value - 1];
}

}  // namespace

void encode_spec(const VariableSpec& spec, ByteWriter& out) {
  out.put_string(spec.name);
  out.put(static_cast<int32_t>(spec.dtype));
  out.put(static_cast<uint32_t>(spec.shape.size()));
  for (int64_t dim : spec.shape) out.put(dim);
  out.put(spec.row_offset);
  out.put(spec.rows);
  // Without an optimizer the hyperparameters go as their defaults.
  const OptimizerConfig o = spec.optimizer.value_or(OptimizerConfig{});
  out.put(optimizer_to_wire(spec.optimizer));
  out.put(o.learning_rate);
  out.put(o.momentum);
  out.put(static_cast<uint8_t>(o.nesterov ? 1 : 0));
  out.put(o.initial_accumulator_value);
  out.put(o.beta_1);
  out.put(o.beta_2);
  out.put(o.epsilon);
  out.put(spec.sync.replicas_to_aggregate);
  out.put(spec.sync.max_staleness);
}

VariableSpec decode_spec(ByteReader& in) {
  VariableSpec spec;
  spec.name = in.get_string("name", kMaxNameBytes);
  spec.dtype = dtype_from_int(in.get<int32_t>("dtype"));
  const uint32_t rank = in.get<uint32_t>("rank");
  if (rank > kMaxRank) fail_invalid(in.what() + ": rank " + std::to_string(rank) + " is more than " + std::to_string(kMaxRank));
  for (uint32_t d = 0; d < rank; ++d) spec.shape.push_back(in.get<int64_t>("dimension"));
  spec.row_offset = in.get<uint64_t>("row_offset");
  spec.rows = in.get<uint64_t>("rows");
  const std::optional<OptimizerKind> kind = optimizer_from_wire(in.get<int32_t>("optimizer"));
  OptimizerConfig o;
  o.learning_rate = in.get<double>("learning_rate");
  o.momentum = in.get<double>("momentum");
  o.nesterov = in.get<uint8_t>("nesterov") != 0;
  o.initial_accumulator_value = in.get<double>("initial_accumulator_value");
  o.beta_1 = in.get<double>("beta1");
  o.beta_2 = in.get<double>("beta2");
  o.epsilon = in.get<double>("epsilon");
  if (kind) {
    o.kind = *kind;
    spec.optimizer = o;
  }
  spec.sync.replicas_to_aggregate = in.get<uint32_t>("replicas_to_aggregate");
  spec.sync.max_staleness = in.get<uint32_t>("max_staleness");
  validate(spec);
  // Hyperparameters sent without an optimizer are checked all the same.
  if (!spec.optimizer) check_optimizer_config(o);
  return spec;
}

}  // namespace dist::ps
