#include "collectives/nccl_call.h"

#include <string>
#include <thread>

#include "gpu/cuda_memory.h"
#include "gpu/nccl_library.h"

namespace dist {
namespace {

// A nonblocking communicator may answer ncclInProgress: the call is then
// queued once its state settles. Throws with NCCL's words on failure.
void settle(const NcclCommunicator& nccl, ncclResult_t result, const char* call, SteadyDeadline deadline) {
  const NcclApi& api = NcclLibrary::instance().api();
  while (result == ncclInProgress) {
    if (std::chrono::steady_clock::now() >= deadline) {
      fail(Status::kTimeout, std::string(call) + " was still being enqueued at the deadline");
    }
    std::this_thread::yield();
    ncclResult_t state = ncclInProgress;
    const ncclResult_t asked = api.comm_get_async_error(nccl.handle(), &state);
    result = asked != ncclSuccess ? asked : state;
  }
  if (result != ncclSuccess) fail(Status::kInternal, describe_nccl_failure(call, result, nccl.handle()));
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// The reduction asked of NCCL for `op` over `size` ranks. A MEAN over one
// rank is its input: NCCL 2.28.9's one-rank ncclAvg (a scaled copy) left the
// last element of 4099 f64 unwritten on an H100, where its one-rank ncclSum
// (a plain copy) was right.
ncclRedOp_t reduction(ReduceOp op, int size) { return op == ReduceOp::MEAN && size == 1 ? ncclSum : nccl_op(op); }

}  // namespace

ncclDataType_t nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::I8: return ncclInt8;
    case DType::U8: return ncclUint8;
    case DType::I32: return ncclInt32;
    case DType::U32: return ncclUint32;
    case DType::I64: return ncclInt64;
    case DType::U64: return ncclUint64;
    case DType::F16: return ncclFloat16;
    case DType::BF16: return ncclBfloat16;
    case DType::F32: return ncclFloat32;
    case DType::F64: return ncclFloat64;
  }
  fail(Status::kInternal, "a dtype without an NCCL type");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return ncclSum;
    case ReduceOp::PROD: return ncclProd;
    case ReduceOp::MIN: return ncclMin;
    case ReduceOp::MAX: return ncclMax;
    case ReduceOp::MEAN: return ncclAvg;
  }
  fail(Status::kInternal, "an op without an NCCL reduction");
}

void enqueue_nccl_call(const NcclCommunicator& nccl, const CollectiveCall& call, int rank, int size, void* stream,
                       SteadyDeadline deadline) {
  const NcclApi& api = NcclLibrary::instance().api();
  const CallSignature& s = call.signature;
  const ncclComm_t comm = nccl.handle();
  const ncclDataType_t type = nccl_dtype(s.dtype);
  const size_t count = static_cast<size_t>(s.count);
  const size_t block_bytes = count * size_of(s.dtype);
  const cudaStream_t on = as_stream(stream);
  auto* recv = static_cast<unsigned char*>(call.recv);
  const bool in_place = call.send == call.recv;
  switch (s.kind) {
    case CollectiveKind::kAllReduce:
      settle(nccl, api.all_reduce(call.send, call.recv, count, type, reduction(s.op, size), comm, on), "ncclAllReduce",
             deadline);
      return;
    case CollectiveKind::kReduce:
      // recv is null off the root: NCCL reads it at the root only.
      settle(nccl, api.reduce(call.send, call.recv, count, type, reduction(s.op, size), s.root, comm, on), "ncclReduce",
             deadline);
      return;
    case CollectiveKind::kBroadcast:
      settle(nccl, api.broadcast(call.send, call.recv, count, type, s.root, comm, on), "ncclBroadcast", deadline);
      return;
    case CollectiveKind::kAllGather:
      // NCCL's in place is ours: this rank's block already at its place in recv.
      settle(nccl,
             api.all_gather(in_place ? recv + static_cast<size_t>(rank) * block_bytes : call.send, call.recv, count,
                            type, comm, on),
             "ncclAllGather", deadline);
      return;
    case CollectiveKind::kReduceScatter: {
      if (!in_place) {
        settle(nccl, api.reduce_scatter(call.send, call.recv, count, type, reduction(s.op, size), comm, on),
               "ncclReduceScatter", deadline);
        return;
      }
      // Ours lands in recv's first block, NCCL's in place in this rank's:
      // through a block of scratch in stream order.
      StreamScratch result(block_bytes, stream);
      settle(nccl, api.reduce_scatter(call.send, result.data(), count, type, reduction(s.op, size), comm, on),
             "ncclReduceScatter", deadline);
      copy_on_device_async(call.recv, result.data(), block_bytes, stream);
      return;
    }
    case CollectiveKind::kAllToAll: {
      // In place, the input goes through a copy first: every block is both
      // sent and overwritten.
      const size_t all = block_bytes * static_cast<size_t>(size);
      std::unique_ptr<StreamScratch> input;
      const unsigned char* from = static_cast<const unsigned char*>(call.send);
      if (in_place) {
        input = std::make_unique<StreamScratch>(all, stream);
        copy_on_device_async(input->data(), call.send, all, stream);
        from = static_cast<const unsigned char*>(input->data());
      }
      settle(nccl, api.group_start(), "ncclGroupStart", deadline);
      for (int peer = 0; peer < size; ++peer) {
        const size_t at = static_cast<size_t>(peer) * block_bytes;
        const ncclResult_t sent = api.send(from + at, count, type, peer, comm, on);
        const ncclResult_t received = sent == ncclSuccess ? api.recv(recv + at, count, type, peer, comm, on) : sent;
        if (received != ncclSuccess) {
          (void)api.group_end();
          settle(nccl, received, "ncclSend/ncclRecv", deadline);
        }
      }
      settle(nccl, api.group_end(), "ncclGroupEnd", deadline);
      return;
    }
    default:
      fail(Status::kUnsupported, std::string(name(s.kind)) + " has no NCCL form");
  }
}

}  // namespace dist
