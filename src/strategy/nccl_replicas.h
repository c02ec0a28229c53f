// NCCL over a strategy's GPU replicas: one NCCL rank per local replica, all
// driven from one thread in NCCL groups (the replicas meet in the
// rendezvous first, so the step that runs once for all of them issues every
// rank's part). Either the local GPUs alone (cross_device_ops
// NcclAllReduce) or every replica of every worker (MULTI_WORKER_MIRRORED
// with communication NCCL). Initialised nonblocking and bounded by a
// deadline; a failure or a deadline aborts every rank of this worker, and
// the object is unusable afterwards: never a hang.
#pragma once

#include <nccl.h>

#include <chrono>
#include <memory>
#include <vector>

#include "collectives/reduce_op.h"
#include "strategy/tensor_ref.h"
#include "transport/failure_flag.h"

namespace dist {

using SteadyDeadline = std::chrono::steady_clock::time_point;

class NcclReplicas {
 public:
  // This worker's local replicas are ranks first_rank .. first_rank +
  // devices.size() - 1 of `size`, local replica i on CUDA device
  // devices[i]. Throws kUnavailable without NCCL, kTimeout when not every
  // rank joined by `deadline`, kInternal with NCCL's words.
  static std::unique_ptr<NcclReplicas> join(const ncclUniqueId& id, int first_rank, int size,
                                            const std::vector<int>& devices, SteadyDeadline deadline);
  ~NcclReplicas();  // destroys each rank, or aborts them after a failure
  NcclReplicas(const NcclReplicas&) = delete;
  NcclReplicas& operator=(const NcclReplicas&) = delete;

  // In place on every local buffer (buffers[i] on device i, ordered on its
  // stream), op SUM, PROD, MIN or MAX; returns once every result is on its
  // device. `failure` (may be null): a peer lost meanwhile also aborts.
  // Throws kTimeout at the deadline, kPeerFailed when NCCL failed; either
  // aborts this worker's ranks.
  void all_reduce(const std::vector<TensorRef>& buffers, ReduceOp op, SteadyDeadline deadline,
                  const FailureFlag* failure);
  // Stops every rank of this worker (their peers failed, or gave up); the
  // object is unusable afterwards.
  void abort() { abort_all(); }

 private:
  explicit NcclReplicas(std::vector<ncclComm_t> comms, std::vector<int> devices)
      : comms_(std::move(comms)), devices_(std::move(devices)) {}
  template <typename Enqueue>
  void run_group(const std::vector<TensorRef>& buffers, const char* what, SteadyDeadline deadline,
                 const FailureFlag* failure, Enqueue enqueue);
  // Throws the first rank's asynchronous error.
  void check_ranks() const;
  void abort_all();

  std::vector<ncclComm_t> comms_;
  std::vector<int> devices_;
  bool aborted_ = false;
};

}  // namespace dist
