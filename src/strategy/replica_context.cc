#include "strategy/replica_context.h"

#include <cstring>

#include "collectives/reduce_kernels.h"
#include "collectives/signature.h"
#include "strategy/merge_scope.h"
#ifdef DIST_HAVE_CUDA
#include "strategy/device_all_reduce.h"
#endif

namespace dist {

void reduce_across_replicas(Strategy& strategy, ReduceOp op, const std::vector<const void*>& inputs,
                            const TensorRef& out) {
  // MEAN is a SUM everywhere, divided once by every replica in sync at the end.
  const ReduceOp combine = op == ReduceOp::MEAN ? ReduceOp::SUM : op;
  reduce_many(out.data, inputs.data(), inputs.size(), out.count, out.dtype, combine);
  strategy.all_reduce_across_workers(out, combine);
  if (op == ReduceOp::MEAN) finalize_mean(out.data, out.count, out.dtype, strategy.num_replicas_in_sync());
}

void ReplicaContext::all_reduce(ReduceOp op, const TensorRef& buffer) {
  CallSignature signature;
  signature.kind = CollectiveKind::kAllReduce;
  signature.dtype = buffer.dtype;
  signature.op = op;
  signature.count = buffer.count;
  signature.memory = buffer.memory;  // every local replica passes the same kind
  TensorRef mine = buffer;
  exchange(Contribution{describe(signature), 0, &mine}, [&](const std::vector<void*>& payloads) {
#ifdef DIST_HAVE_CUDA
    if (buffer.on_device()) {
      std::vector<TensorRef> buffers;
      for (void* p : payloads) buffers.push_back(*static_cast<TensorRef*>(p));
      all_reduce_on_devices(strategy_, op, buffers);
      return;
    }
#endif
    std::vector<const void*> inputs;
    for (void* p : payloads) inputs.push_back(static_cast<TensorRef*>(p)->data);
    const TensorRef& first = *static_cast<TensorRef*>(payloads[0]);
    reduce_across_replicas(strategy_, op, inputs, first);
    for (size_t r = 1; r < payloads.size(); ++r) {
      const TensorRef& other = *static_cast<TensorRef*>(payloads[r]);
      if (other.data != first.data) std::memcpy(other.data, first.data, first.bytes());
    }
  });
}

void ReplicaContext::merge_call(void* value, const std::function<void(const std::vector<void*>& values)>& fn) {
  exchange(Contribution{"merge_call", 0, value}, [&](const std::vector<void*>& values) {
    MergeScope cross_replica(strategy_);
    fn(values);
  });
}

}  // namespace dist
