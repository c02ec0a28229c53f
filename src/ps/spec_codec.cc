#include "ps/spec_codec.h"

namespace dist::ps {

void encode_spec(const VariableSpec& spec, ByteWriter& out) {
  out.put_string(spec.name);
  out.put(static_cast<int32_t>(spec.dtype));
  out.put(static_cast<uint32_t>(spec.shape.size()));
  for (int64_t dim : spec.shape) out.put(dim);
  out.put(spec.row_offset);
  out.put(spec.rows);
  const OptimizerConfig& o = spec.optimizer;
  out.put(static_cast<int32_t>(o.kind));
  out.put(o.learning_rate);
  out.put(o.momentum);
  out.put(static_cast<uint8_t>(o.nesterov ? 1 : 0));
  out.put(o.initial_accumulator_value);
  out.put(o.beta1);
  out.put(o.beta2);
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
  OptimizerConfig& o = spec.optimizer;
  o.kind = optimizer_kind_from_int(in.get<int32_t>("optimizer"));
  o.learning_rate = in.get<double>("learning_rate");
  o.momentum = in.get<double>("momentum");
  o.nesterov = in.get<uint8_t>("nesterov") != 0;
  o.initial_accumulator_value = in.get<double>("initial_accumulator_value");
  o.beta1 = in.get<double>("beta1");
  o.beta2 = in.get<double>("beta2");
  o.epsilon = in.get<double>("epsilon");
  spec.sync.replicas_to_aggregate = in.get<uint32_t>("replicas_to_aggregate");
  spec.sync.max_staleness = in.get<uint32_t>("max_staleness");
  validate(spec);
  return spec;
}

}  // namespace dist::ps
