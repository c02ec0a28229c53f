// The kinds of distribution strategy, as tf.distribute names them. The numbers
// are the public DIST_STRATEGY_* values of the C ABI and never change.
#pragma once

#include <cstdint>

namespace dist {

enum class StrategyKind : int32_t {
  kOneDevice = 0,
  kMirrored = 1,
  kMultiWorkerMirrored = 2,
  kCentralStorage = 3,
  kParameterServer = 4,
};

// Throws invalid-argument naming the value when it is not a kind.
StrategyKind strategy_kind_from_int(int32_t value);

// "OneDeviceStrategy", "MirroredStrategy", ... (TF's class names).
const char* name(StrategyKind kind);

// How the strategy talks across workers (TF's CommunicationImplementation).
enum class Communication : int32_t {
  kAuto = 0,
  kRing = 1,
  kNccl = 2,
};

Communication communication_from_int(int32_t value);

}  // namespace dist
