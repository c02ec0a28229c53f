// dist_all_reduce ... dist_barrier and requests: argument checks, then the
// communicator runs the call (blocking) or queues it (with a request).
#include "base/dtype.h"
#include "c_api/buffers.h"
#include "c_api/guard.h"
#include "c_api/handles.h"
#include "collectives/reduce_op.h"
#ifdef DIST_HAVE_CUDA
#include "collectives/device_calls.h"
#endif

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

void same_dtype(const Checked& a, const Checked& b) {
  if (a.dtype != b.dtype) {
    fail_invalid(std::string("send is ") + name(a.dtype) + " but recv is " + name(b.dtype));
  }
}

void expect_count(uint64_t got, uint64_t expected, const std::string& what) {
  if (got != expected) {
    fail_invalid(what + " has count " + std::to_string(got) + ", expected " + std::to_string(expected));
  }
}

// all_to_all_v's buffers, which have no in-place form: checked here, before
// the call is queued, so that the communicator is not failed for it.
void apart(const Checked& send, const Checked& recv) {
  const auto s = reinterpret_cast<uintptr_t>(send.data);
  const auto r = reinterpret_cast<uintptr_t>(recv.data);
  const uint64_t element = size_of(send.dtype);
  if (send.count == 0 || recv.count == 0) return;
  if (s == r) fail_invalid("send and recv are the same buffer; all_to_all_v has no in-place form");
  if (s < r + recv.count * element && r < s + send.count * element) fail_invalid("send and recv overlap");
}

// The input of a call with an optional separate send buffer: recv itself when
// in place, else send, which must match recv's dtype and hold `send_count`.
const void* input_of(const dist_buffer_t* send, const Checked& out, uint64_t send_count) {
  if (send == nullptr) return out.data;
  Checked in = check_buffer(send, "send");
  same_dtype(in, out);
  same_memory(in, out);
  expect_count(in.count, send_count, "send");
  return in.data;
}

// Elements per rank of a buffer holding one block for every rank.
uint64_t block_count(const Checked& buffer, uint64_t ranks, const char* name) {
  if (buffer.count % ranks != 0) {
    fail_invalid(std::string(name) + " has count " + std::to_string(buffer.count) + ", not a multiple of the " +
                 std::to_string(ranks) + " ranks");
  }
  return buffer.count / ranks;
}

int32_t check_root(const Communicator& comm, int32_t root) {
  if (root < 0 || root >= comm.size()) {
    fail_invalid("root " + std::to_string(root) + " is out of range for a communicator of " +
                 std::to_string(comm.size()) + " ranks");
  }
  return root;
}

ReduceOp check_op(dist_op_t op) { return reduce_op_from_int(op); }

// Runs blocking, or queues and hands back a request; on the staged path
// where `buffers` (the call's recv, or its only buffer) is CUDA memory.
void dispatch(dist_comm_t* comm, CollectiveCall call, dist_request_t** request, const Checked& buffers) {
  call.signature.memory = buffers.memory;
  Communicator& communicator = *comm->communicator;
#ifdef DIST_HAVE_CUDA
  if (buffers.memory == MemoryKind::kCuda) {
    DeviceCalls& device = communicator.device_calls();
    if (request == nullptr) {
      device.run(call, buffers.stream, buffers.device);
      return;
    }
    auto handle = std::make_unique<dist_request>();
    handle->operation = device.submit(call, buffers.stream, buffers.device);
    *request = handle.release();
    return;
  }
#endif
  if (request == nullptr) {
    communicator.run(call);
    return;
  }
  auto handle = std::make_unique<dist_request>();
  handle->operation = communicator.submit(call);
  *request = handle.release();
}

CollectiveCall make_call(CollectiveKind kind, DType dtype, ReduceOp op, int32_t root, uint64_t count,
                         const void* send, void* recv) {
  CollectiveCall call;
  call.signature.kind = kind;
  call.signature.dtype = dtype;
  call.signature.op = op;
  call.signature.root = root;
  call.signature.count = count;
  call.send = send;
  call.recv = recv;
  return call;
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_all_reduce(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                                          dist_op_t op, dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    dist::Checked out = dist::check_buffer(recv, "recv");
    const void* input = dist::input_of(send, out, out.count);
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kAllReduce, out.dtype, dist::check_op(op), -1, out.count,
                                         input, out.data),
                   request, out);
  });
}

DIST_EXPORT dist_status_t dist_reduce(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                                      dist_op_t op, int32_t root, dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    dist::check_root(*comm->communicator, root);
    const bool at_root = comm->communicator->rank() == root;
    dist::Checked in, out;
    if (send != nullptr) in = dist::check_buffer(send, "send");
    if (recv != nullptr) out = dist::check_buffer(recv, "recv");
    if (send == nullptr && recv == nullptr) dist::fail_invalid("send and recv are both NULL");
    if (send == nullptr) in = out;  // in place
    if (at_root) {
      if (recv == nullptr) dist::fail_invalid("recv is NULL at the root");
      dist::same_dtype(in, out);
      dist::same_memory(in, out);
      dist::expect_count(out.count, in.count, "recv");
    }
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kReduce, in.dtype, dist::check_op(op), root, in.count,
                                         in.data, at_root ? out.data : nullptr),
                   request, in);
  });
}

DIST_EXPORT dist_status_t dist_broadcast(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t root,
                                         dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    dist::check_root(*comm->communicator, root);
    dist::Checked b = dist::check_buffer(buffer, "buffer");
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kBroadcast, b.dtype, dist::ReduceOp::SUM, root, b.count,
                                         b.data, b.data),
                   request, b);
  });
}

DIST_EXPORT dist_status_t dist_all_gather(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                                          dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    const uint64_t n = static_cast<uint64_t>(comm->communicator->size());
    dist::Checked out = dist::check_buffer(recv, "recv");
    const uint64_t block = dist::block_count(out, n, "recv");
    const void* input = dist::input_of(send, out, block);
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kAllGather, out.dtype, dist::ReduceOp::SUM, -1, block,
                                         input, out.data),
                   request, out);
  });
}

DIST_EXPORT dist_status_t dist_reduce_scatter(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                                              dist_op_t op, dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    const uint64_t n = static_cast<uint64_t>(comm->communicator->size());
    dist::Checked out = dist::check_buffer(recv, "recv");
    const void* input = dist::input_of(send, out, out.count * n);
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kReduceScatter, out.dtype, dist::check_op(op), -1,
                                         out.count, input, out.data),
                   request, out);
  });
}

DIST_EXPORT dist_status_t dist_all_to_all(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                                          dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    const uint64_t n = static_cast<uint64_t>(comm->communicator->size());
    dist::Checked out = dist::check_buffer(recv, "recv");
    const uint64_t block = dist::block_count(out, n, "recv");
    const void* input = dist::input_of(send, out, out.count);
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kAllToAll, out.dtype, dist::ReduceOp::SUM, -1, block,
                                         input, out.data),
                   request, out);
  });
}

DIST_EXPORT dist_status_t dist_all_to_all_v(dist_comm_t* comm, const dist_buffer_t* send, const uint64_t* send_counts,
                                            const uint64_t* send_offsets, const dist_buffer_t* recv,
                                            const uint64_t* recv_counts, const uint64_t* recv_offsets,
                                            dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    if (send == nullptr) dist::fail_invalid("send is NULL (all_to_all_v has no in-place form)");
    dist::Checked in = dist::check_buffer(send, "send");
    dist::Checked out = dist::check_buffer(recv, "recv");
    dist::host_memory_only(in, "dist_all_to_all_v");
    dist::host_memory_only(out, "dist_all_to_all_v");
    dist::same_dtype(in, out);
    dist::apart(in, out);
    require(send_counts, "send_counts");
    require(recv_counts, "recv_counts");
    dist::CollectiveCall call =
        dist::make_call(dist::CollectiveKind::kAllToAllV, out.dtype, dist::ReduceOp::SUM, -1, 0, in.data, out.data);
    call.blocks = dist::make_uneven_blocks(comm->communicator->size(), send_counts, send_offsets, in.count,
                                           recv_counts, recv_offsets, out.count);
    dist::dispatch(comm, call, request, out);
  });
}

DIST_EXPORT dist_status_t dist_barrier(dist_comm_t* comm, dist_request_t** request) {
  return call_guarded(__func__, [&] {
    require(comm, "comm");
    dist::dispatch(comm, dist::make_call(dist::CollectiveKind::kBarrier, dist::DType::U8, dist::ReduceOp::SUM, -1, 0,
                                         nullptr, nullptr),
                   request, dist::Checked{});
  });
}

DIST_EXPORT dist_status_t dist_request_test(dist_request_t* request, int32_t* done) {
  return call_guarded(__func__, [&] {
    require(request, "request");
    require(done, "done");
    const bool finished = request->operation->done();
    *done = finished ? 1 : 0;
    if (finished && request->operation->status() != dist::Status::kOk) {
      throw dist::Error(request->operation->status(), request->operation->message());
    }
  });
}

DIST_EXPORT dist_status_t dist_request_wait(dist_request_t* request, int64_t timeout_ms) {
  return call_guarded(__func__, [&] {
    require(request, "request");
    if (!request->operation->wait_for(std::chrono::milliseconds(timeout_ms < 0 ? -1 : timeout_ms))) {
      dist::fail(dist::Status::kTimeout, "the request did not complete within " + std::to_string(timeout_ms) + " ms");
    }
    if (request->operation->status() != dist::Status::kOk) {
      throw dist::Error(request->operation->status(), request->operation->message());
    }
  });
}

DIST_EXPORT void dist_request_free(dist_request_t* request) { delete request; }

DIST_EXPORT dist_status_t dist_request_on_complete(dist_request_t* request, dist_request_callback_t callback,
                                                   void* user_data) {
  return call_guarded(__func__, [&] {
    require(request, "request");
    require(callback, "callback");
    // The operation keeps the callback: the handle may be freed first.
    const bool registered = request->operation->on_complete(
        [callback, user_data](dist::Status status, const std::string& message) {
          callback(user_data, static_cast<dist_status_t>(status), message.c_str());
        });
    if (!registered) dist::fail_invalid("request already has a completion callback (at most one per request)");
  });
}

}  // extern "C"
