// What a replica function sees of the strategy while it runs (TF's
// ReplicaContext): its ids, and the collective steps all local replicas take
// together — all-reduce and merge_call.
#pragma once

#include <functional>
#include <vector>

#include "collectives/reduce_op.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"

namespace dist {

class ReplicaContext {
 public:
  ReplicaContext(Strategy& strategy, int local_index) : strategy_(strategy), local_index_(local_index) {}

  Strategy& strategy() const { return strategy_; }
  int local_index() const { return local_index_; }
  // Worker-major: worker index * local replicas + local index.
  int replica_id() const { return strategy_.replica_id(local_index_); }
  int num_replicas_in_sync() const { return strategy_.num_replicas_in_sync(); }

  // In place across every replica in sync; one identical result everywhere.
  void all_reduce(ReduceOp op, const TensorRef& buffer);

  // Runs fn once, with every local replica's value, when all have called.
  void merge_call(void* value, const std::function<void(const std::vector<void*>& values)>& fn);

  // A step of the local replicas (the building block of the two above and of
  // replica-context variable updates).
  void exchange(const Contribution& contribution, const ReplicaRendezvous::Step& step) {
    strategy_.rendezvous().exchange(local_index_, contribution, step);
  }

 private:
  Strategy& strategy_;
  int local_index_;
};

// Combines `count` elements of every local replica's buffer (SUM or MEAN) and
// then across workers, into `out` (which may be one of the inputs).
void reduce_across_replicas(Strategy& strategy, ReduceOp op, const std::vector<const void*>& inputs,
                            const TensorRef& out);

}  // namespace dist
