// The built-in optimizers of apply_gradients: SGD, SGD with momentum (Keras'
// formulation, optionally Nesterov), Adam (Keras' bias-corrected form) and
// Adagrad (Keras': accumulators start at initial_accumulator_value).
// Their slots live here, per variable; every worker runs the same arithmetic
// in the same order, so mirrored variables stay bit-identical everywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "variables/variable.h"

namespace dist {

enum class OptimizerKind : int32_t { kSgd = 0, kMomentum = 1, kAdam = 2, kAdagrad = 3 };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double learning_rate = 0.01;
  double momentum = 0.9;
  bool nesterov = false;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  double initial_accumulator_value = 0.1;
};

OptimizerKind optimizer_kind_from_int(int32_t value);
// Throws invalid-argument naming the first value out of range.
void check_optimizer_config(const OptimizerConfig& config);

class Optimizer {
 public:
  explicit Optimizer(const OptimizerConfig& config);

  int64_t iterations() const { return iterations_; }
  // SGD keeps no state per element; the others keep slots (velocity,
  // moments, accumulators) beside every weight.
  bool stateless() const { return config_.kind == OptimizerKind::kSgd; }

  // Starts one apply_gradients step (Adam's bias correction counts them).
  void begin_step() { ++iterations_; }

  // Adds up the workers' copies of a buffer in place (a collective): the
  // buffer holds unsigned integers of the slot's element width.
  using SumAcrossWorkers = std::function<void(void* data, uint64_t count, DType dtype)>;

  // Shared updates. On one host, each element of a step is updated by one
  // worker, which publishes the new weight (apply_and_publish); the others
  // copy it. A stateful optimizer's slots are then current on each worker
  // only for the elements it updated. The same call (the same variables in
  // the same order) gives every worker the same elements again, so this
  // holds from step to step; before a call of another kind or layout the
  // slots are made whole: each worker zeroes the parts it does not hold,
  // and a sum of the bits across workers leaves the one holder's values.
  //
  // Called by every worker at the start of every apply_gradients call, with
  // its variables in call order and whether its updates are shared. Makes
  // the slots whole where the call needs it (collective, in call order), and
  // readies the variables' slots for a shared call.
  void begin_call(const std::vector<Variable*>& call, bool shared, const SumAcrossWorkers& sum_across_workers);

  // Updates copy 0 of `variable`, elements [offset, offset + count), with the
  // gradient gradient_sum[i] / divisor (the variable's dtype: f32 or f64). The
  // division happens here, in the same pass, rather than in a pass of its own;
  // it is the IEEE division finalize_mean does, so the bits are the same.
  void apply(Variable& variable, uint64_t offset, const void* gradient_sum, uint64_t count, int64_t divisor);

  // apply() in a shared call, from a gradient sum it adds up itself: element
  // i's sum is parts[0][i], or parts[0][i] + parts[1][i] (num_parts 1 or 2,
  // as collectives/piecewise.h hands them over), the bits an all-reduce's SUM
  // of those buffers gives. In the same pass it writes the
  // new values to `published`, which the other workers copy instead of
  // repeating the update (the same bits, computed once); `published` may be
  // parts[0] when there is one part. This worker then holds the slots of
  // these elements.
  void apply_and_publish(Variable& variable, uint64_t offset, const void* const* parts, size_t num_parts,
                         void* published, uint64_t count, int64_t divisor);

  // Throws unless the optimizer can update this variable's dtype.
  static void check_dtype(const Variable& variable);

 private:
  struct Slots {
    std::vector<unsigned char> first;   // momentum velocity / Adam m / Adagrad accumulator
    std::vector<unsigned char> second;  // Adam v
    // After a shared call: current only in `held` (offset, count), which
    // this worker updated in a call of layout `layout`.
    bool partial = false;
    uint64_t layout = 0;
    std::vector<std::pair<uint64_t, uint64_t>> held;
  };
  // `gradient(i)` is element i's mean gradient.
  // `publish(i, value)` receives each new value (ps::NoPublication: none).
  template <typename T, typename Gradient, typename Publish>
  void apply_typed(T* value, Gradient gradient, uint64_t count, Slots& slots, uint64_t offset, Publish publish);
  // Throws unless `variable` and `divisor` can take an update now.
  void check_update(const Variable& variable, int64_t divisor) const;
  Slots& slots_of(const Variable& variable);
  // Adagrad's accumulators start at initial_accumulator_value, not zero.
  void fill_accumulators(std::vector<unsigned char>& slot, DType dtype) const;
  // Gives every worker the holder's values of a partial variable's slots.
  void make_whole(const Variable& variable, Slots& slots, const SumAcrossWorkers& sum_across_workers);

  OptimizerConfig config_;
  int64_t iterations_ = 0;
  std::unordered_map<uint64_t, Slots> slots_;  // by variable id
  // The (variable id, count) list of the last shared call, and a number
  // that changes whenever a call's list differs from it.
  std::vector<std::pair<uint64_t, uint64_t>> shared_call_;
  uint64_t layout_ = 0;
};

}  // namespace dist
