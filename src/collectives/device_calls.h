// How a communicator runs calls on CUDA buffers (builds with CUDA). At the
// first such call its ranks choose together, from what each reports: NCCL
// where every rank has NCCL and its buffers on a GPU no other rank of the
// communicator uses, the staged path (staged_call.h) otherwise, or where any
// rank sets DIST_NCCL=0. The NCCL communicator is made then, over the
// authenticated context (nccl_setup.h), on that call's device; its calls are
// enqueued on the caller's stream and watched (gpu/nccl_watchdog.h) until
// they end, by the communicator's deadline at the latest.
#pragma once

#include <memory>

#include "collectives/collective_call.h"
#include "collectives/operation.h"
#include "collectives/path.h"

namespace dist {

class Communicator;
class NcclCommunicator;
class NcclWatchdog;
class StreamMark;

class DeviceCalls {
 public:
  explicit DeviceCalls(Communicator& comm);
  // Waits for the NCCL calls still pending (each by its deadline).
  ~DeviceCalls();
  DeviceCalls(const DeviceCalls&) = delete;
  DeviceCalls& operator=(const DeviceCalls&) = delete;

  // `call` names pointers on CUDA device `device` (signature.memory is
  // kCuda) ordered on `stream`. Blocking: returns once the result is on the
  // device.
  void run(const CollectiveCall& call, void* stream, int device);
  // The same with a request: the operation completes when the result is on
  // the device, or the call failed.
  std::shared_ptr<Operation> submit(const CollectiveCall& call, void* stream, int device);

  // Path::kNccl or Path::kStaged once the first call chose; false before.
  bool path(Path* path) const;

 private:
  // Collective: the ranks' reports, the choice, and the NCCL communicator.
  void choose(int device);
  // The NCCL call enqueued under the watchdog, and the mark of its end.
  std::unique_ptr<StreamMark> enqueue(const CollectiveCall& call, void* stream, int device);

  Communicator& comm_;
  bool chosen_ = false;
  Path path_ = Path::kStaged;
  int device_ = -1;
  std::unique_ptr<NcclCommunicator> nccl_;
  std::unique_ptr<NcclWatchdog> watchdog_;
};

}  // namespace dist
