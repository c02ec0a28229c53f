#include "variables/worker_optimizer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/numbers.h"
#include "optimizers/dense_update.h"
#include "optimizers/optimizer_slots.h"
#ifdef DIST_HAVE_CUDA
#include "optimizers/device_dense_update.h"
#include "variables/device_copies.h"
#endif

namespace dist {

namespace {

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

WorkerOptimizer::WorkerOptimizer(const OptimizerConfig& config) : config_(config) {
  check_optimizer_config(config_);
}

void WorkerOptimizer::check_dtype(const Variable& variable) {
  if (!optimizer_updates(variable.dtype())) {
    fail_invalid("variable '" + variable.name() + "' is " + name(variable.dtype()) +
                 "; the optimizers update f32 and f64 variables");
  }
}

WorkerOptimizer::Slots& WorkerOptimizer::slots_of(const Variable& variable) {
  Slots& slots = slots_[variable.id()];
  if (slots.buffers.size() != static_cast<size_t>(slot_count(config_.kind))) {
    slots.buffers = new_slots(config_, variable.dtype(), variable.count());
  }
  return slots;
}

void WorkerOptimizer::check_update(const Variable& variable, int64_t divisor) const {
  check_dtype(variable);
  if (iterations_ == 0) fail_invalid("WorkerOptimizer::apply before begin_step");
  if (divisor < 1 || divisor > (int64_t{1} << 24)) {
    fail_invalid("WorkerOptimizer::apply: divisor " + std::to_string(divisor) + " is out of range 1..2^24");
  }
}

void WorkerOptimizer::apply(Variable& variable, uint64_t offset, const void* gradient_sum, uint64_t count,
                            int64_t divisor) {
  check_update(variable, divisor);
  Slots& slots = slots_of(variable);
  const UpdateTarget target = update_target(variable.copy(0), slots.buffers, variable.dtype(), offset, count);
  dense_update(config_, iterations_, variable.dtype(), target, [&](auto zero, auto&& update) {
    using T = decltype(zero);
    const auto* sums = static_cast<const T*>(gradient_sum);
    with_mean<T>(divisor, [&](auto mean) { update([sums, mean](size_t i) { return mean(sums[i]); }); });
  });
}

void WorkerOptimizer::apply_and_publish(Variable& variable, uint64_t offset, const void* const* parts,
                                        size_t num_parts, void* published, uint64_t count, int64_t divisor) {
  check_update(variable, divisor);
  if (num_parts < 1 || num_parts > 2) {
    fail(Status::kInternal, "WorkerOptimizer::apply_and_publish: " + std::to_string(num_parts) +
                                " gradient buffers, not 1 or 2");
  }
  Slots& slots = slots_of(variable);
  if (!stateless()) {
    if (!slots.partial) fail(Status::kInternal, "WorkerOptimizer::apply_and_publish outside a shared call");
    slots.held.emplace_back(offset, count);
  }
  const UpdateTarget target = update_target(variable.copy(0), slots.buffers, variable.dtype(), offset, count);
  dense_update(
      config_, iterations_, variable.dtype(), target,
      [&](auto zero, auto&& update) {
        using T = decltype(zero);
        with_mean<T>(divisor, [&](auto mean) { with_summed_gradient<T>(parts, num_parts, mean, update); });
      },
      PublishTo{published});
}

void WorkerOptimizer::begin_call(const std::vector<Variable*>& call, bool shared,
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

void WorkerOptimizer::make_whole(const Variable& variable, Slots& slots, const SumAcrossWorkers& sum_across_workers) {
  const size_t element = size_of(variable.dtype());
  const DType bits = element == 4 ? DType::U32 : DType::U64;
  std::sort(slots.held.begin(), slots.held.end());
  for (std::vector<uint8_t>& slot : slots.buffers) {
    if (slot.empty()) continue;
    uint64_t at = 0;
    auto zero_until = [&](uint64_t end) {
      std::memset(slot.data() + at * element, 0, static_cast<size_t>(end - at) * element);
    };
    for (const auto& [offset, count] : slots.held) {
      zero_until(offset);
      at = offset + count;
    }
    zero_until(variable.count());
    sum_across_workers(slot.data(), variable.count(), bits);
  }
  slots.partial = false;
  slots.held.clear();
}

#ifdef DIST_HAVE_CUDA
void WorkerOptimizer::apply_on_device(Variable& variable, int replica, uint64_t offset, const void* gradient_sum,
                                      uint64_t count, int64_t divisor, void* stream) {
  check_update(variable, divisor);
  const DeviceCopies& copies = *variable.device_copies();
  auto found = device_slots_.find(variable.id());
  if (found == device_slots_.end()) {
    // The slots' starting values, made on the host and copied to each GPU
    // through pinned memory; kept only once all are there.
    const auto initial = new_slots(config_, variable.dtype(), variable.count());
    std::vector<std::vector<std::shared_ptr<DeviceBuffer>>> made(static_cast<size_t>(copies.count()));
    for (const std::vector<uint8_t>& slot : initial) {
      PinnedBlock host(slot.size());
      if (!slot.empty()) std::memcpy(host.data(), slot.data(), slot.size());
      try {
        for (int r = 0; r < copies.count(); ++r) {
          auto buffer = std::make_shared<DeviceBuffer>(copies.device(r), slot.size());
          DeviceScope on(copies.device(r));
          copy_to_device_async(buffer->data(), host.data(), slot.size(), copies.stream(r));
          made[static_cast<size_t>(r)].push_back(std::move(buffer));
        }
        for (int r = 0; r < copies.count(); ++r) {
          DeviceScope on(copies.device(r));
          StreamMark(copies.stream(r)).wait(variable.strategy().deadline(), "setting up the optimizer's slots on a GPU");
        }
      } catch (...) {
        // A copy may still be reading the pinned block and writing the slots.
        host.abandon();
        for (auto& replica : made) {
          for (auto& buffer : replica) buffer->abandon();
        }
        throw;
      }
    }
    found = device_slots_.emplace(variable.id(), std::move(made)).first;
  }
  const auto& per_replica = found->second;
  const size_t element = size_of(variable.dtype());
  UpdateTarget target;
  target.values = static_cast<unsigned char*>(copies.data(replica)) + offset * element;
  const auto& slots = per_replica[static_cast<size_t>(replica)];
  for (size_t k = 0; k < slots.size() && k < 2; ++k) {
    target.slots[k] = static_cast<unsigned char*>(slots[k]->data()) + offset * element;
  }
  target.count = static_cast<size_t>(count);
  DeviceScope on(copies.device(replica));
  device_dense_update(config_, iterations_, variable.dtype(), target, gradient_sum, divisor, stream);
}
#endif

}  // namespace dist
