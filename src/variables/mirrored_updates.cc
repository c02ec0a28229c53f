// How a MirroredVariable (ON_WRITE) is written: in replica context every
// local replica contributes, the sync group's values are aggregated by the
// variable's aggregation, and the result is applied to every copy, so the
// copies never differ.
#include <cstring>
#include <vector>

#include "collectives/shm/memory_copy.h"
#include "strategy/replica_context.h"
#include "variables/aggregation_op.h"
#include "variables/variable.h"
#ifdef DIST_HAVE_CUDA
#include "variables/device_copies.h"
#endif

namespace dist {

void Variable::update_mirrored_in_replica(ReplicaContext& replica, UpdateKind kind, const void* value) {
  if (aggregation_ == Aggregation::kNone && strategy_->num_replicas_in_sync() > 1) {
    fail_invalid(label(kind) + " in replica context: a mirrored variable with aggregation NONE cannot be updated "
                 "with " + std::to_string(strategy_->num_replicas_in_sync()) +
                 " replicas in sync; give the variable an aggregation (SUM, MEAN or ONLY_FIRST_REPLICA)");
  }
  replica.exchange(Contribution{label(kind), id_, const_cast<void*>(value)}, [&](const std::vector<void*>& values) {
    std::vector<unsigned char> aggregated(bytes_);
    const TensorRef result{aggregated.data(), count_, dtype_};
    if (aggregation_ == Aggregation::kNone || aggregation_ == Aggregation::kOnlyFirstReplica) {
      // One replica in sync (NONE), or replica 0's value, which lives on the first worker.
      if (bytes_ > 0) std::memcpy(aggregated.data(), values[0], bytes_);
      if (aggregation_ == Aggregation::kOnlyFirstReplica) strategy_->broadcast_from_first_worker(result);
    } else {
      std::vector<const void*> inputs(values.begin(), values.end());
      reduce_across_replicas(*strategy_, reduce_op_of(aggregation_), inputs, result);
    }
    update_mirrored_everywhere(kind, aggregated.data());
  });
}

void Variable::update_mirrored_everywhere(UpdateKind kind, const void* value) {
#ifdef DIST_HAVE_CUDA
  if (device_copies_) {
    // The copies are equal: the new value is computed once and written to all.
    std::vector<unsigned char> updated(bytes_);
    if (bytes_ > 0) std::memcpy(updated.data(), value, bytes_);
    if (kind != UpdateKind::kAssign) {
      device_copies_->load(0, updated.data());
      apply_update(updated.data(), value, count_, dtype_, kind);
    }
    device_copies_->store_all(updated.data());
    return;
  }
#endif
  apply_update(copy(0), value, count_, dtype_, kind);
  mirror_range(0, count_);
}

void Variable::overwrite_range(uint64_t offset, const void* values, uint64_t count) {
  const size_t element = size_of(dtype_);
  // Each copy from `values`, which is cached, rather than copies 1.. from
  // copy 0, which the streaming stores have just sent to memory.
  for (int i = 0; i < num_copies(); ++i) {
    stream_store(static_cast<unsigned char*>(copy(i)) + offset * element, values, static_cast<size_t>(count) * element);
  }
}

void Variable::mirror_range(uint64_t offset, uint64_t count) {
  const size_t element = size_of(dtype_);
  for (int i = 1; i < num_copies(); ++i) {
    std::memcpy(static_cast<unsigned char*>(copy(i)) + offset * element,
                static_cast<const unsigned char*>(copy(0)) + offset * element, static_cast<size_t>(count) * element);
  }
}

}  // namespace dist
