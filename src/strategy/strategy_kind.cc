#include "strategy/strategy_kind.h"

#include <string>

#include "base/status.h"

namespace dist {

StrategyKind strategy_kind_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(StrategyKind::kParameterServer)) {
    fail_invalid("strategy kind " + std::to_string(value) +
                 " is not one of ONE_DEVICE, MIRRORED, MULTI_WORKER_MIRRORED, CENTRAL_STORAGE, PARAMETER_SERVER");
  }
  return static_cast<StrategyKind>(value);
}

const char* name(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kOneDevice: return "OneDeviceStrategy";
    case StrategyKind::kMirrored: return "MirroredStrategy";
    case StrategyKind::kMultiWorkerMirrored: return "MultiWorkerMirroredStrategy";
    case StrategyKind::kCentralStorage: return "CentralStorageStrategy";
    case StrategyKind::kParameterServer: return "ParameterServerStrategy";
  }
  return "invalid";
}

Communication communication_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(Communication::kNccl)) {
    fail_invalid("communication " + std::to_string(value) + " is not one of AUTO, RING, NCCL");
  }
  return static_cast<Communication>(value);
}

}  // namespace dist
