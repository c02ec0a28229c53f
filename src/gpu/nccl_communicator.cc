#include "gpu/nccl_communicator.h"

#include <thread>

#include "gpu/cuda_device.h"
#include "gpu/nccl_library.h"

namespace dist {
namespace {

const NcclApi& usable_nccl() {
  const NcclLibrary& library = NcclLibrary::instance();
  if (!library.available()) fail(Status::kUnavailable, "the NCCL path is unavailable: " + library.unavailable_reason());
  return library.api();
}

// How often a nonblocking init is polled: short against any deadline, long
// enough to leave the core to NCCL's own threads.
constexpr std::chrono::milliseconds kPollInterval{1};

}  // namespace

std::string describe_nccl_failure(const char* call, ncclResult_t result, ncclComm_t comm) {
  const NcclApi& api = NcclLibrary::instance().api();
  std::string out = std::string(call) + " failed: " +
                    (api.get_error_string != nullptr ? api.get_error_string(result) : "error") + " (" +
                    std::to_string(static_cast<int>(result)) + ")";
  const char* last = api.get_last_error != nullptr ? api.get_last_error(comm) : nullptr;
  if (last != nullptr && *last != '\0') out += ": " + std::string(last);
  return out;
}

ncclUniqueId nccl_unique_id() {
  const NcclApi& api = usable_nccl();
  ncclUniqueId id;
  const ncclResult_t result = api.get_unique_id(&id);
  if (result != ncclSuccess) fail(Status::kInternal, describe_nccl_failure("ncclGetUniqueId", result));
  return id;
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::join(const ncclUniqueId& id, int rank, int size, int device,
                                                         SteadyDeadline deadline) {
  const NcclApi& api = usable_nccl();
  use_cuda_device(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; completion is polled below, against the deadline
  ncclComm_t comm = nullptr;
  ncclResult_t result = api.comm_init_rank_config(&comm, size, id, rank, &config);
  auto give_up = [&](Status status, const std::string& message) {
    if (comm != nullptr) api.comm_abort(comm);
    fail(status, message);
  };
  if (result != ncclSuccess && result != ncclInProgress) {
    give_up(Status::kInternal, describe_nccl_failure("ncclCommInitRankConfig", result, comm));
  }
  for (;;) {
    ncclResult_t state = ncclInProgress;
    result = api.comm_get_async_error(comm, &state);
    if (result != ncclSuccess) give_up(Status::kInternal, describe_nccl_failure("ncclCommGetAsyncError", result, comm));
    if (state == ncclSuccess) break;
    if (state != ncclInProgress) give_up(Status::kInternal, describe_nccl_failure("ncclCommInitRankConfig", state, comm));
    if (std::chrono::steady_clock::now() >= deadline) {
      give_up(Status::kTimeout, "the NCCL communicator (rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                    ") was not ready by the deadline: not every rank joined");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(comm, device));
}

NcclCommunicator::~NcclCommunicator() {
  if (aborted_) return;
  const NcclApi& api = NcclLibrary::instance().api();
  ncclResult_t state = ncclSuccess;
  // A communicator with an error cannot finish its work: abort, never wait.
  if (api.comm_get_async_error(comm_, &state) != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
    api.comm_abort(comm_);
    return;
  }
  api.comm_destroy(comm_);
}

void NcclCommunicator::check() const {
  if (aborted_) fail(Status::kAborted, "the NCCL communicator was aborted");
  const NcclApi& api = NcclLibrary::instance().api();
  ncclResult_t state = ncclSuccess;
  const ncclResult_t result = api.comm_get_async_error(comm_, &state);
  if (result != ncclSuccess) fail(Status::kInternal, describe_nccl_failure("ncclCommGetAsyncError", result, comm_));
  if (state != ncclSuccess && state != ncclInProgress) {
    fail(Status::kPeerFailed, "the NCCL communicator failed: " + describe_nccl_failure("an NCCL operation", state, comm_));
  }
}

void NcclCommunicator::abort() {
  if (aborted_) return;
  NcclLibrary::instance().api().comm_abort(comm_);
  aborted_ = true;
}

}  // namespace dist
