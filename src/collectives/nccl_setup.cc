#include "collectives/nccl_setup.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/cuda_device.h"
#include "gpu/nccl_library.h"

namespace dist {
namespace {

// What one rank says of its part: a status and why, fixed size for an
// all-gather of bytes.
struct RankReport {
  int32_t status = 0;
  char message[252] = {};
};

RankReport report(Status status, const std::string& message) {
  RankReport out;
  out.status = static_cast<int32_t>(status);
  std::strncpy(out.message, message.c_str(), sizeof out.message - 1);
  return out;
}

void run_bytes(Communicator& comm, CollectiveKind kind, int32_t root, uint64_t count, const void* send, void* recv) {
  CollectiveCall call;
  call.signature.kind = kind;
  call.signature.dtype = DType::U8;
  call.signature.root = root;
  call.signature.count = count;
  call.send = send;
  call.recv = recv;
  comm.run(call);
}

void agree(Communicator& comm, const RankReport& mine, const char* stage) {
  std::vector<RankReport> all(static_cast<size_t>(comm.size()));
  run_bytes(comm, CollectiveKind::kAllGather, -1, sizeof(RankReport), &mine, all.data());
  std::string failures;
  Status first = Status::kOk;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].status == 0) continue;
    all[r].message[sizeof all[r].message - 1] = '\0';
    if (first == Status::kOk) first = static_cast<Status>(all[r].status);
    failures += (failures.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + all[r].message;
  }
  if (first != Status::kOk) fail(first, std::string("NCCL setup failed ") + stage + " (" + failures + ")");
}

// Whether this rank could join: NCCL opened and the device usable.
RankReport readiness(int device) {
  const NcclLibrary& library = NcclLibrary::instance();
  if (!library.available()) return report(Status::kUnavailable, library.unavailable_reason());
  try {
    use_cuda_device(device);
  } catch (const Error& e) {
    return report(e.status(), e.what());
  }
  return report(Status::kOk, "");
}

}  // namespace

void agree_on_nccl_stage(Communicator& comm, Status status, const std::string& message, const char* stage) {
  agree(comm, report(status, message), stage);
}

ncclUniqueId share_nccl_id(Communicator& comm) {
  // One byte of status ahead of the id: rank 0 may fail to make one.
  std::vector<unsigned char> message(1 + sizeof(ncclUniqueId), 0);
  std::string why;
  if (comm.rank() == 0) {
    try {
      const ncclUniqueId id = nccl_unique_id();
      message[0] = 1;
      std::memcpy(message.data() + 1, &id, sizeof id);
    } catch (const Error& e) {
      why = e.what();
    }
  }
  run_bytes(comm, CollectiveKind::kBroadcast, 0, message.size(), message.data(), message.data());
  if (message[0] != 1) {
    fail(Status::kUnavailable, "NCCL setup failed: rank 0 could not make a unique id" + (why.empty() ? "" : " (" + why + ")"));
  }
  ncclUniqueId id;
  std::memcpy(&id, message.data() + 1, sizeof id);
  return id;
}

std::unique_ptr<NcclCommunicator> setup_nccl(Communicator& comm, int device, SteadyDeadline deadline) {
  agree(comm, readiness(device), "before init");
  const ncclUniqueId id = share_nccl_id(comm);
  std::unique_ptr<NcclCommunicator> nccl;
  RankReport joined;
  try {
    nccl = NcclCommunicator::join(id, comm.rank(), comm.size(), device, deadline);
  } catch (const Error& e) {
    joined = report(e.status(), e.what());
  }
  // A rank whose init failed drops its part (aborting it); so must the others.
  agree(comm, joined, "in init");
  return nccl;
}

}  // namespace dist
