#include "strategy/nccl_replicas.h"

#include <memory>
#include <string>
#include <thread>

#include "collectives/nccl_call.h"
#include "gpu/cuda_memory.h"
#include "gpu/nccl_communicator.h"
#include "gpu/nccl_library.h"

namespace dist {
namespace {

const NcclApi& usable_nccl() {
  const NcclLibrary& library = NcclLibrary::instance();
  if (!library.available()) fail(Status::kUnavailable, "NCCL is unavailable: " + library.unavailable_reason());
  return library.api();
}

// The state of one rank: ncclSuccess, ncclInProgress or its error.
ncclResult_t state_of(ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  const ncclResult_t asked = NcclLibrary::instance().api().comm_get_async_error(comm, &state);
  return asked != ncclSuccess ? asked : state;
}

constexpr std::chrono::milliseconds kPollInterval{1};

}  // namespace

std::unique_ptr<NcclReplicas> NcclReplicas::join(const ncclUniqueId& id, int first_rank, int size,
                                                 const std::vector<int>& devices, SteadyDeadline deadline) {
  const NcclApi& api = usable_nccl();
  DeviceScope restore(devices.at(0));
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  auto give_up = [&](Status status, const std::string& message) {
    for (ncclComm_t comm : comms) {
      if (comm != nullptr) api.comm_abort(comm);
    }
    fail(status, message);
  };
  // Several ranks from one thread: their inits form one group.
  ncclResult_t result = api.group_start();
  for (size_t i = 0; i < devices.size() && result == ncclSuccess; ++i) {
    DeviceScope on(devices[i]);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // polled below, against the deadline
    result = api.comm_init_rank_config(&comms[i], size, id, first_rank + static_cast<int>(i), &config);
    if (result == ncclInProgress) result = ncclSuccess;
  }
  const ncclResult_t ended = api.group_end();
  if (result != ncclSuccess) give_up(Status::kInternal, describe_nccl_failure("ncclCommInitRankConfig", result));
  if (ended != ncclSuccess && ended != ncclInProgress) {
    give_up(Status::kInternal, describe_nccl_failure("ncclGroupEnd after ncclCommInitRankConfig", ended));
  }
  for (size_t i = 0; i < comms.size(); ++i) {
    for (;;) {
      const ncclResult_t state = state_of(comms[i]);
      if (state == ncclSuccess) break;
      if (state != ncclInProgress) {
        give_up(Status::kInternal, describe_nccl_failure("ncclCommInitRankConfig", state, comms[i]));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        give_up(Status::kTimeout, "the NCCL communicator of the replicas (ranks " + std::to_string(first_rank) + ".." +
                                      std::to_string(first_rank + static_cast<int>(comms.size()) - 1) + " of " +
                                      std::to_string(size) + ") was not ready by the deadline: not every rank joined");
      }
      std::this_thread::sleep_for(kPollInterval);
    }
  }
  return std::unique_ptr<NcclReplicas>(new NcclReplicas(std::move(comms), devices));
}

NcclReplicas::~NcclReplicas() {
  if (aborted_) return;
  const NcclApi& api = NcclLibrary::instance().api();
  bool failed = false;
  for (ncclComm_t comm : comms_) {
    const ncclResult_t state = state_of(comm);
    failed = failed || (state != ncclSuccess && state != ncclInProgress);
  }
  // A rank with an error cannot finish its work: abort, never wait.
  for (ncclComm_t comm : comms_) {
    if (failed) {
      api.comm_abort(comm);
    } else {
      api.comm_destroy(comm);
    }
  }
}

void NcclReplicas::check_ranks() const {
  for (size_t i = 0; i < comms_.size(); ++i) {
    const ncclResult_t state = state_of(comms_[i]);
    if (state != ncclSuccess && state != ncclInProgress) {
      fail(Status::kPeerFailed, "NCCL failed on local replica " + std::to_string(i) + ": " +
                                    describe_nccl_failure("an NCCL operation", state, comms_[i]));
    }
  }
}

void NcclReplicas::abort_all() {
  if (aborted_) return;
  for (ncclComm_t comm : comms_) NcclLibrary::instance().api().comm_abort(comm);
  aborted_ = true;
}

template <typename Enqueue>
void NcclReplicas::run_group(const std::vector<TensorRef>& buffers, const char* what, SteadyDeadline deadline,
                             const FailureFlag* failure, Enqueue enqueue) {
  if (aborted_) fail(Status::kAborted, "the NCCL communicator of the replicas was aborted by an earlier failure");
  if (buffers.size() != comms_.size()) fail(Status::kInternal, "NcclReplicas: one buffer per local replica expected");
  const NcclApi& api = NcclLibrary::instance().api();
  std::vector<std::unique_ptr<StreamMark>> marks;
  try {
    DeviceScope restore(devices_[0]);
    ncclResult_t result = api.group_start();
    for (size_t i = 0; i < comms_.size() && (result == ncclSuccess || result == ncclInProgress); ++i) {
      DeviceScope on(devices_[i]);
      result = enqueue(i, comms_[i], static_cast<cudaStream_t>(buffers[i].stream));
    }
    const ncclResult_t ended = api.group_end();
    if (result == ncclSuccess || result == ncclInProgress) result = ended;
    // Nonblocking ranks may still be enqueueing: settle each.
    if (result == ncclInProgress) {
      result = ncclSuccess;
      for (size_t i = 0; i < comms_.size() && result == ncclSuccess; ++i) {
        while ((result = state_of(comms_[i])) == ncclInProgress) {
          if (std::chrono::steady_clock::now() >= deadline) {
            fail(Status::kTimeout, std::string(what) + " was still being enqueued at the deadline");
          }
          std::this_thread::yield();
        }
      }
    }
    if (result != ncclSuccess) fail(Status::kInternal, describe_nccl_failure(what, result));
    for (size_t i = 0; i < comms_.size(); ++i) {
      DeviceScope on(devices_[i]);
      marks.push_back(std::make_unique<StreamMark>(buffers[i].stream));
    }
    for (unsigned polls = 0;; ++polls) {
      bool all = true;
      for (const auto& mark : marks) all = all && mark->reached();
      if (all) return;
      check_ranks();
      if (failure != nullptr) failure->check();
      if (std::chrono::steady_clock::now() >= deadline) {
        fail(Status::kTimeout, std::string(what) + " of the replicas did not finish on NCCL by the deadline");
      }
      if (polls > 200) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  } catch (...) {
    // The ranks may be stuck in a kernel waiting for a peer: abort them, so
    // the streams drain, before the marks go.
    abort_all();
    throw;
  }
}

void NcclReplicas::all_reduce(const std::vector<TensorRef>& buffers, ReduceOp op, SteadyDeadline deadline,
                              const FailureFlag* failure) {
  const NcclApi& api = NcclLibrary::instance().api();
  run_group(buffers, "ncclAllReduce", deadline, failure, [&](size_t i, ncclComm_t comm, cudaStream_t stream) {
    const TensorRef& b = buffers[i];
    return api.all_reduce(b.data, b.data, b.count, nccl_dtype(b.dtype), nccl_op(op), comm, stream);
  });
}

}  // namespace dist
