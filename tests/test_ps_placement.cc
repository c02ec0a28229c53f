// Variable placement and partitioners (src/variables): round robin, greedy by
// bytes, partitioned shards and colocation, checked against placements worked
// out by hand, and identical on simulated workers that place independently.
#include <string>
#include <vector>

#include "internal_test_support.h"
#include "ps/variable_id.h"
#include "variables/on_servers/partitioner.h"
#include "variables/on_servers/placement.h"

namespace {

using namespace dist;

std::vector<int32_t> servers_of(const VariablePlacement& p) {
  std::vector<int32_t> out;
  for (const ShardPlacement& s : p.shards) out.push_back(s.server);
  return out;
}

void test_round_robin(void** state) {
  (void)state;
  Placer placer(3, PlacementPolicy::kRoundRobin);
  PartitionerOptions none;
  const int32_t expect[5] = {0, 1, 2, 0, 1};
  for (int i = 0; i < 5; ++i) {
    const VariablePlacement& p = placer.place("v" + std::to_string(i), 10, 4, none);
    assert_int_equal(p.shards.size(), 1);
    assert_int_equal(p.shards[0].server, expect[i]);
    assert_int_equal(p.shards[0].rows, 10);
    assert_int_equal(p.shards[0].id, ps::variable_shard_id("v" + std::to_string(i), 0));
  }
  // A partitioned variable continues the turn: shards on 2, 0, 1, 2.
  PartitionerOptions four;
  four.kind = PartitionerKind::kFixedShards;
  four.num_shards = 4;
  const VariablePlacement& p = placer.place("table", 10, 8, four);
  assert_true((servers_of(p) == std::vector<int32_t>{2, 0, 1, 2}));
  // 10 rows in 4 shards: 3, 3, 2, 2.
  const uint64_t rows[4] = {3, 3, 2, 2}, offsets[4] = {0, 3, 6, 8};
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(p.shards[i].rows, rows[i]);
    assert_int_equal(p.shards[i].row_offset, offsets[i]);
    assert_int_equal(p.shards[i].bytes, rows[i] * 8);
  }
  assert_int_equal(p.shard_of_row(0).part, 0);
  assert_int_equal(p.shard_of_row(5).part, 1);
  assert_int_equal(p.shard_of_row(6).part, 2);
  assert_int_equal(p.shard_of_row(9).part, 3);
  expect_invalid("row 10", "row 10 is outside", [&] { p.shard_of_row(10); });
}

void test_greedy_by_bytes(void** state) {
  (void)state;
  Placer placer(3, PlacementPolicy::kGreedyBytes);
  PartitionerOptions none;
  // Sizes 100, 50, 30, 40, 10 bytes: 0 <- 100; 1 <- 50; 2 <- 30; 2 (30) <- 40; 1 (50) <- 10? no: loads 100,50,70 -> 1.
  const uint64_t sizes[5] = {100, 50, 30, 40, 10};
  const int32_t expect[5] = {0, 1, 2, 2, 1};
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(placer.place("v" + std::to_string(i), 1, sizes[i], none).shards[0].server, expect[i]);
  }
  assert_true((placer.server_bytes() == std::vector<uint64_t>{100, 60, 70}));
}

void test_partitioners(void** state) {
  (void)state;
  PartitionerOptions o;
  o.kind = PartitionerKind::kFixedShards;
  o.num_shards = 8;
  assert_true((partition_rows(3, 4, o) == std::vector<uint64_t>{1, 1, 1}));  // never more shards than rows
  assert_true((partition_rows(0, 4, o) == std::vector<uint64_t>{0}));
  o.num_shards = 0;
  expect_invalid("0 shards", "num_shards 0", [&] { partition_rows(3, 4, o); });

  PartitionerOptions min;
  min.kind = PartitionerKind::kMinShardBytes;
  min.min_shard_bytes = 1000;
  min.max_shards = 4;
  // 100 rows x 25 bytes = 2500 bytes: 2 shards of at least 1000 bytes.
  assert_true((partition_rows(100, 25, min) == std::vector<uint64_t>{50, 50}));
  // 10000 bytes would allow 10, but max_shards caps at 4.
  assert_int_equal(partition_rows(400, 25, min).size(), 4);
  assert_int_equal(partition_rows(10, 25, min).size(), 1);

  PartitionerOptions max;
  max.kind = PartitionerKind::kMaxShardBytes;
  max.max_shard_bytes = 1000;
  // 2500 bytes in shards of at most 1000: 3 shards of 34, 33, 33 rows.
  std::vector<uint64_t> parts = partition_rows(100, 25, max);
  assert_true((parts == std::vector<uint64_t>{34, 33, 33}));
  for (uint64_t rows : parts) assert_true(rows * 25 <= 1000);
  // Whole rows per shard first: 3 rows of 10 bytes under 15 are 3 shards of
  // one row (30/15 = 2 shards would hold 20 bytes).
  max.max_shard_bytes = 15;
  assert_true((partition_rows(3, 10, max) == std::vector<uint64_t>{1, 1, 1}));
  max.max_shard_bytes = 1000;
  max.max_shards = 2;
  assert_int_equal(partition_rows(100, 25, max).size(), 2);
  max.max_shard_bytes = 10;
  expect_invalid("row too big", "more than max_shard_bytes", [&] { partition_rows(100, 25, max); });
}

void test_colocation(void** state) {
  (void)state;
  Placer placer(2, PlacementPolicy::kRoundRobin);
  PartitionerOptions three;
  three.kind = PartitionerKind::kFixedShards;
  three.num_shards = 3;
  PartitionerOptions none;
  placer.place("a", 1, 4, none);                       // server 0
  const VariablePlacement& table = placer.place("table", 9, 4, three);  // 1, 0, 1
  assert_true((servers_of(table) == std::vector<int32_t>{1, 0, 1}));
  const VariablePlacement& slot = placer.place("table/m", 9, 4, three, "table");
  assert_true((servers_of(slot) == servers_of(table)));
  const VariablePlacement& bias = placer.place("bias", 1, 4, none, "table");
  assert_int_equal(bias.shards[0].server, 1);
  // Colocation took no turn: the next variable goes where round robin left off.
  assert_int_equal(placer.place("b", 1, 4, none).shards[0].server, 0);
  expect_invalid("unknown target", "was not placed before", [&] { placer.place("c", 1, 4, none, "nope"); });
  expect_invalid("twice", "already placed", [&] { placer.place("a", 1, 4, none); });
  expect_invalid("no servers", "at least one", [] { Placer p(0, PlacementPolicy::kRoundRobin); });
}

// Every worker places the same variables in the same order on its own.
void test_identical_on_every_worker(void** state) {
  (void)state;
  std::vector<std::vector<std::vector<int32_t>>> seen;
  for (int worker = 0; worker < 3; ++worker) {
    for (PlacementPolicy policy : {PlacementPolicy::kRoundRobin, PlacementPolicy::kGreedyBytes}) {
      Placer placer(4, policy);
      std::vector<std::vector<int32_t>> layout;
      PartitionerOptions max;
      max.kind = PartitionerKind::kMaxShardBytes;
      max.max_shard_bytes = 4096;
      for (int v = 0; v < 20; ++v) {
        const uint64_t rows = 1 + (uint64_t)(v * 37 % 200);
        const VariablePlacement& p = placer.place("layer" + std::to_string(v), rows, 64, v % 3 == 0 ? max : PartitionerOptions{});
        std::vector<int32_t> servers = servers_of(p);
        for (const ShardPlacement& s : p.shards) servers.push_back((int32_t)s.rows);
        layout.push_back(servers);
      }
      if (worker == 0) {
        seen.push_back(layout);
      } else {
        assert_true(layout == seen[policy == PlacementPolicy::kRoundRobin ? 0 : 1]);
      }
    }
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_robin), cmocka_unit_test(test_greedy_by_bytes), cmocka_unit_test(test_partitioners),
      cmocka_unit_test(test_colocation), cmocka_unit_test(test_identical_on_every_worker),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
