// The values of GPU replicas in device memory (builds with CUDA): their
// all-reduce, and the host copies through which strategy.reduce combines
// them. All of it is ordered on the replicas' streams and bounded by the
// strategy's deadline.
#pragma once

#include <functional>
#include <vector>

#include "collectives/reduce_op.h"
#include "strategy/strategy.h"
#include "strategy/tensor_ref.h"

namespace dist {

// In place on buffers[i], local replica i's (on its GPU, ordered on its
// stream): the local step by the strategy's cross-device ops (or one NCCL
// communicator over every replica of every worker, for communication NCCL),
// the workers' step by its communication, MEAN's division once at the end,
// and the result on every replica's device before it returns. Run once for
// all local replicas (by the last to arrive at the rendezvous).
// Collective across workers.
void all_reduce_on_devices(Strategy& strategy, ReduceOp op, const std::vector<TensorRef>& buffers);

// Calls reduce(host values, host result) with host copies of those in
// device memory: values copied in on their streams before, the result copied
// out on its stream after, each copy waited for by the strategy's deadline.
// Values and result in host memory are passed as they are.
void with_host_copies(Strategy& strategy, const std::vector<TensorRef>& values, const TensorRef& result,
                      const std::function<void(const std::vector<TensorRef>&, const TensorRef&)>& reduce);

}  // namespace dist
