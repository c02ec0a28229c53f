#include "variables/on_servers/partitioner.h"

#include <algorithm>
#include <string>

#include "base/status.h"

namespace dist {
namespace {

uint64_t shard_count(uint64_t total_rows, uint64_t row_bytes, const PartitionerOptions& o) {
  const uint64_t total_bytes = total_rows * row_bytes;
  switch (o.kind) {
    case PartitionerKind::kNone: return 1;
    case PartitionerKind::kFixedShards:
      if (o.num_shards < 1) fail_invalid("partitioner: num_shards " + std::to_string(o.num_shards) + " must be >= 1");
      return static_cast<uint64_t>(o.num_shards);
    case PartitionerKind::kMinShardBytes: {
      if (o.min_shard_bytes == 0) fail_invalid("partitioner: min_shard_bytes must be > 0");
      if (o.max_shards < 0) fail_invalid("partitioner: max_shards must be >= 0");
      const uint64_t bound = o.max_shards == 0 ? 1 : static_cast<uint64_t>(o.max_shards);
      return std::max<uint64_t>(1, std::min(bound, total_bytes / o.min_shard_bytes));
    }
    case PartitionerKind::kMaxShardBytes: {
      if (o.max_shard_bytes == 0) fail_invalid("partitioner: max_shard_bytes must be > 0");
      if (o.max_shards < 0) fail_invalid("partitioner: max_shards must be >= 0");
      if (row_bytes > o.max_shard_bytes) {
        fail_invalid("partitioner: one row is " + std::to_string(row_bytes) + " bytes, more than max_shard_bytes " +
                     std::to_string(o.max_shard_bytes));
      }
      // TF's MaxSizePartitioner: as many whole rows per shard as fit, then as
      // few shards as hold them all, so that no shard exceeds the bound.
      if (row_bytes == 0) return 1;
      const uint64_t rows_per_shard = o.max_shard_bytes / row_bytes;
      uint64_t count = std::max<uint64_t>(1, (total_rows + rows_per_shard - 1) / rows_per_shard);
      if (o.max_shards > 0) count = std::min<uint64_t>(count, static_cast<uint64_t>(o.max_shards));
      return count;
    }
  }
  fail_invalid("partitioner: kind " + std::to_string(static_cast<int32_t>(o.kind)) + " is not a partitioner");
}

}  // namespace

std::vector<uint64_t> partition_rows(uint64_t total_rows, uint64_t row_bytes, const PartitionerOptions& options) {
  uint64_t count = shard_count(total_rows, row_bytes, options);
  count = std::max<uint64_t>(1, std::min(count, total_rows));
  std::vector<uint64_t> rows(count, total_rows / count);
  for (uint64_t i = 0; i < total_rows % count; ++i) ++rows[i];
  return rows;
}

}  // namespace dist
