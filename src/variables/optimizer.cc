#include "variables/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/numbers.h"
#include "ps/optimizers/update_rules.h"

namespace dist {

OptimizerKind optimizer_kind_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(OptimizerKind::kAdagrad)) {
    fail_invalid("optimizer kind " + std::to_string(value) + " is not one of SGD, MOMENTUM, ADAM, ADAGRAD");
  }
  return static_cast<OptimizerKind>(value);
}

void check_optimizer_config(const OptimizerConfig& c) {
  auto in_unit = [](double v) { return v >= 0.0 && v < 1.0; };
  if (!(c.learning_rate > 0.0) || !std::isfinite(c.learning_rate)) {
    fail_invalid("learning_rate " + std::to_string(c.learning_rate) + " must be positive and finite");
  }
  if (!in_unit(c.momentum)) fail_invalid("momentum " + std::to_string(c.momentum) + " is outside [0, 1)");
  if (!in_unit(c.beta_1)) fail_invalid("beta_1 " + std::to_string(c.beta_1) + " is outside [0, 1)");
  if (!in_unit(c.beta_2)) fail_invalid("beta_2 " + std::to_string(c.beta_2) + " is outside [0, 1)");
  if (!(c.epsilon > 0.0) || !std::isfinite(c.epsilon)) {
    fail_invalid("epsilon " + std::to_string(c.epsilon) + " must be positive and finite");
  }
  if (!(c.initial_accumulator_value >= 0.0) || !std::isfinite(c.initial_accumulator_value)) {
    fail_invalid("initial_accumulator_value " + std::to_string(c.initial_accumulator_value) +
                 " must be non-negative and finite");
  }
}

namespace {

// Calls f(T{}) with T the C++ type of an optimizable dtype (f32 or f64).
template <typename F>
void with_element_type(DType dtype, F&& f) {
  if (dtype == DType::F32) {
    f(float{});
  } else {
    f(double{});
  }
}

// Calls f(mean), where mean(sum) is the mean gradient of a sum over `divisor`
// replicas. Dividing by a power of two is multiplying by its exact
// reciprocal: the same correctly rounded quotient, bit for bit, at a fraction
// of the cost (a vector division is several times slower than a
// multiplication, and this runs over every parameter of the model each step).
template <typename T, typename F>
void with_mean(int64_t divisor, F&& f) {
  if (is_power_of_two(divisor)) {
    const T reciprocal = T(1) / static_cast<T>(divisor);
    f([reciprocal](T sum) { return sum * reciprocal; });
  } else {
    const T by = static_cast<T>(divisor);
    f([by](T sum) { return sum / by; });
  }
}

// Calls f(gradient), where gradient(i) is the mean of element i's sum over
// `num_parts` buffers (1 or 2), added in order.
template <typename T, typename Mean, typename F>
void with_summed_gradient(const void* const* parts, size_t num_parts, Mean mean, F&& f) {
  const T* first = static_cast<const T*>(parts[0]);
  if (num_parts == 1) {
    f([first, mean](size_t i) { return mean(first[i]); });
    return;
  }
  const T* second = static_cast<const T*>(parts[1]);
  f([first, second, mean](size_t i) { return mean(first[i] + second[i]); });
}

}  // namespace

Optimizer::Optimizer(const OptimizerConfig& config) : config_(config) { check_optimizer_config(config_); }

void Optimizer::check_dtype(const Variable& variable) {
  if (variable.dtype() != DType::F32 && variable.dtype() != DType::F64) {
    fail_invalid("variable '" + variable.name() + "' is " + name(variable.dtype()) +
                 "; the optimizers update f32 and f64 variables");
  }
}

Optimizer::Slots& Optimizer::slots_of(const Variable& variable) {
  Slots& slots = slots_[variable.id()];
  const size_t bytes = static_cast<size_t>(variable.count()) * size_of(variable.dtype());
  if (config_.kind != OptimizerKind::kSgd && slots.first.size() != bytes) {
    slots.first.assign(bytes, 0);
    if (config_.kind == OptimizerKind::kAdagrad) fill_accumulators(slots.first, variable.dtype());
  }
  if (config_.kind == OptimizerKind::kAdam && slots.second.size() != bytes) slots.second.assign(bytes, 0);
  return slots;
}

void Optimizer::fill_accumulators(std::vector<unsigned char>& slot, DType dtype) const {
  if (dtype == DType::F32) {
    const float value = static_cast<float>(config_.initial_accumulator_value);
    for (size_t i = 0; i < slot.size(); i += sizeof value) std::memcpy(slot.data() + i, &value, sizeof value);
  } else {
    const double value = config_.initial_accumulator_value;
    for (size_t i = 0; i < slot.size(); i += sizeof value) std::memcpy(slot.data() + i, &value, sizeof value);
  }
}

template <typename T, typename Gradient, typename Publish>
void Optimizer::apply_typed(T* value, Gradient gradient, uint64_t count, Slots& slots, uint64_t offset,
                            Publish publish) {
  const auto n = static_cast<size_t>(count);
  switch (config_.kind) {
    case OptimizerKind::kSgd:
      ps::sgd_update(value, gradient, n, config_.learning_rate, publish);
      return;
    case OptimizerKind::kMomentum:
      ps::momentum_update(value, reinterpret_cast<T*>(slots.first.data()) + offset, gradient, n,
                          config_.learning_rate, config_.momentum, config_.nesterov, publish);
      return;
    case OptimizerKind::kAdam:
      ps::adam_update(value, reinterpret_cast<T*>(slots.first.data()) + offset,
                      reinterpret_cast<T*>(slots.second.data()) + offset, gradient, n, iterations_,
                      config_.learning_rate, config_.beta_1, config_.beta_2, config_.epsilon, publish);
      return;
    case OptimizerKind::kAdagrad:
      ps::adagrad_update(value, reinterpret_cast<T*>(slots.first.data()) + offset, gradient, n,
                         config_.learning_rate, config_.epsilon, publish);
      return;
  }
}

void Optimizer::check_update(const Variable& variable, int64_t divisor) const {
  check_dtype(variable);
  if (iterations_ == 0) fail_invalid("Optimizer::apply before begin_step");
  if (divisor < 1 || divisor > (int64_t{1} << 24)) {
    fail_invalid("Optimizer::apply: divisor " + std::to_string(divisor) + " is out of range 1..2^24");
  }
}

void Optimizer::apply(Variable& variable, uint64_t offset, const void* gradient_sum, uint64_t count,
                      int64_t divisor) {
  check_update(variable, divisor);
  Slots& slots = slots_of(variable);
  with_element_type(variable.dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto* value = static_cast<T*>(variable.copy(0)) + offset;
    const auto* sums = static_cast<const T*>(gradient_sum);
    with_mean<T>(divisor, [&](auto mean) {
      auto gradient = [sums, mean](size_t i) { return mean(sums[i]); };
      apply_typed(value, gradient, count, slots, offset, ps::NoPublication{});
    });
  });
}

void Optimizer::apply_and_publish(Variable& variable, uint64_t offset, const void* const* parts, size_t num_parts,
                                  void* published, uint64_t count, int64_t divisor) {
  check_update(variable, divisor);
  if (num_parts < 1 || num_parts > 2) {
    fail(Status::kInternal, "Optimizer::apply_and_publish: " + std::to_string(num_parts) +
                                " gradient buffers, not 1 or 2");
  }
  Slots& slots = slots_of(variable);
  if (!stateless()) {
    if (!slots.partial) fail(Status::kInternal, "Optimizer::apply_and_publish outside a shared call");
    slots.held.emplace_back(offset, count);
  }
  with_element_type(variable.dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto* value = static_cast<T*>(variable.copy(0)) + offset;
    const ps::PublishTo<T> publish{static_cast<T*>(published)};
    with_mean<T>(divisor, [&](auto mean) {
      with_summed_gradient<T>(parts, num_parts, mean,
                              [&](auto gradient) { apply_typed(value, gradient, count, slots, offset, publish); });
    });
  });
}

void Optimizer::begin_call(const std::vector<Variable*>& call, bool shared,
                           const SumAcrossWorkers& sum_across_workers) {
  if (stateless()) return;
  std::vector<std::pair<uint64_t, uint64_t>> layout;
  layout.reserve(call.size());
  for (const Variable* v : call) layout.emplace_back(v->id(), v->count());
  // A call that shares nothing, or shares along other lines, is a new
  // layout: no worker may rely on what it held before.
  if (!shared || layout != shared_call_) {
    ++layout_;
    shared_call_ = shared ? std::move(layout) : std::vector<std::pair<uint64_t, uint64_t>>();
  }
  for (Variable* v : call) {
    Slots& slots = slots_of(*v);
    if (slots.partial && slots.layout != layout_) make_whole(*v, slots, sum_across_workers);
    if (shared) {
      slots.partial = true;
      slots.layout = layout_;
      slots.held.clear();
    }
  }
}

void Optimizer::make_whole(const Variable& variable, Slots& slots, const SumAcrossWorkers& sum_across_workers) {
  const size_t element = size_of(variable.dtype());
  const DType bits = element == 4 ? DType::U32 : DType::U64;
  std::sort(slots.held.begin(), slots.held.end());
  for (std::vector<unsigned char>* slot : {&slots.first, &slots.second}) {
    if (slot->empty()) continue;
    uint64_t at = 0;
    auto zero_until = [&](uint64_t end) {
      std::memset(slot->data() + at * element, 0, static_cast<size_t>(end - at) * element);
    };
    for (const auto& [offset, count] : slots.held) {
      zero_until(offset);
      at = offset + count;
    }
    zero_until(variable.count());
    sum_across_workers(slot->data(), variable.count(), bits);
  }
  slots.partial = false;
  slots.held.clear();
}

}  // namespace dist
