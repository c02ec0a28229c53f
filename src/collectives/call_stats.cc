#include "collectives/call_stats.h"

#include "base/dtype.h"
#include "base/status.h"

namespace dist {

uint64_t counted_bytes(const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  if (s.kind == CollectiveKind::kBarrier) return 0;
  if (s.kind == CollectiveKind::kAllToAllV) {
    uint64_t elements = 0;
    if (call.blocks != nullptr) {
      for (uint64_t count : call.blocks->send_counts) elements += count;
    }
    return elements * size_of(s.dtype);
  }
  return static_cast<uint64_t>(s.count) * size_of(s.dtype);
}

CallStats::Entry* CallStats::find_or_add(CollectiveKind kind, Path path, const char* algorithm) {
  if (last_ != nullptr && last_->algorithm == algorithm && last_->kind == kind && last_->path == path) return last_;
  const size_t used = used_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < used; ++i) {
    Entry& e = entries_[i];
    if (e.algorithm == algorithm && e.kind == kind && e.path == path) return last_ = &e;
  }
  if (used == kMaxEntries) fail(Status::kInternal, "a communicator's counters have no room for another algorithm");
  Entry& e = entries_[used];
  e.kind = kind;
  e.path = path;
  e.algorithm = algorithm;
  used_.store(used + 1, std::memory_order_release);
  return last_ = &e;
}

void CallStats::record(CollectiveKind kind, Path path, const char* algorithm, uint64_t bytes, bool ok, int64_t ns) {
  Entry* e = find_or_add(kind, path, algorithm);
  // One writer: plain loads and stores, no locked instructions.
  auto add = [](std::atomic<uint64_t>& counter, uint64_t amount) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  };
  add(e->calls, 1);
  add(e->bytes, bytes);
  if (!ok) add(e->failed, 1);
  if (ns >= 0) {
    add(e->timed_calls, 1);
    add(e->time_ns, static_cast<uint64_t>(ns));
  }
}

std::vector<CallStatsRow> CallStats::rows() const {
  const size_t used = used_.load(std::memory_order_acquire);
  std::vector<CallStatsRow> rows;
  rows.reserve(used);
  for (size_t i = 0; i < used; ++i) {
    const Entry& e = entries_[i];
    CallStatsRow row;
    row.kind = e.kind;
    row.path = e.path;
    row.algorithm = e.algorithm;
    row.calls = e.calls.load(std::memory_order_relaxed);
    row.failed = e.failed.load(std::memory_order_relaxed);
    row.bytes = e.bytes.load(std::memory_order_relaxed);
    row.timed_calls = e.timed_calls.load(std::memory_order_relaxed);
    row.time_ns = e.time_ns.load(std::memory_order_relaxed);
    if (row.calls != 0) rows.push_back(row);
  }
  return rows;
}

void CallStats::reset() {
  const size_t used = used_.load(std::memory_order_acquire);
  for (size_t i = 0; i < used; ++i) {
    Entry& e = entries_[i];
    for (auto* counter : {&e.calls, &e.failed, &e.bytes, &e.timed_calls, &e.time_ns}) {
      counter->store(0, std::memory_order_relaxed);
    }
  }
}

}  // namespace dist
