#include "collectives/staged_call.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "base/status.h"
#include "gpu/cuda_memory.h"

namespace dist {
namespace {

// A byte range of a buffer.
struct Extent {
  size_t offset = 0;
  size_t bytes = 0;
};

// What one rank's call reads of its input and writes of its result, and the
// host blocks it runs on (collective_call.h gives the shapes).
struct Layout {
  bool in_place = false;  // one block for input and result
  size_t send_bytes = 0;  // the send block, unless in place
  size_t recv_bytes = 0;  // the recv block (the only one, in place)
  Extent input;           // of send, or of recv in place
  Extent output;          // of recv
};

Layout layout_of(const CollectiveCall& call, int rank, int size) {
  const CallSignature& s = call.signature;
  const size_t one = static_cast<size_t>(s.count) * size_of(s.dtype);
  const size_t all = one * static_cast<size_t>(size);
  Layout l;
  l.in_place = call.send == call.recv;
  switch (s.kind) {
    case CollectiveKind::kAllReduce:
      l.send_bytes = one;
      l.recv_bytes = one;
      l.input = {0, one};
      l.output = {0, one};
      break;
    case CollectiveKind::kReduce:
      // Off the root recv is null: nothing comes back.
      l.send_bytes = one;
      l.recv_bytes = call.recv != nullptr ? one : 0;
      l.input = {0, one};
      l.output = {0, l.recv_bytes};
      break;
    case CollectiveKind::kBroadcast:
      // One buffer: the root's goes out, the others' come back.
      l.recv_bytes = one;
      l.input = {0, rank == s.root ? one : 0};
      l.output = {0, rank == s.root ? 0 : one};
      break;
    case CollectiveKind::kAllGather:
      // In place, this rank's block already sits at its place in recv.
      l.send_bytes = one;
      l.recv_bytes = all;
      l.input = {l.in_place ? one * static_cast<size_t>(rank) : 0, one};
      l.output = {0, all};
      break;
    case CollectiveKind::kReduceScatter:
      // In place, the input is recv's whole and the result its first block.
      l.send_bytes = all;
      l.recv_bytes = l.in_place ? all : one;
      l.input = {0, all};
      l.output = {0, one};
      break;
    case CollectiveKind::kAllToAll:
      l.send_bytes = all;
      l.recv_bytes = all;
      l.input = {0, all};
      l.output = {0, all};
      break;
    default:
      fail(Status::kUnsupported, std::string(name(s.kind)) + " does not take CUDA buffers");
  }
  if (l.in_place) {
    l.recv_bytes = std::max(l.send_bytes, l.recv_bytes);
    l.send_bytes = 0;
  }
  return l;
}

// A call's host blocks, and the call as the communicator runs it on them.
class Staging {
 public:
  Staging(const CollectiveCall& device_call, int rank, int size)
      : device_(device_call), layout_(layout_of(device_call, rank, size)), host_(device_call) {
    if (device_call.recv != nullptr || layout_.in_place) recv_block_ = PinnedBlock(layout_.recv_bytes);
    if (!layout_.in_place) send_block_ = PinnedBlock(layout_.send_bytes);
    host_.recv = device_call.recv != nullptr ? recv_block_.data() : nullptr;
    host_.send = layout_.in_place ? recv_block_.data() : send_block_.data();
  }

  CollectiveCall& host_call() { return host_; }

  // Enqueues the copy of the input to the host, and of the result back.
  void copy_in(void* stream) {
    const Extent& in = layout_.input;
    copy_to_host_async(const_cast<unsigned char*>(static_cast<const unsigned char*>(host_.send)) + in.offset,
                       static_cast<const unsigned char*>(device_.send) + in.offset, in.bytes, stream);
  }
  void copy_out(void* stream) {
    const Extent& out = layout_.output;
    copy_to_device_async(static_cast<unsigned char*>(device_.recv) + out.offset,
                         static_cast<const unsigned char*>(host_.recv) + out.offset, out.bytes, stream);
  }

  // Waits until `stream` has done what is on it now (a copy of this call);
  // where it has not by `deadline`, the copy may still be under way, so the
  // blocks are abandoned before the timeout is thrown.
  void wait_for_stream(void* stream, std::chrono::steady_clock::time_point deadline, const char* what) {
    try {
      StreamMark(stream).wait(deadline, std::string("the copy of ") + describe_call() + what);
    } catch (...) {
      abandon();
      throw;
    }
  }

  // For a copy that may still be under way when the call gives up: the
  // blocks are never reused (a later call's data would be overwritten).
  void abandon() {
    send_block_.abandon();
    recv_block_.abandon();
  }

  std::string describe_call() const { return describe(device_.signature); }

 private:
  CollectiveCall device_;
  Layout layout_;
  PinnedBlock send_block_;
  PinnedBlock recv_block_;
  CollectiveCall host_;
};

// One queued staged call: its blocks, the communicator's operation on them,
// and the operation the caller holds.
class StagedRequest : public InputGate {
 public:
  StagedRequest(const CollectiveCall& call, int rank, int size)
      : staging(call, rank, size), user_op(std::make_shared<Operation>(call)) {}

  // The communicator's thread, before the call's first transfer: the copy in
  // is done. The event goes here, on a thread that may call CUDA.
  void wait(std::chrono::steady_clock::time_point deadline) override {
    std::unique_ptr<StreamMark> mark = std::move(copied_in);
    if (mark != nullptr) mark->wait(deadline, "the copy of " + staging.describe_call() + "'s input to the host");
  }

  Staging staging;
  std::unique_ptr<StreamMark> copied_in;
  std::shared_ptr<Operation> host_op;
  std::shared_ptr<Operation> user_op;
};

// Each host function owns one reference to the request, so that it outlives
// whichever of them runs last.
struct Held {
  std::shared_ptr<StagedRequest> request;
};

// On CUDA's thread, after the copy in: holds the stream until the
// communicator has run the call (which ends by its deadline, or when the
// communicator fails or is destroyed), so that the copy back reads the result.
void hold_stream_until_run(void* argument) {
  auto* held = static_cast<Held*>(argument);
  held->request->host_op->wait_for(std::chrono::milliseconds(-1));
  delete held;
}

// On CUDA's thread, after the copy back: the caller's request is done.
void complete_request(void* argument) {
  auto* held = static_cast<Held*>(argument);
  const Operation& ran = *held->request->host_op;
  held->request->user_op->complete(ran.status(), ran.message());
  delete held;
}

}  // namespace

void run_staged(Communicator& comm, const CollectiveCall& call, void* stream) {
  Staging staging(call, comm.rank(), comm.size());
  staging.copy_in(stream);
  staging.wait_for_stream(stream, comm.deadline(), "'s input to the host");
  comm.run(staging.host_call());
  staging.copy_out(stream);
  staging.wait_for_stream(stream, comm.deadline(), "'s result to the device");
}

std::shared_ptr<Operation> submit_staged(Communicator& comm, const CollectiveCall& call, void* stream) {
  auto request = std::make_shared<StagedRequest>(call, comm.rank(), comm.size());
  request->staging.copy_in(stream);
  try {
    request->copied_in = std::make_unique<StreamMark>(stream);
  } catch (...) {
    request->staging.abandon();
    throw;
  }
  request->staging.host_call().gate = request.get();
  request->host_op = comm.submit(request->staging.host_call());
  // The communicator's operation keeps the request (its gate and blocks)
  // until it has run, whatever becomes of the stream work below.
  request->host_op->on_complete([keep = request](Status, const std::string&) mutable { keep.reset(); });
  try {
    auto* hold = new Held{request};
    try {
      launch_host_function(stream, hold_stream_until_run, hold);
    } catch (...) {
      delete hold;
      throw;
    }
    request->staging.copy_out(stream);
    auto* complete = new Held{request};
    try {
      launch_host_function(stream, complete_request, complete);
    } catch (...) {
      delete complete;
      throw;
    }
  } catch (...) {
    // The call still runs (the ranks' sequences stay aligned), but this rank
    // reports the failure now; a copy back may be queued behind the stream's
    // hold, so its blocks are never reused.
    request->staging.abandon();
    throw;
  }
  return request->user_op;
}

}  // namespace dist
