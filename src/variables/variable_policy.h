// tf.VariableSynchronization and tf.VariableAggregation, and which
// combinations a strategy accepts. The numbers are the public DIST_SYNC_* and
// DIST_AGGREGATION_* values of the C ABI and never change.
#pragma once

#include <cstdint>

#include "strategy/strategy_kind.h"

namespace dist {

enum class Synchronization : int32_t {
  kAuto = 0,
  kOnWrite = 1,
  kOnRead = 2,
  kNone = 3,
};

enum class Aggregation : int32_t {
  kNone = 0,
  kSum = 1,
  kMean = 2,
  kOnlyFirstReplica = 3,
};

Synchronization synchronization_from_int(int32_t value);
Aggregation aggregation_from_int(int32_t value);
const char* name(Synchronization synchronization);
const char* name(Aggregation aggregation);

// AUTO becomes ON_WRITE; NONE is refused (as tf.distribute refuses it) except
// under ONE_DEVICE, where a variable is a plain variable.
Synchronization resolve_synchronization(Synchronization requested, StrategyKind kind, const char* variable);

}  // namespace dist
