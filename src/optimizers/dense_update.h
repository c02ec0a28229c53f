// One optimizer step over a run of consecutive elements: the entry both users
// share. The servers run it over a shard, or over each row a sparse gradient
// names; the workers' apply_gradients over each segment of a fused
// all-reduce. It picks the element type (f32 or f64) and the kind's rule once
// per call; the rule's loop then runs with the gradient and the publication
// inlined, nothing chosen per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "optimizers/optimizer_config.h"
#include "optimizers/update_rules.h"

namespace dist {

// The elements one step updates: `count` weights at `values`, and the
// optimizer's slots at the same elements (slot_count(kind) of them; null
// beyond), all of the variable's dtype.
struct UpdateTarget {
  void* values = nullptr;
  void* slots[2] = {nullptr, nullptr};
  size_t count = 0;
};

// The target of elements [first, first + count) of a variable whose element
// 0 is at `values` and whose slots are `slots` (optimizer_slots.h).
UpdateTarget update_target(void* values, std::vector<std::vector<uint8_t>>& slots, DType dtype, uint64_t first,
                           uint64_t count);

// Runs `kind`'s rule in T. `step` is the 1-based number of this update (Adam's t).
template <typename T, typename Grad, typename Publish>
void update_elements(const OptimizerConfig& config, int64_t step, T* values, T* first, T* second, Grad grad,
                     size_t count, Publish publish) {
  switch (config.kind) {
    case OptimizerKind::kSgd:
      sgd_update(values, grad, count, config.learning_rate, publish);
      return;
    case OptimizerKind::kMomentum:
      momentum_update(values, first, grad, count, config.learning_rate, config.momentum, config.nesterov, publish);
      return;
    case OptimizerKind::kAdam:
      adam_update(values, first, second, grad, count, step, config.learning_rate, config.beta_1, config.beta_2,
                  config.epsilon, publish);
      return;
    case OptimizerKind::kAdagrad:
      adagrad_update(values, first, grad, count, config.learning_rate, config.epsilon, publish);
      return;
  }
}

// Updates `target` (of `dtype`, f32 or f64) by one step of `config`.
// `with_gradient(T{}, update)` calls update(grad) once, grad(i) returning
// element i's gradient as T. Each new value also goes to publish(i, value).
template <typename WithGradient, typename Publish = NoPublication>
void dense_update(const OptimizerConfig& config, int64_t step, DType dtype, const UpdateTarget& target,
                  WithGradient&& with_gradient, Publish publish = {}) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* values = static_cast<T*>(target.values);
    T* first = static_cast<T*>(target.slots[0]);
    T* second = static_cast<T*>(target.slots[1]);
    with_gradient(zero, [&](auto grad) {
      update_elements(config, step, values, first, second, grad, target.count, publish);
    });
  };
  if (dtype == DType::F32) {
    run(float{});
  } else if (dtype == DType::F64) {
    run(double{});
  } else {
    fail_invalid(std::string("the optimizers update f32 and f64 values, not ") + name(dtype));
  }
}

// dense_update's gradient read from an array of the target's dtype.
struct GradientIn {
  const void* values;
  template <typename T, typename Update>
  void operator()(T, Update&& update) const {
    update(GradientArray<T>{static_cast<const T*>(values)});
  }
};

// dense_update from a gradient array, instantiated once (dense_update.cc)
// for the servers' shards.
void dense_update_from_array(const OptimizerConfig& config, int64_t step, DType dtype, const UpdateTarget& target,
                             const void* gradient);

}  // namespace dist
