// How a variable is split into shards along its first dimension, with the
// semantics of tf.distribute's partitioners: a fixed number of shards, shards
// of at least N bytes, or shards of at most N bytes. Shards are contiguous row
// ranges; sizes differ by at most one row, the first shards taking the extra
// rows. The split depends only on its inputs, so every worker computes it alike.
#pragma once

#include <cstdint>
#include <vector>

namespace dist {

enum class PartitionerKind : int32_t {
  kNone = 0,        // one shard
  kFixedShards = 1, // FixedShardsPartitioner(num_shards)
  kMinShardBytes = 2, // MinSizePartitioner(min_shard_bytes, max_shards)
  kMaxShardBytes = 3, // MaxSizePartitioner(max_shard_bytes, max_shards)
};

struct PartitionerOptions {
  PartitionerKind kind = PartitionerKind::kNone;
  int32_t num_shards = 1;        // kFixedShards
  uint64_t min_shard_bytes = 256 * 1024;  // kMinShardBytes
  uint64_t max_shard_bytes = 0;  // kMaxShardBytes (required > 0)
  int32_t max_shards = 0;        // kMin/kMaxShardBytes: at most this many (0: no bound for Max, 1 for Min)
};

// The number of rows of each shard (never more shards than rows; a variable
// with no rows is one empty shard). Throws invalid-argument for bad options.
std::vector<uint64_t> partition_rows(uint64_t total_rows, uint64_t row_bytes, const PartitionerOptions& options);

}  // namespace dist
