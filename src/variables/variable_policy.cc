#include "variables/variable_policy.h"

#include <string>

#include "base/status.h"

namespace dist {

Synchronization synchronization_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(Synchronization::kNone)) {
    fail_invalid("synchronization " + std::to_string(value) + " is not one of AUTO, ON_WRITE, ON_READ, NONE");
  }
  return static_cast<Synchronization>(value);
}

Aggregation aggregation_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(Aggregation::kOnlyFirstReplica)) {
    fail_invalid("aggregation " + std::to_string(value) + " is not one of NONE, SUM, MEAN, ONLY_FIRST_REPLICA");
  }
  return static_cast<Aggregation>(value);
}

const char* name(Synchronization synchronization) {
  switch (synchronization) {
    case Synchronization::kAuto: return "AUTO";
    case Synchronization::kOnWrite: return "ON_WRITE";
    case Synchronization::kOnRead: return "ON_READ";
    case Synchronization::kNone: return "NONE";
  }
  return "invalid";
}

const char* name(Aggregation aggregation) {
  switch (aggregation) {
    case Aggregation::kNone: return "NONE";
    case Aggregation::kSum: return "SUM";
    case Aggregation::kMean: return "MEAN";
    case Aggregation::kOnlyFirstReplica: return "ONLY_FIRST_REPLICA";
  }
  return "invalid";
}

Synchronization resolve_synchronization(Synchronization requested, StrategyKind kind, const char* variable) {
  if (requested == Synchronization::kAuto) return Synchronization::kOnWrite;
  if (requested == Synchronization::kNone && kind != StrategyKind::kOneDevice) {
    fail_invalid(std::string("variable '") + variable +
                 "': synchronization NONE is not supported with a distribution strategy (" + name(kind) +
                 "); use ON_WRITE or ON_READ");
  }
  return requested;
}

}  // namespace dist
