// dist_send, dist_recv and dist_request_source: argument checks, then the
// communicator's message port takes the message (collectives/point_to_point.h).
#include "c_api/buffers.h"
#include "c_api/guard.h"
#include "c_api/handles.h"
#include "collectives/point_to_point.h"

using dist::call_guarded;
using dist::require;

namespace dist {
namespace {

// Posts a send or receive; blocking when `request` is NULL, and then its
// outcome is the call's.
void post(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t peer, int32_t tag, bool is_receive,
          dist_request_t** request) {
  require(comm, "comm");
  Checked b = check_buffer(buffer, "buffer");
  host_memory_only(b, is_receive ? "dist_recv" : "dist_send");
  MessageSpec spec;
  spec.peer = peer == DIST_ANY_SOURCE ? MessageSpec::kAnySource : peer;
  spec.tag = tag;
  spec.data = b.data;
  spec.count = b.count;
  spec.dtype = b.dtype;
  if (peer == DIST_ANY_SOURCE && !is_receive) fail_invalid("peer DIST_ANY_SOURCE is for dist_recv only");
  std::shared_ptr<Operation> op = post_message(*comm->communicator, is_receive, spec, request == nullptr);
  if (request == nullptr) {
    if (op->status() != Status::kOk) throw Error(op->status(), op->message());
    return;
  }
  auto handle = std::make_unique<dist_request>();
  handle->operation = std::move(op);
  *request = handle.release();
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_send(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t peer, int32_t tag,
                                    dist_request_t** request) {
  return call_guarded(__func__, [&] { dist::post(comm, buffer, peer, tag, false, request); });
}

DIST_EXPORT dist_status_t dist_recv(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t peer, int32_t tag,
                                    dist_request_t** request) {
  return call_guarded(__func__, [&] { dist::post(comm, buffer, peer, tag, true, request); });
}

DIST_EXPORT dist_status_t dist_request_source(dist_request_t* request, int32_t* source) {
  return call_guarded(__func__, [&] {
    require(request, "request");
    require(source, "source");
    const dist::Operation& op = *request->operation;
    if (!op.is_receive()) dist::fail_invalid("request is not a receive (dist_recv)");
    if (!op.done()) dist::fail_invalid("request has not completed yet");
    if (op.status() != dist::Status::kOk) dist::fail_invalid("request did not complete successfully: " + op.message());
    *source = op.source();
  });
}

}  // extern "C"
