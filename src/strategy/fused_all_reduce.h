// The fused all-reduce of many tensors behind apply_gradients (Horovod's
// tensor fusion, TF's bytes_per_pack): the tensors of one dtype form a stream
// cut into buckets of bytes_per_pack, small tensors packed together and large
// ones split. Packing a bucket also combines the local replicas; while one
// bucket is all-reduced across workers, the next is packed and the previous
// one handed to the consumer. With a single local replica, tensors of at least
// a sixteenth of a bucket are all-reduced where they lie (no copy in or out):
// they are large enough that one call each costs little more than packing.
//
// With the workers on one host (a shared segment) there are no buckets: the
// local replicas are summed into replica 0's tensors, and each dtype's
// tensors go into one piecewise all-reduce
// (collectives/piecewise.h) that reads them where they lie and hands every
// finished part to the consumer while it is in cache, so an optimizer as
// consumer updates the weights without a pass of its own over the gradients.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/piecewise.h"
#include "collectives/reduce_op.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"

namespace dist {

// Elements [offset, offset + count) of tensor `tensor`, reduced.
struct FusedSegment {
  size_t tensor = 0;
  uint64_t offset = 0;
  uint64_t count = 0;
  DType dtype = DType::F32;
  // The data is a finisher's output (FusedFinisher), not the reduced values.
  bool finished = false;
};

using FusedConsumer = std::function<void(const FusedSegment& segment, const void* reduced)>;

// Optional, with op SUM: on one worker only, reduces a segment itself and
// writes something else in its place (collectives/piecewise.h, PartFinisher):
// `inputs` are buffers of the segment's elements whose sum, added in order,
// is the reduced segment, and `out` receives what the other workers'
// consumers then get with `finished` set; this worker's consumer does not see
// the segment. Only the one-host path finishes; elsewhere the finisher is
// never called and every consumer gets the reduced values. It must not throw
// for a reason the others do not share: a failure fails the call on every
// worker.
using FusedFinisher = std::function<void(const FusedSegment& segment, const PartInputs& inputs, void* out)>;

// per_replica[r][i] is local replica r's tensor i; every replica's tensor i has
// the same dtype and count. op SUM or MEAN (over every replica in sync).
// consume sees every element of every tensor exactly once, part by part as
// they complete; `reduced` may point into the caller's tensor (single replica),
// into shared memory or into a scratch copy, and is valid only during the call. consume may run on
// the communicator's thread while the caller waits.
// Collective in a multi-worker strategy.
void fused_all_reduce(Strategy& strategy, ReduceOp op, const std::vector<std::vector<TensorRef>>& per_replica,
                      const FusedConsumer& consume, const FusedFinisher* finish = nullptr);

// A consumer that writes the result back into every replica's tensors.
FusedConsumer write_back_to_replicas(const std::vector<std::vector<TensorRef>>& per_replica);

// TF's batch_reduce, in place: per_replica[r][i] becomes tensor i's result
// on every replica. Host tensors are fused (fused_all_reduce); tensors in
// CUDA memory on GPU replicas (all of them, then) are all-reduced one by one
// on the devices (device_all_reduce.h). Collective in a multi-worker strategy.
void batch_all_reduce(Strategy& strategy, ReduceOp op, const std::vector<std::vector<TensorRef>>& per_replica);

}  // namespace dist
