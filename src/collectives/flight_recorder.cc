#include "collectives/flight_recorder.h"

#include "base/dtype.h"
#include "base/numbers.h"
#include "collectives/reduce_op.h"

namespace dist {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

const char* state_name(int32_t state) { return state == 1 ? "done" : state == 2 ? "failed" : "in flight"; }

size_t power_of_two_at_least(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return n == 0 ? 0 : p;
}

uint64_t pack_call(const CallSignature& s) {
  const uint64_t kind = static_cast<uint8_t>(s.kind), dtype = static_cast<uint8_t>(s.dtype);
  const uint64_t op = static_cast<uint8_t>(s.op), root = static_cast<uint32_t>(s.root);
  return kind | dtype << 8 | op << 16 | root << 32;
}

uint64_t pack_outcome(int32_t state, Path path, Status status) {
  const uint64_t ended = static_cast<uint8_t>(state), by = static_cast<uint8_t>(path);
  return ended | by << 8 | static_cast<uint64_t>(static_cast<uint32_t>(status)) << 32;
}

}  // namespace

size_t FlightRecorder::entries_from_environment() {
  return static_cast<size_t>(integer_from_environment("DIST_FLIGHT_RECORDER_ENTRIES", 0, 1 << 20, 256));
}

FlightRecorder::FlightRecorder(size_t entries)
    : size_(power_of_two_at_least(entries)), mask_(size_ == 0 ? 0 : size_ - 1) {
  if (size_ > 0) slots_.reset(new Slot[size_]);
}

void FlightRecorder::begin(uint64_t seq, const CallSignature& s, int64_t start_ns) {
  if (size_ == 0) return;
  Slot& slot = slots_[seq & mask_];
  slot.outcome.store(0, kRelaxed);  // in flight
  slot.call.store(pack_call(s), kRelaxed);
  slot.count.store(s.count, kRelaxed);
  slot.start_ns.store(start_ns, kRelaxed);
  slot.seq_plus_one.store(seq + 1, std::memory_order_release);
}

void FlightRecorder::end(uint64_t seq, Status status, Path path, const char* algorithm, int64_t end_ns) {
  if (size_ == 0) return;
  Slot& slot = slots_[seq & mask_];
  slot.algorithm.store(algorithm, kRelaxed);
  slot.end_ns.store(end_ns, kRelaxed);
  slot.outcome.store(pack_outcome(status == Status::kOk ? 1 : 2, path, status), std::memory_order_release);
}

Json FlightRecorder::entries() const {
  std::vector<Json> kept;
  for (size_t i = 0; i < size_; ++i) {
    const Slot& slot = slots_[i];
    const uint64_t seq_plus_one = slot.seq_plus_one.load(std::memory_order_acquire);
    if (seq_plus_one == 0) continue;
    const uint64_t outcome = slot.outcome.load(std::memory_order_acquire);
    const int32_t state = static_cast<int32_t>(outcome & 0xff);
    const uint64_t call = slot.call.load(kRelaxed);
    const auto kind = static_cast<CollectiveKind>(call & 0xff);
    const int32_t root = static_cast<int32_t>(static_cast<uint32_t>(call >> 32));
    Json entry = {{"seq", seq_plus_one - 1},
                  {"kind", name(kind)},
                  {"dtype", name(static_cast<DType>((call >> 8) & 0xff))},
                  {"count", slot.count.load(kRelaxed)},
                  {"state", state_name(state)}};
    if (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce || kind == CollectiveKind::kReduceScatter) {
      entry["op"] = name(static_cast<ReduceOp>((call >> 16) & 0xff));
    }
    if (root >= 0) entry["root"] = root;
    if (state != 0) {
      entry["status"] = status_name(static_cast<Status>(static_cast<int32_t>(static_cast<uint32_t>(outcome >> 32))));
      // A call refused before any path took it has neither.
      if (const char* algorithm = slot.algorithm.load(kRelaxed)) {
        entry["path"] = name(static_cast<Path>((outcome >> 8) & 0xff));
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
