#include "variables/on_servers/placement.h"

#include <algorithm>

#include "base/status.h"
#include "ps/variable_id.h"

namespace dist {

const ShardPlacement& VariablePlacement::shard_of_row(uint64_t row) const {
  if (row >= total_rows) {
    fail_invalid("variable " + quoted(name) + ": row " + std::to_string(row) + " is outside its " +
                 std::to_string(total_rows) + " rows");
  }
  // Shards are contiguous and in order: the last one starting at or before row.
  auto it = std::upper_bound(shards.begin(), shards.end(), row,
                             [](uint64_t r, const ShardPlacement& s) { return r < s.row_offset; });
  return *(it - 1);
}

Placer::Placer(int32_t num_servers, PlacementPolicy policy) : policy_(policy) {
  if (num_servers < 1) fail_invalid("placement: " + std::to_string(num_servers) + " servers; at least one is needed");
  if (policy != PlacementPolicy::kRoundRobin && policy != PlacementPolicy::kGreedyBytes) {
    fail_invalid("placement: policy " + std::to_string(static_cast<int32_t>(policy)) + " is not a placement policy");
  }
  server_bytes_.assign(static_cast<size_t>(num_servers), 0);
}

int32_t Placer::next_server(uint64_t bytes) {
  int32_t server;
  if (policy_ == PlacementPolicy::kRoundRobin) {
    server = next_round_robin_;
    next_round_robin_ = (next_round_robin_ + 1) % num_servers();
  } else {
    server = static_cast<int32_t>(std::min_element(server_bytes_.begin(), server_bytes_.end()) - server_bytes_.begin());
  }
  server_bytes_[static_cast<size_t>(server)] += bytes;
  return server;
}

const VariablePlacement& Placer::place(const std::string& name, uint64_t total_rows, uint64_t row_bytes,
                                       const PartitionerOptions& partitioner, const std::string& colocate_with) {
  if (name.empty()) fail_invalid("placement: a variable needs a name");
  if (placed_.count(name)) fail_invalid("placement: variable " + quoted(name) + " was already placed");
  const VariablePlacement* target = nullptr;
  if (!colocate_with.empty()) {
    target = find(colocate_with);
    if (target == nullptr) {
      fail_invalid("placement: " + quoted(name) + " is to be colocated with " + quoted(colocate_with) +
                   ", which was not placed before");
    }
  }
  VariablePlacement placement;
  placement.name = name;
  placement.total_rows = total_rows;
  placement.row_bytes = row_bytes;
  uint64_t offset = 0;
  const std::vector<uint64_t> rows = partition_rows(total_rows, row_bytes, partitioner);
  for (size_t i = 0; i < rows.size(); ++i) {
    ShardPlacement shard;
    shard.part = static_cast<uint32_t>(i);
    shard.id = ps::variable_shard_id(name, shard.part);
    shard.row_offset = offset;
    shard.rows = rows[i];
    shard.bytes = rows[i] * row_bytes;
    if (target) {
      shard.server = target->shards[i % target->shards.size()].server;
      server_bytes_[static_cast<size_t>(shard.server)] += shard.bytes;
    } else {
      shard.server = next_server(shard.bytes);
    }
    offset += rows[i];
    placement.shards.push_back(shard);
  }
  return placed_.emplace(name, std::move(placement)).first->second;
}

const VariablePlacement* Placer::find(const std::string& name) const {
  auto it = placed_.find(name);
  return it == placed_.end() ? nullptr : &it->second;
}

}  // namespace dist
