// Which parameter server holds each shard of each variable. Placement is a
// pure function of the sequence of variables placed (names, sizes, options)
// and the number of servers, so every worker that creates the same variables
// in the same order computes the same placement without talking to the others.
//
//   round robin (default): shards go to servers 0, 1, 2, ... in turn, across
//     variables, as TF's default ps placement does;
//   greedy by bytes: each shard goes to the server holding the fewest bytes so
//     far (ties: the lowest index), TF's GreedyLoadBalancingStrategy;
//   colocation: a variable placed with another one puts its shard i where the
//     other's shard (i mod its shard count) lives, and moves no turn.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "variables/on_servers/partitioner.h"

namespace dist {

enum class PlacementPolicy : int32_t {
  kRoundRobin = 0,
  kGreedyBytes = 1,
};

struct ShardPlacement {
  uint32_t part = 0;
  int32_t server = 0;
  uint64_t id = 0;  // the shard's id on its server (ps/variable_id.h)
  uint64_t row_offset = 0;
  uint64_t rows = 0;
  uint64_t bytes = 0;
};

struct VariablePlacement {
  std::string name;
  uint64_t total_rows = 0;
  uint64_t row_bytes = 0;
  std::vector<ShardPlacement> shards;

  // The shard holding global row `row` (rows outside the variable throw).
  const ShardPlacement& shard_of_row(uint64_t row) const;
};

class Placer {
 public:
  Placer(int32_t num_servers, PlacementPolicy policy);

  // Places a variable of total_rows rows of row_bytes bytes each (a scalar is
  // one row). colocate_with: the name of a variable placed before, or "".
  // Names are unique; placing one twice is an error.
  const VariablePlacement& place(const std::string& name, uint64_t total_rows, uint64_t row_bytes,
                                 const PartitionerOptions& partitioner, const std::string& colocate_with = "");

  // The placement of `name`, or null.
  const VariablePlacement* find(const std::string& name) const;
  // Bytes placed on each server so far.
  const std::vector<uint64_t>& server_bytes() const { return server_bytes_; }
  int32_t num_servers() const { return static_cast<int32_t>(server_bytes_.size()); }

 private:
  int32_t next_server(uint64_t bytes);

  PlacementPolicy policy_;
  std::vector<uint64_t> server_bytes_;
  int32_t next_round_robin_ = 0;
  std::map<std::string, VariablePlacement> placed_;
};

}  // namespace dist
