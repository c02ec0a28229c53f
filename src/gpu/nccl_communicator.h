// One NCCL communicator: initialised nonblocking and bounded by a deadline
// (NCCL's blocking init waits for every rank without limit), polled for
// asynchronous errors, aborted rather than left hanging. The unique id comes
// from the caller, which swaps it over the authenticated context
// (collectives/nccl_setup.h).
#pragma once

#include <nccl.h>

#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"

namespace dist {

using SteadyDeadline = std::chrono::steady_clock::time_point;

// A fresh unique id (rank 0's part of the setup). Throws kUnavailable when
// NCCL is not available (NcclLibrary says why).
ncclUniqueId nccl_unique_id();

class NcclCommunicator {
 public:
  // Joins the communicator `id` names as `rank` of `size` on CUDA device
  // `device`. Throws dist::Error: kUnavailable without NCCL or the device,
  // kTimeout when the peers did not all join by `deadline`, kInternal with
  // NCCL's own words when it failed.
  static std::unique_ptr<NcclCommunicator> join(const ncclUniqueId& id, int rank, int size, int device,
                                                SteadyDeadline deadline);
  ~NcclCommunicator();  // destroys, or aborts when it failed
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t handle() const { return comm_; }
  int device() const { return device_; }
  // Throws the communicator's asynchronous error, if it has one.
  void check() const;
  // Stops every operation in flight; the communicator is unusable afterwards.
  void abort();

 private:
  NcclCommunicator(ncclComm_t comm, int device) : comm_(comm), device_(device) {}
  ncclComm_t comm_;
  int device_;
  bool aborted_ = false;
};

// "ncclCommInitRankConfig: unhandled cuda error (...)": a call that failed,
// NCCL's name for the result and its last error text.
std::string describe_nccl_failure(const char* call, ncclResult_t result, ncclComm_t comm = nullptr);

}  // namespace dist
