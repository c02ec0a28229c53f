// One collective call on CUDA buffers through NCCL: the library's dtypes and
// ops in NCCL's terms, and the call enqueued on the caller's stream. Where
// NCCL's arithmetic is not the host path's (include/c_api.h says so per op):
// f16 and bf16 are summed in their own precision, MEAN of floats scales each
// contribution by 1/n before summing, and MIN/MAX follow NCCL on NaN.
#pragma once

#include <nccl.h>

#include "collectives/collective_call.h"
#include "gpu/nccl_communicator.h"

namespace dist {

ncclDataType_t nccl_dtype(DType dtype);
ncclRedOp_t nccl_op(ReduceOp op);

// Enqueues `call` (device pointers, shapes as collective_call.h has them) on
// `stream` over `nccl`, this rank being `rank` of `size`; waits out NCCL's
// nonblocking enqueue until `deadline`. Throws kInternal with NCCL's words,
// kUnsupported for a kind NCCL does not run.
void enqueue_nccl_call(const NcclCommunicator& nccl, const CollectiveCall& call, int rank, int size, void* stream,
                       SteadyDeadline deadline);

}  // namespace dist
