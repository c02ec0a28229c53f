// One shard of a variable as a server holds it: its values, the optimizer's
// slots, and a version that counts the updates applied. Every operation takes
// the shard's lock and either completes or changes nothing: all its arguments
// (sizes, row indices) are checked before the first byte is written.
//
// Row indices are local to the shard (0 .. spec().rows - 1).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "ps/variable_spec.h"

namespace dist::ps {

// A copy of a shard's state, taken under its lock (what a checkpoint writes).
struct ShardState {
  VariableSpec spec;
  std::vector<uint8_t> values;
  std::vector<std::vector<uint8_t>> slots;  // the optimizer's (optimizers/optimizer_slots.h)
  uint64_t version = 0;
  int64_t optimizer_step = 0;  // updates the optimizer has applied (Adam's t)
};

class ShardVariable {
 public:
  using Clock = std::chrono::steady_clock;

  // `initial` holds spec.bytes() bytes, or is null for zeros. Slots start at
  // the optimizer's initial value.
  ShardVariable(const VariableSpec& spec, const void* initial);
  // Takes a restored state (checked: sizes must match the spec).
  explicit ShardVariable(ShardState state);

  const VariableSpec& spec() const { return spec_; }
  uint64_t version() const;

  // Copies the values into out (spec().bytes()); returns the version read.
  // With min_version > 0, first waits until the version reaches it (what a
  // synchronous worker does after pushing), failing with kTimeout at the
  // deadline, or with kAborted as soon as *cancel becomes true.
  uint64_t read(void* out, uint64_t min_version = 0, Clock::time_point deadline = Clock::time_point::max(),
                const std::atomic<bool>* cancel = nullptr) const;
  // read() without the copy: the values themselves, unchanging while held
  // (a write meanwhile gives the shard a copy of its own). For sending a pull
  // straight from the shard without holding its lock. *version: as read().
  std::shared_ptr<const std::vector<uint8_t>> share(uint64_t* version, uint64_t min_version = 0,
                                                    Clock::time_point deadline = Clock::time_point::max(),
                                                    const std::atomic<bool>* cancel = nullptr) const;

  // Each takes spec().bytes() bytes and returns the new version.
  uint64_t assign(const void* values);
  // assign() without its copy: `values` (exactly spec().bytes() bytes) become
  // the shard's values and it gets the old ones back, for its owner to reuse.
  // (While a share() is held, the buffer is taken and an empty one given back.)
  uint64_t assign_exchange(std::vector<uint8_t>& values);
  uint64_t assign_add(const void* values);
  uint64_t assign_sub(const void* values);

  struct GradientOutcome {
    uint64_t version = 0;  // after this call
    bool accepted = false; // false: dropped as stale or as a second gradient of one worker in a round
    bool applied = false;  // the optimizer ran (always, when accepted and asynchronous)
  };
  // Applies (asynchronous) or aggregates (synchronous, see SyncConfig) one
  // gradient of spec().bytes() bytes. `worker` < 0 is anonymous; `step` is the
  // version the gradient was computed from.
  GradientOutcome apply_gradient(const void* gradient, int64_t worker, uint64_t step);

  // Sparse access: `rows` has `count` local row indices (duplicates allowed).
  void read_rows(const int64_t* rows, size_t count, void* out) const;
  // values holds count rows; duplicates add up. Returns the new version.
  uint64_t add_rows(const int64_t* rows, size_t count, const void* values);
  // Sums duplicate rows' gradients, then runs the optimizer on those rows only.
  uint64_t apply_sparse_gradient(const int64_t* rows, size_t count, const void* gradients);

  ShardState snapshot() const;
  // Replaces values, slots and counters with `state` (same slice).
  void restore(const ShardState& state);

 private:
  void check_rows(const int64_t* rows, size_t count) const;
  // The values for writing (under mutex_): copied first when share() handed them out.
  std::vector<uint8_t>& writable();
  void wait_for(std::unique_lock<std::mutex>& lock, uint64_t min_version, Clock::time_point deadline,
                const std::atomic<bool>* cancel) const;
  void require_optimizer(const char* what) const;
  // One optimizer step over elements [first, first + count) of `values`
  // (the shard's, from element 0) and of the slots.
  void run_optimizer(void* values, const void* grad, size_t first, size_t count);
  uint64_t bump();

  VariableSpec spec_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  // The values, and how many pulls are being sent straight from them
  // (share()). A write while any is copies them first. The count, not
  // shared_ptr::use_count(), decides: its acquire load orders a pull's last
  // read before the write that follows.
  struct SharedValues {
    explicit SharedValues(std::vector<uint8_t> initial) : bytes(std::move(initial)) {}
    std::vector<uint8_t> bytes;
    std::atomic<int64_t> pulls{0};
  };
  std::shared_ptr<SharedValues> values_;
  std::vector<std::vector<uint8_t>> slots_;
  uint64_t version_ = 0;
  int64_t optimizer_step_ = 0;
  // Synchronous mode: the round being aggregated.
  std::vector<uint8_t> gradient_sum_;
  uint32_t gradients_in_round_ = 0;
  std::set<int64_t> workers_in_round_;
};

}  // namespace dist::ps
