#include "collectives/device_calls.h"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/staged_call.h"
#include "gpu/cuda_device.h"
#include "gpu/cuda_memory.h"
#ifdef DIST_HAVE_NCCL
#include "collectives/nccl_call.h"
#include "collectives/nccl_setup.h"
#include "gpu/nccl_library.h"
#include "gpu/nccl_watchdog.h"
#else
namespace dist {
// Never made without NCCL; complete for the members' destructors.
class NcclCommunicator {};
class NcclWatchdog {};
}  // namespace dist
#endif

namespace dist {
namespace {

// What each rank tells the others at the first call.
struct DeviceReport {
  uint8_t nccl = 0;  // NCCL opened, and DIST_NCCL is not "0"
  uint8_t reserved[3] = {};
  int32_t device = -1;
  DeviceIdentity identity;
};

bool nccl_here() {
#ifdef DIST_HAVE_NCCL
  return nccl_enabled();
#else
  return false;
#endif
}

}  // namespace

DeviceCalls::DeviceCalls(Communicator& comm) : comm_(comm) {}

DeviceCalls::~DeviceCalls() {
#ifdef DIST_HAVE_NCCL
  watchdog_.reset();  // waits for the pending calls, each by its deadline
  nccl_.reset();
#endif
}

bool DeviceCalls::path(Path* path) const {
  if (!chosen_) return false;
  *path = path_;
  return true;
}

void DeviceCalls::choose(int device) {
  DeviceReport mine;
  // NCCL's sums depend on its algorithm and channels: deterministic
  // communicators take the staged path, whose host calls are in rank order.
  mine.nccl = nccl_here() && !comm_.deterministic() ? 1 : 0;
  mine.device = device;
  mine.identity = cuda_device_identity(device);
  std::vector<DeviceReport> all(static_cast<size_t>(comm_.size()));
  // Part of a call on CUDA memory, and marked so: a rank that made a host
  // call instead fails with a mismatch that says so.
  CollectiveCall gather;
  gather.signature.kind = CollectiveKind::kAllGather;
  gather.signature.dtype = DType::U8;
  gather.signature.count = sizeof mine;
  gather.signature.memory = MemoryKind::kCuda;
  gather.send = &mine;
  gather.recv = all.data();
  comm_.run(gather);
  // Every rank sees the same reports, so every rank makes the same choice.
  bool nccl = true;
  for (size_t r = 0; r < all.size() && nccl; ++r) {
    nccl = all[r].nccl == 1;
    for (size_t q = 0; q < r && nccl; ++q) {
      nccl = std::memcmp(all[r].identity.bytes, all[q].identity.bytes, sizeof all[r].identity.bytes) != 0;
    }
  }
#ifdef DIST_HAVE_NCCL
  // All or nothing on every rank: a failed setup throws everywhere, and the
  // next call chooses again.
  if (nccl) {
    nccl_ = setup_nccl(comm_, device, comm_.deadline());
    watchdog_ = std::make_unique<NcclWatchdog>(*nccl_, comm_.failure());
  }
#endif
  device_ = device;
  path_ = nccl ? Path::kNccl : Path::kStaged;
  chosen_ = true;
}

std::unique_ptr<StreamMark> DeviceCalls::enqueue(const CollectiveCall& call, void* stream, int device) {
#ifdef DIST_HAVE_NCCL
  if (device != device_) {
    fail_invalid("the buffers are on CUDA device " + std::to_string(device) + " but this communicator's NCCL path "
                 "runs on device " + std::to_string(device_));
  }
  std::unique_ptr<StreamMark> mark;
  watchdog_->enqueue([&] {
    DeviceScope scope(device_);
    enqueue_nccl_call(*nccl_, call, comm_.rank(), comm_.size(), stream, comm_.deadline());
    mark = std::make_unique<StreamMark>(stream);
  });
  return mark;
#else
  (void)call;
  (void)stream;
  (void)device;
  fail(Status::kInternal, "the NCCL path without NCCL");
#endif
}

void DeviceCalls::run(const CollectiveCall& call, void* stream, int device) {
  if (!chosen_) choose(device);
  const bool timed = comm_.timing();
  const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  auto count = [&](bool ok) {
    const int64_t ns =
        timed ? std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()
              : -1;
    comm_.device_stats().record(call.signature.kind, path_, name(path_), counted_bytes(call), ok, ns);
  };
  try {
    if (path_ == Path::kStaged) {
      run_staged(comm_, call, stream);
    } else {
#ifdef DIST_HAVE_NCCL
      watchdog_->wait(enqueue(call, stream, device), comm_.deadline(), describe(call.signature) + " on NCCL");
#endif
    }
  } catch (const Error&) {
    count(false);
    throw;
  }
  count(true);
}

std::shared_ptr<Operation> DeviceCalls::submit(const CollectiveCall& call, void* stream, int device) {
  if (!chosen_) choose(device);
  // Counted when submitted, untimed: it ends on the stream, later.
  comm_.device_stats().record(call.signature.kind, path_, name(path_), counted_bytes(call), true, -1);
  if (path_ == Path::kStaged) return submit_staged(comm_, call, stream);
  auto op = std::make_shared<Operation>(call);
#ifdef DIST_HAVE_NCCL
  watchdog_->watch(enqueue(call, stream, device), comm_.deadline(), describe(call.signature) + " on NCCL",
                   [op](Status status, const std::string& message) { op->complete(status, message); });
#endif
  return op;
}

}  // namespace dist
