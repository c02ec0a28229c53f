#include "ps/shard_variable.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "base/status.h"
#include "collectives/reduce_kernels.h"
#include "optimizers/dense_update.h"
#include "optimizers/optimizer_slots.h"
#include "ps/elementwise.h"

namespace dist::ps {
namespace {

// Checked before anything is sized by it.
const VariableSpec& validated(const VariableSpec& spec) {
  validate(spec);
  return spec;
}

}  // namespace

ShardVariable::ShardVariable(const VariableSpec& spec, const void* initial)
    : spec_(validated(spec)), values_(std::make_shared<SharedValues>(std::vector<uint8_t>(spec.bytes()))) {
  std::vector<uint8_t>& bytes = values_->bytes;
  if (initial != nullptr && !bytes.empty()) std::memcpy(bytes.data(), initial, bytes.size());
  if (spec_.optimizer) slots_ = new_slots(*spec_.optimizer, spec_.dtype, spec_.elements());
}

ShardVariable::ShardVariable(ShardState state) : ShardVariable(state.spec, nullptr) { restore(state); }

void ShardVariable::restore(const ShardState& state) {
  if (!same_slice(state.spec, spec_)) {
    fail(Status::kMismatch, "restoring " + describe(spec_) + " from " + describe(state.spec));
  }
  if (state.values.size() != spec_.bytes()) fail_invalid("restoring " + spec_.name + ": wrong number of value bytes");
  std::lock_guard<std::mutex> guard(mutex_);
  values_ = std::make_shared<SharedValues>(state.values);
  // Slots of a different optimizer (the checkpoint trained with another one)
  // are not carried over; the fresh slots stay.
  if (state.slots.size() == slots_.size()) {
    for (size_t k = 0; k < slots_.size(); ++k) {
      if (state.slots[k].size() != values_->bytes.size()) fail_invalid("restoring " + spec_.name + ": wrong slot size");
    }
    slots_ = state.slots;
  }
  version_ = state.version;
  optimizer_step_ = state.optimizer_step;
  gradient_sum_.clear();
  gradients_in_round_ = 0;
  workers_in_round_.clear();
  changed_.notify_all();
}

uint64_t ShardVariable::version() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return version_;
}

uint64_t ShardVariable::bump() {
  ++version_;
  changed_.notify_all();
  return version_;
}

std::vector<uint8_t>& ShardVariable::writable() {
  // Pulls start under the lock held here; one that ends meanwhile only
  // costs a copy.
  if (values_->pulls.load(std::memory_order_acquire) > 0) values_ = std::make_shared<SharedValues>(values_->bytes);
  return values_->bytes;
}

void ShardVariable::wait_for(std::unique_lock<std::mutex>& lock, uint64_t min_version, Clock::time_point deadline,
                             const std::atomic<bool>* cancel) const {
  // Waits in short slices so that a stopping server is never held up.
  while (version_ < min_version) {
    if (cancel != nullptr && cancel->load()) {
      fail(Status::kAborted, "variable " + quoted(spec_.name) + ": the server is stopping");
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      fail(Status::kTimeout, "variable " + quoted(spec_.name) + " is at version " + std::to_string(version_) +
                                 "; timed out waiting for version " + std::to_string(min_version));
    }
    changed_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
}

uint64_t ShardVariable::read(void* out, uint64_t min_version, Clock::time_point deadline,
                             const std::atomic<bool>* cancel) const {
  std::unique_lock<std::mutex> lock(mutex_);
  wait_for(lock, min_version, deadline, cancel);
  const std::vector<uint8_t>& bytes = values_->bytes;
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return version_;
}

std::shared_ptr<const std::vector<uint8_t>> ShardVariable::share(uint64_t* version, uint64_t min_version,
                                                                 Clock::time_point deadline,
                                                                 const std::atomic<bool>* cancel) const {
  std::unique_lock<std::mutex> lock(mutex_);
  wait_for(lock, min_version, deadline, cancel);
  *version = version_;
  std::shared_ptr<SharedValues> held = values_;
  held->pulls.fetch_add(1, std::memory_order_relaxed);
  // The pull ends when its sender drops the pointer: the release orders
  // everything it read before a later write's acquire.
  return std::shared_ptr<const std::vector<uint8_t>>(
      &held->bytes, [held](const std::vector<uint8_t>*) { held->pulls.fetch_sub(1, std::memory_order_release); });
}

uint64_t ShardVariable::assign(const void* values) {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<uint8_t>& mine = writable();
  if (!mine.empty()) std::memcpy(mine.data(), values, mine.size());
  return bump();
}

uint64_t ShardVariable::assign_exchange(std::vector<uint8_t>& values) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (values.size() != values_->bytes.size()) {
    fail_invalid("variable " + quoted(spec_.name) + ": assign of " + std::to_string(values.size()) + " bytes, expected " +
                 std::to_string(values_->bytes.size()));
  }
  if (values_->pulls.load(std::memory_order_acquire) == 0) {
    values_->bytes.swap(values);
  } else {
    // A pull still sends the old values: they stay with it, and the caller's
    // buffer becomes the values (it gets an empty one back).
    values_ = std::make_shared<SharedValues>(std::move(values));
    values.clear();
  }
  return bump();
}

uint64_t ShardVariable::assign_add(const void* values) {
  std::lock_guard<std::mutex> guard(mutex_);
  add_in_place(writable().data(), values, spec_.elements(), spec_.dtype);
  return bump();
}

uint64_t ShardVariable::assign_sub(const void* values) {
  std::lock_guard<std::mutex> guard(mutex_);
  subtract_in_place(writable().data(), values, spec_.elements(), spec_.dtype);
  return bump();
}

void ShardVariable::require_optimizer(const char* what) const {
  if (!spec_.optimizer) {
    fail_invalid(std::string(what) + ": variable " + quoted(spec_.name) + " has no optimizer");
  }
}

void ShardVariable::run_optimizer(void* values, const void* grad, size_t first, size_t count) {
  dense_update_from_array(*spec_.optimizer, optimizer_step_, spec_.dtype,
                          update_target(values, slots_, spec_.dtype, first, count), grad);
}

ShardVariable::GradientOutcome ShardVariable::apply_gradient(const void* gradient, int64_t worker, uint64_t step) {
  require_optimizer("apply_gradient");
  std::lock_guard<std::mutex> guard(mutex_);
  GradientOutcome outcome;
  const uint32_t needed = spec_.sync.replicas_to_aggregate;
  if (needed == 0) {
    ++optimizer_step_;
    run_optimizer(writable().data(), gradient, 0, spec_.elements());
    outcome.version = bump();
    outcome.accepted = outcome.applied = true;
    return outcome;
  }
  const bool stale = version_ > step && version_ - step > spec_.sync.max_staleness;
  const bool repeated = worker >= 0 && workers_in_round_.count(worker) != 0;
  outcome.version = version_;
  if (stale || repeated) return outcome;
  outcome.accepted = true;
  if (gradients_in_round_ == 0) {
    gradient_sum_.assign(static_cast<const uint8_t*>(gradient), static_cast<const uint8_t*>(gradient) + values_->bytes.size());
  } else {
    add_in_place(gradient_sum_.data(), gradient, spec_.elements(), spec_.dtype);
  }
  ++gradients_in_round_;
  if (worker >= 0) workers_in_round_.insert(worker);
  if (gradients_in_round_ < needed) return outcome;
  finalize_mean(gradient_sum_.data(), spec_.elements(), spec_.dtype, gradients_in_round_);
  ++optimizer_step_;
  run_optimizer(writable().data(), gradient_sum_.data(), 0, spec_.elements());
  gradients_in_round_ = 0;
  workers_in_round_.clear();
  outcome.version = bump();
  outcome.applied = true;
  return outcome;
}

void ShardVariable::check_rows(const int64_t* rows, size_t count) const {
  for (size_t i = 0; i < count; ++i) {
    if (rows[i] < 0 || static_cast<uint64_t>(rows[i]) >= spec_.rows) {
      fail_invalid("variable " + quoted(spec_.name) + ": row index " + std::to_string(rows[i]) + " (entry " +
                   std::to_string(i) + ") is outside this shard's " + std::to_string(spec_.rows) + " rows");
    }
  }
}

void ShardVariable::read_rows(const int64_t* rows, size_t count, void* out) const {
  check_rows(rows, count);
  const size_t row_bytes = spec_.row_bytes();
  std::lock_guard<std::mutex> guard(mutex_);
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(static_cast<uint8_t*>(out) + i * row_bytes, values_->bytes.data() + static_cast<size_t>(rows[i]) * row_bytes,
                row_bytes);
  }
}

uint64_t ShardVariable::add_rows(const int64_t* rows, size_t count, const void* values) {
  check_rows(rows, count);
  const size_t row_bytes = spec_.row_bytes();
  std::lock_guard<std::mutex> guard(mutex_);
  uint8_t* const mine = writable().data();
  for (size_t i = 0; i < count; ++i) {
    add_in_place(mine + static_cast<size_t>(rows[i]) * row_bytes,
                 static_cast<const uint8_t*>(values) + i * row_bytes, spec_.row_elements(), spec_.dtype);
  }
  return bump();
}

uint64_t ShardVariable::apply_sparse_gradient(const int64_t* rows, size_t count, const void* gradients) {
  require_optimizer("sparse apply_gradient");
  if (spec_.sync.replicas_to_aggregate != 0) {
    fail(Status::kUnsupported, "variable " + quoted(spec_.name) +
                                   ": sparse gradients are applied asynchronously only (it is synchronous)");
  }
  check_rows(rows, count);
  const size_t row_bytes = spec_.row_bytes();
  const size_t row_elements = static_cast<size_t>(spec_.row_elements());
  // Duplicate rows are summed first, so each row takes one optimizer step.
  std::map<int64_t, std::vector<uint8_t>> merged;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* g = static_cast<const uint8_t*>(gradients) + i * row_bytes;
    auto [it, inserted] = merged.try_emplace(rows[i], g, g + row_bytes);
    if (!inserted) add_in_place(it->second.data(), g, row_elements, spec_.dtype);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  ++optimizer_step_;
  uint8_t* const mine = writable().data();
  for (const auto& [row, gradient] : merged) {
    run_optimizer(mine, gradient.data(), static_cast<size_t>(row) * row_elements, row_elements);
  }
  return bump();
}

ShardState ShardVariable::snapshot() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return ShardState{spec_, values_->bytes, slots_, version_, optimizer_step_};
}

}  // namespace dist::ps
