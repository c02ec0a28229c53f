// A communicator's counters (dist_comm_stats): per collective, path and
// algorithm, how many calls reached an algorithm, how many failed there, the
// bytes they carried, and, for the calls timed, how long they took.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "collectives/collective_call.h"
#include "collectives/path.h"
#include "collectives/signature.h"

namespace dist {

struct CallStatsRow {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Path path = Path::kSelf;
  const char* algorithm = "";  // static: a row's name in the table, "self", "nccl" or "staged"
  uint64_t calls = 0;
  uint64_t failed = 0;
  uint64_t bytes = 0;
  uint64_t timed_calls = 0;
  uint64_t time_ns = 0;
};

// The bytes a call carries per rank, as the counters count them: per block
// for all_gather and all_to_all (dist_comm_algorithm's measure), every block
// sent for all_to_all_v, none for a barrier.
uint64_t counted_bytes(const CollectiveCall& call);

class CallStats {
 public:
  // Counts one call. One writer at a time (a communicator runs one call at a
  // time); rows() may read meanwhile from any thread. `ns` < 0: not timed.
  void record(CollectiveKind kind, Path path, const char* algorithm, uint64_t bytes, bool ok, int64_t ns);
  // The rows with calls, in the order they first ran.
  std::vector<CallStatsRow> rows() const;
  // Not while calls run.
  void reset();

 private:
  struct Entry {
    CollectiveKind kind = CollectiveKind::kAllReduce;
    Path path = Path::kSelf;
    const char* algorithm = nullptr;
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> failed{0};
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> timed_calls{0};
    std::atomic<uint64_t> time_ns{0};
  };
  Entry* find_or_add(CollectiveKind kind, Path path, const char* algorithm);

  // Entries never move: a reader sees the first `used_` (published with
  // release once their key is set). More keys than this cannot occur: every
  // row of the table plus self, NCCL and staged per kind is fewer.
  static constexpr size_t kMaxEntries = 96;
  std::array<Entry, kMaxEntries> entries_;
  std::atomic<size_t> used_{0};
  Entry* last_ = nullptr;  // the writer's last entry: most calls repeat it
};

}  // namespace dist
