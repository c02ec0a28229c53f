#include "collectives/flight_recorder.h"

#include "base/dtype.h"
#include "base/numbers.h"
#include "collectives/reduce_op.h"

namespace dist {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

const char* state_name(int32_t state) { return state == 1 ? "done" : state == 2 ? "failed" : "in flight"; }

}  // namespace

size_t FlightRecorder::entries_from_environment() {
  return static_cast<size_t>(integer_from_environment("DIST_FLIGHT_RECORDER_ENTRIES", 0, 1 << 20, 256));
}

namespace {

size_t power_of_two_at_least(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return n == 0 ? 0 : p;
}

}  // namespace

FlightRecorder::FlightRecorder(size_t entries)
    : size_(power_of_two_at_least(entries)), mask_(size_ == 0 ? 0 : size_ - 1) {
  if (size_ > 0) slots_.reset(new Slot[size_]);
}

void FlightRecorder::begin(uint64_t seq, const CallSignature& s, int64_t start_ns) {
  if (size_ == 0) return;
  Slot& slot = slots_[seq & mask_];
  slot.state.store(0, kRelaxed);
  slot.kind.store(static_cast<int32_t>(s.kind), kRelaxed);
  slot.dtype.store(static_cast<int32_t>(s.dtype), kRelaxed);
  slot.op.store(static_cast<int32_t>(s.op), kRelaxed);
  slot.root.store(s.root, kRelaxed);
  slot.count.store(s.count, kRelaxed);
  slot.algorithm.store(nullptr, kRelaxed);
  slot.start_ns.store(start_ns, kRelaxed);
  slot.seq_plus_one.store(seq + 1, std::memory_order_release);
}

void FlightRecorder::end(uint64_t seq, Status status, Path path, const char* algorithm, int64_t end_ns) {
  if (size_ == 0) return;
  Slot& slot = slots_[seq & mask_];
  slot.status.store(static_cast<int32_t>(status), kRelaxed);
  slot.path.store(static_cast<int32_t>(path), kRelaxed);
  slot.algorithm.store(algorithm, kRelaxed);
  slot.end_ns.store(end_ns, kRelaxed);
  slot.state.store(status == Status::kOk ? 1 : 2, std::memory_order_release);
}

Json FlightRecorder::entries() const {
  std::vector<Json> kept;
  for (size_t i = 0; i < size_; ++i) {
    const Slot& slot = slots_[i];
    const uint64_t seq_plus_one = slot.seq_plus_one.load(std::memory_order_acquire);
    if (seq_plus_one == 0) continue;
    const int32_t state = slot.state.load(std::memory_order_acquire);
    Json entry = {{"seq", seq_plus_one - 1},
                  {"kind", name(static_cast<CollectiveKind>(slot.kind.load(kRelaxed)))},
                  {"dtype", name(static_cast<DType>(slot.dtype.load(kRelaxed)))},
                  {"count", slot.count.load(kRelaxed)},
                  {"state", state_name(state)}};
    const auto kind = static_cast<CollectiveKind>(slot.kind.load(kRelaxed));
    if (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce || kind == CollectiveKind::kReduceScatter) {
      entry["op"] = name(static_cast<ReduceOp>(slot.op.load(kRelaxed)));
    }
    if (slot.root.load(kRelaxed) >= 0) entry["root"] = slot.root.load(kRelaxed);
    if (state != 0) {
      entry["status"] = status_name(static_cast<Status>(slot.status.load(kRelaxed)));
      // A call refused before any path took it has neither.
      if (const char* algorithm = slot.algorithm.load(kRelaxed)) {
        entry["path"] = name(static_cast<Path>(slot.path.load(kRelaxed)));
        entry["algorithm"] = algorithm;
      }
    }
    const int64_t start = slot.start_ns.load(kRelaxed), end = slot.end_ns.load(kRelaxed);
    if (start != 0) {
      entry["start_us"] = static_cast<double>(start) / 1e3;
      if (state != 0 && end >= start) entry["duration_us"] = static_cast<double>(end - start) / 1e3;
    }
    kept.push_back(std::move(entry));
  }
  std::sort(kept.begin(), kept.end(), [](const Json& a, const Json& b) { return a["seq"] < b["seq"]; });
  return Json(kept);
}

}  // namespace dist
