// The workers' optimizer of apply_gradients: the one optimizer
// (optimizers/) stepping mirrored variables' local copies, with each
// variable's slots (velocity, moments, accumulators) kept here beside it.
// Every worker runs the same arithmetic in the same order, so mirrored
// variables stay bit-identical everywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "optimizers/optimizer_config.h"
#include "variables/variable.h"
#ifdef DIST_HAVE_CUDA
#include <memory>

#include "gpu/cuda_memory.h"
#endif

namespace dist {

class WorkerOptimizer {
 public:
  explicit WorkerOptimizer(const OptimizerConfig& config);

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

#ifdef DIST_HAVE_CUDA
  // apply() on copy `replica` of a variable held on the GPU replicas, with
  // that replica's slots (on its device too), `gradient_sum` on the same
  // device, enqueued on `stream`: the device kernels of the same rules, the
  // same bits. The first step of a variable makes its slots there.
  void apply_on_device(Variable& variable, int replica, uint64_t offset, const void* gradient_sum, uint64_t count,
                       int64_t divisor, void* stream);
#endif

 private:
  struct Slots {
    std::vector<std::vector<uint8_t>> buffers;  // optimizers/optimizer_slots.h
    // After a shared call: current only in `held` (offset, count), which
    // this worker updated in a call of layout `layout`.
    bool partial = false;
    uint64_t layout = 0;
    std::vector<std::pair<uint64_t, uint64_t>> held;
  };
  // Throws unless `variable` and `divisor` can take an update now.
  void check_update(const Variable& variable, int64_t divisor) const;
  Slots& slots_of(const Variable& variable);
  // Gives every worker the holder's values of a partial variable's slots.
  void make_whole(const Variable& variable, Slots& slots, const SumAcrossWorkers& sum_across_workers);

  OptimizerConfig config_;
  int64_t iterations_ = 0;
  std::unordered_map<uint64_t, Slots> slots_;  // by variable id
#ifdef DIST_HAVE_CUDA
  // Of variables on GPU replicas: [replica][slot], by variable id.
  std::unordered_map<uint64_t, std::vector<std::vector<std::shared_ptr<DeviceBuffer>>>> device_slots_;
#endif
  // The (variable id, count) list of the last shared call, and a number
  // that changes whenever a call's list differs from it.
  std::vector<std::pair<uint64_t, uint64_t>> shared_call_;
  uint64_t layout_ = 0;
};

}  // namespace dist
