// Collectives on CUDA device buffers where no device path applies: the staged
// path. The input is copied to pinned host memory on the caller's stream, the
// communicator runs the host algorithms on the pinned copy (the same rows,
// so the results are bit for bit the host path's), and the result is copied
// back on the same stream. UCX never sees a device pointer.
//
// A blocking call enqueues the copy in, waits for it, runs the call, enqueues
// the copy back and waits for that, every wait bounded by the communicator's
// timeout. A call with a request enqueues all of its stream work before it
// returns: the copy in, a host function that holds the stream until the
// communicator has run the call, the copy back, and a host function that
// completes the request. Work the caller enqueues on the stream later runs
// after the result is in place; the communicator's thread waits for the copy
// in (a recorded event) before the call's first transfer.
#pragma once

#include <memory>

#include "collectives/collective_call.h"
#include "collectives/communicator.h"
#include "collectives/operation.h"

namespace dist {

// `call` names device pointers and has signature.memory == kCuda; `stream`
// is a cudaStream_t (null: the legacy default stream). Throws what the
// communicator or CUDA threw.
void run_staged(Communicator& comm, const CollectiveCall& call, void* stream);
// The same, queued: the operation completes once the result is on the device
// (or the call failed). Its completion callback runs on CUDA's host-function
// thread and must not call CUDA.
std::shared_ptr<Operation> submit_staged(Communicator& comm, const CollectiveCall& call, void* stream);

}  // namespace dist
