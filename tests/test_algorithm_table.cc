// The table of paths and algorithms (collectives/algorithm_table.h): which
// row each call of a kind, size, rank count, path and forced option selects,
// pinned to the choices made before the table existed, and the forced names
// against the C ABI's DIST_ALLREDUCE_* constants. The algorithms themselves
// are tested in test_algorithms.cc.
#include <cstddef>
#include <cstdint>
#include <string>

#include <distribute/c_api.h>
#include "collectives/algorithm_table.h"
#include "collectives/collective_call.h"
#include "internal_test_support.h"

namespace {

using dist::AlgorithmOptions;
using dist::CollectiveKind;

const char* const kAllReduceAlgorithms[] = {"ring", "rabenseifner", "recursive_doubling"};

// The point-to-point row for `kind` moving `bytes` per rank among `ranks`
// ranks, options.all_reduce forcing the all-reduce (as run_collective picks).
dist::Algorithm choose_algorithm(CollectiveKind kind, size_t bytes, int ranks, const AlgorithmOptions& options) {
  dist::Selection selection;
  selection.bytes = bytes;
  selection.ranks = ranks;
  return dist::select_algorithm(kind, dist::Path::kPointToPoint, selection,
                                dist::forced_point_to_point(options.all_reduce))
      .id;
}

void test_selection(void**) {
  using dist::Algorithm;
  const AlgorithmOptions automatic;
  auto all_reduce = [&](size_t bytes, int ranks) {
    return choose_algorithm(CollectiveKind::kAllReduce, bytes, ranks, automatic);
  };
  assert_true(all_reduce(8, 4) == Algorithm::kAllReduceRecursiveDoubling);
  assert_true(all_reduce(dist::kRecursiveDoublingMaxBytes, 3) == Algorithm::kAllReduceRecursiveDoubling);
  assert_true(all_reduce(dist::kRecursiveDoublingMaxBytes + 1, 4) == Algorithm::kAllReduceRabenseifner);
  assert_true(all_reduce(dist::kRabenseifnerMaxBytes, 8) == Algorithm::kAllReduceRabenseifner);
  assert_true(all_reduce(dist::kRabenseifnerMaxBytes, 6) == Algorithm::kAllReduceRing);
  assert_true(all_reduce(dist::kRabenseifnerFoldedMaxBytes, 6) == Algorithm::kAllReduceRabenseifner);
  assert_true(all_reduce(dist::kRabenseifnerMaxBytes + 1, 4) == Algorithm::kAllReduceRing);
  AlgorithmOptions forced;
  dist::ForcedAllReduce resolved;
  for (const char* algorithm : kAllReduceAlgorithms) {
    forced.all_reduce = algorithm;
    assert_true(dist::find_forced_all_reduce(algorithm, &resolved));
    assert_true(resolved.any && resolved.path == dist::Path::kPointToPoint);
    assert_string_equal(dist::name(choose_algorithm(CollectiveKind::kAllReduce, 8, 4, forced)), algorithm);
  }
  assert_false(dist::find_forced_all_reduce("tree", &resolved));
  assert_true(dist::find_forced_all_reduce("", &resolved));
  assert_false(resolved.any);
  assert_true(choose_algorithm(CollectiveKind::kBroadcast, dist::kScatterAllGatherMinBytes, 4, automatic) ==
              Algorithm::kBroadcastScatterAllGather);
  assert_true(choose_algorithm(CollectiveKind::kBroadcast, dist::kScatterAllGatherMinBytes, 2, automatic) ==
              Algorithm::kBroadcastBinomial);
  assert_true(choose_algorithm(CollectiveKind::kBroadcast, 1024, 8, automatic) == Algorithm::kBroadcastBinomial);
  assert_true(choose_algorithm(CollectiveKind::kAllToAll, 1, 3, automatic) == Algorithm::kAllToAllPairwise);
  assert_int_equal(dist::choose_chunk_bytes(automatic), dist::kDefaultChunkBytes);
}


// Today's choices, pinned for a grid of sizes and rank counts and every forced
// all-reduce: whatever decides them (the table of algorithms), each call of a
// kind, size, rank count and forced option picks what it picked before the
// table existed. The expected names follow the rules as they were written
// then: recursive doubling to 16 KiB, Rabenseifner to 1 MiB (256 KiB on a rank
// count that is not a power of two), the ring above; broadcasts of 512 KiB or
// more on more than two ranks scatter and all-gather.
void test_selection_is_pinned(void**) {
  const size_t sizes[] = {0,           1,           8,           4096,        16383,      16384,
                          16385,       65536,       262143,      262144,      262145,     524287,
                          524288,      524289,      1048575,     1048576,     1048577,    16777216,
                          size_t{1} << 34};
  const CollectiveKind kinds[] = {CollectiveKind::kAllReduce,     CollectiveKind::kReduce,
                                  CollectiveKind::kBroadcast,     CollectiveKind::kAllGather,
                                  CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
                                  CollectiveKind::kBarrier,       CollectiveKind::kSplit,
                                  CollectiveKind::kCommSetup,     CollectiveKind::kAllToAllV};
  auto expected = [](CollectiveKind kind, size_t bytes, int ranks, const std::string& forced) -> std::string {
    const bool power_of_two = (ranks & (ranks - 1)) == 0;
    switch (kind) {
      case CollectiveKind::kAllReduce:
        if (!forced.empty()) return forced;
        if (bytes <= 16 * 1024) return "recursive_doubling";
        if (bytes <= (power_of_two ? 1024 * 1024 : 256 * 1024)) return "rabenseifner";
        return "ring";
      case CollectiveKind::kReduce: return "reduce_binomial";
      case CollectiveKind::kBroadcast:
        return ranks > 2 && bytes >= 512 * 1024 ? "broadcast_scatter_allgather" : "broadcast_binomial";
      case CollectiveKind::kAllGather:
      case CollectiveKind::kSplit:
      case CollectiveKind::kCommSetup: return "allgather_ring";
      case CollectiveKind::kReduceScatter: return "reduce_scatter_ring";
      case CollectiveKind::kAllToAll: return "alltoall_pairwise";
      case CollectiveKind::kAllToAllV: return "alltoallv_pairwise";
      case CollectiveKind::kBarrier: return "barrier_dissemination";
    }
    return "?";
  };
  for (const char* forced : {"", "ring", "rabenseifner", "recursive_doubling"}) {
    AlgorithmOptions options;
    options.all_reduce = forced;
    for (CollectiveKind kind : kinds) {
      for (int ranks = 1; ranks <= 9; ++ranks) {
        for (size_t bytes : sizes) {
          const std::string chosen = dist::name(choose_algorithm(kind, bytes, ranks, options));
          const std::string want = expected(kind, bytes, ranks, forced);
          if (chosen != want) {
            fail_msg("%s of %zu bytes on %d ranks, forced '%s': %s, not %s", dist::name(kind), bytes, ranks, forced,
                     chosen.c_str(), want.c_str());
          }
        }
      }
    }
  }
}

// A shared-memory group's selection for `bytes` among `ranks` ranks, the
// bits of `flags` saying single copies (1), more ranks than cores (2), in
// place (4) and, for an all-reduce, pieces (8).
dist::Selection shared_memory_selection(CollectiveKind kind, size_t bytes, int ranks, int flags) {
  dist::Selection s;
  s.bytes = bytes;
  s.ranks = ranks;
  s.single_copy = (flags & 1) != 0;
  s.shares_cores = (flags & 2) != 0;
  s.in_place = (flags & 4) != 0;
  s.pieces = (flags & 8) != 0 && kind == CollectiveKind::kAllReduce;
  return s;
}

// The shared-memory choices, as run_shm and the shm algorithms made them
// before the table: the direct all-reduce to 16 KiB unless forced; in place
// from 64 KiB with a core for every rank, reading the peers' inputs and
// writing their results (shm_read_write, added since); the split above,
// writing into the peers' results where the group reaches their memory
// (from 256 KiB to 16 MiB into a separate result, 64 MiB in place; 4 and 16
// MiB with more ranks than cores); single copies of all-gather and
// all-to-all blocks from 32 KiB (128 KiB with more ranks than cores) to 16
// MiB, all-to-all only out of place and, with a core for every rank, at any
// larger size too (added since); broadcasts from 32 KiB copied once by
// single copies with a core for every rank (added since), the slots
// otherwise; a piecewise all-reduce always splits.
void test_shared_memory_selection_is_pinned(void**) {
  const size_t sizes[] = {0,      8,        16383,    16384,    16385,    32767,    32768,    65535,    65536,    131071,   131072,   262143,
                          262144, 2097152,  2097153,  4194304,  4194305,  16777216, 16777217, 67108864,
                          67108865};
  const CollectiveKind kinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kReduce,
                                  CollectiveKind::kBroadcast, CollectiveKind::kAllGather,
                                  CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
                                  CollectiveKind::kBarrier};
  auto expected = [](CollectiveKind kind, const dist::Selection& s, const std::string& forced) -> std::string {
    const size_t single_copy_min =
        s.shares_cores ? 128 * 1024 : 32 * 1024;
    const bool single_copy = s.single_copy && s.bytes >= single_copy_min;
    switch (kind) {
      case CollectiveKind::kAllReduce: {
        if (s.pieces) return "shm_split";
        if (forced == "shm_read_write" && s.single_copy) return "shm_read_write";
        if (forced == "shm_direct" || (forced != "shm_split" && s.bytes <= 16 * 1024)) return "shm_direct";
        if (forced != "shm_split" && s.single_copy && s.in_place && !s.shares_cores && s.bytes >= 64 * 1024) {
          return "shm_read_write";
        }
        const size_t most = s.in_place ? (s.shares_cores ? 16u << 20 : 64u << 20) : (s.shares_cores ? 4u << 20 : 16u << 20);
        return s.single_copy && s.bytes >= 256 * 1024 && s.bytes <= most ? "shm_split_single_copy" : "shm_split";
      }
      case CollectiveKind::kAllGather:
        return single_copy && s.bytes <= (16u << 20) ? "shm_single_copy" : "shm";
      case CollectiveKind::kAllToAll:
        return !s.in_place && single_copy && (!s.shares_cores || s.bytes <= (16u << 20)) ? "shm_single_copy" : "shm";
      case CollectiveKind::kBroadcast:
        return single_copy && !s.shares_cores ? "shm_single_copy" : "shm";
      default:
        return "shm";
    }
  };
  for (const char* forced_name : {"", "shm", "shm_direct", "shm_read_write", "shm_split"}) {
    dist::ForcedAllReduce forced;
    assert_true(dist::find_forced_all_reduce(forced_name, &forced));
    for (CollectiveKind kind : kinds) {
      for (size_t bytes : sizes) {
        for (int flags = 0; flags < 16; ++flags) {
          const dist::Selection s = shared_memory_selection(kind, bytes, 4, flags);
          const std::string chosen = dist::select_algorithm(kind, dist::Path::kSharedMemory, s, forced).name;
          const std::string want = expected(kind, s, forced_name);
          if (chosen != want) {
            fail_msg("%s of %zu bytes, flags %d, forced '%s': %s, not %s", dist::name(kind), bytes, flags, forced_name,
                     chosen.c_str(), want.c_str());
          }
        }
      }
    }
  }
}

// Where a shared-memory group learns between two all-reduce rows
// (shm/agreed_choice.h): exactly where the split writing into the peers'
// results was selected for a call into a separate result with a core for
// every rank and nothing forced, the other row being shm_read_write.
void test_learned_alternative(void**) {
  const size_t sizes[] = {8, 65536, 262143, 262144, 1 << 20, 16u << 20, (16u << 20) + 1, 64u << 20};
  for (const char* forced_name : {"", "shm", "shm_split", "shm_read_write"}) {
    dist::ForcedAllReduce forced;
    assert_true(dist::find_forced_all_reduce(forced_name, &forced));
    for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
      for (size_t bytes : sizes) {
        for (int flags = 0; flags < 16; ++flags) {
          const dist::Selection s = shared_memory_selection(kind, bytes, 2, flags);
          const dist::AlgorithmRow& chosen = dist::select_algorithm(kind, dist::Path::kSharedMemory, s, forced);
          const dist::AlgorithmRow* other = dist::learned_alternative(kind, chosen, s, forced);
          const bool learns = kind == CollectiveKind::kAllReduce && forced.rows == 0 &&
                              std::string(chosen.name) == "shm_split_single_copy" && !s.in_place && !s.shares_cores;
          if ((other != nullptr) != learns || (other != nullptr && std::string(other->name) != "shm_read_write")) {
            fail_msg("%s of %zu bytes, flags %d, forced '%s' (%s): alternative %s", dist::name(kind), bytes, flags,
                     forced_name, chosen.name, other != nullptr ? other->name : "none");
          }
          // Learning happens from 256 KiB to 16 MiB out of place, no more.
          if (learns && (bytes < 262144 || bytes > (16u << 20))) fail_msg("learns at %zu bytes", bytes);
        }
      }
    }
  }
}

// The names that force an all-reduce, and the C ABI's DIST_ALLREDUCE_*
// numbers for them, come from the table.
void test_forced_names(void**) {
  assert_string_equal(dist::forced_all_reduce_names(nullptr, "", ", ").c_str(),
                      "ring, rabenseifner, recursive_doubling, shm, shm_direct, shm_read_write, shm_split, "
                      "hierarchical, hier_streamed, hier_rails, hier_leaders");
  const dist::Path point_to_point = dist::Path::kPointToPoint;
  assert_string_equal(dist::forced_all_reduce_names(&point_to_point, "'", ", ").c_str(),
                      "'ring', 'rabenseifner', 'recursive_doubling'");
  assert_string_equal(dist::forced_all_reduce_name(DIST_ALLREDUCE_AUTO), "");
  assert_string_equal(dist::forced_all_reduce_name(DIST_ALLREDUCE_RING), "ring");
  assert_string_equal(dist::forced_all_reduce_name(DIST_ALLREDUCE_RABENSEIFNER), "rabenseifner");
  assert_string_equal(dist::forced_all_reduce_name(DIST_ALLREDUCE_RECURSIVE_DOUBLING), "recursive_doubling");
  assert_string_equal(dist::forced_all_reduce_name(DIST_ALLREDUCE_SHARED_MEMORY), "shm");
  assert_string_equal(dist::forced_all_reduce_name(DIST_ALLREDUCE_HIERARCHICAL), "hierarchical");
  assert_null(dist::forced_all_reduce_name(DIST_ALLREDUCE_HIERARCHICAL + 1));
  assert_null(dist::forced_all_reduce_name(-1));
  // A forced point-to-point all-reduce asks for that path; "shm" for the
  // segment, by size there; the shared-memory algorithms for their rows.
  dist::ForcedAllReduce forced;
  assert_true(dist::find_forced_all_reduce("shm", &forced));
  assert_true(forced.any && forced.path == dist::Path::kSharedMemory && forced.rows == 0);
  assert_true(dist::find_forced_all_reduce("shm_split", &forced));
  assert_true(forced.any && forced.path == dist::Path::kSharedMemory && forced.rows != 0);
  expect_invalid("forced_point_to_point", "is not one of 'ring', 'rabenseifner', 'recursive_doubling'",
                 [] { dist::forced_point_to_point("shm_direct"); });
  // "hierarchical" forces the path, by size there.
  assert_true(dist::find_forced_all_reduce("hierarchical", &forced));
  assert_true(forced.any && forced.path == dist::Path::kHierarchical && forced.rows == 0);
  expect_invalid("forced_point_to_point", "is not one of", [] { dist::forced_point_to_point("hierarchical"); });
}

// The hierarchical rows: leaders for small all-reduces and wherever the hosts
// hold different numbers of ranks, rails for large ones on even hosts; the
// gathers on rails where they exist, else point to point over all ranks.
void test_hierarchical_selection(void**) {
  auto chosen = [](CollectiveKind kind, size_t bytes, bool even, const char* forced = "", int hosts = 2,
                   bool single_copy = false) {
    dist::Selection selection;
    selection.bytes = bytes;
    selection.ranks = 4;
    selection.even_hosts = even;
    selection.hosts = hosts;
    selection.single_copy = single_copy;
    dist::ForcedAllReduce resolved;
    assert_true(dist::find_forced_all_reduce(forced, &resolved));
    return std::string(dist::select_algorithm(kind, dist::Path::kHierarchical, selection, resolved).name);
  };
  const size_t small = dist::kHierarchicalLeadersMaxBytes;
  const size_t large = dist::kHierarchicalLeadersMaxBytes + 1;
  assert_string_equal(chosen(CollectiveKind::kAllReduce, 0, true).c_str(), "hier_allreduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, small, true).c_str(), "hier_allreduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, true).c_str(), "hier_allreduce_rails");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, size_t{1} << 30, false).c_str(), "hier_allreduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, true, "hierarchical").c_str(), "hier_allreduce_rails");
  // The rows forced by name, whatever the size; rails only where they exist.
  assert_string_equal(chosen(CollectiveKind::kAllReduce, 0, true, "hier_rails").c_str(), "hier_allreduce_rails");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, false, "hier_rails").c_str(), "hier_allreduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, size_t{1} << 30, true, "hier_leaders").c_str(),
                      "hier_allreduce_leaders");
  // Two hosts whose ranks reach each other's memory stream the large
  // all-reduces; three hosts, or no single copy, take the rails.
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, true, "", 2, true).c_str(), "hier_allreduce_streamed");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, small, true, "", 2, true).c_str(), "hier_allreduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, true, "", 3, true).c_str(), "hier_allreduce_rails");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, false, "", 2, true).c_str(), "hier_allreduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, 0, true, "hier_streamed", 2, true).c_str(),
                      "hier_allreduce_streamed");
  // Forced where it cannot run: size decides among the others.
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, true, "hier_streamed", 3, true).c_str(),
                      "hier_allreduce_rails");
  assert_string_equal(chosen(CollectiveKind::kAllReduce, large, true, "hier_streamed", 2, false).c_str(),
                      "hier_allreduce_rails");
  // A forced shared-memory row does not apply on this path: size decides.
  assert_string_equal(chosen(CollectiveKind::kAllReduce, 8, true, "shm_split").c_str(), "hier_allreduce_leaders");
  const size_t rails_broadcast = dist::kHierarchicalRailsMinBroadcastBytes;
  assert_string_equal(chosen(CollectiveKind::kBroadcast, rails_broadcast - 1, true).c_str(), "hier_broadcast_leaders");
  assert_string_equal(chosen(CollectiveKind::kBroadcast, rails_broadcast, true).c_str(), "hier_broadcast_rails");
  assert_string_equal(chosen(CollectiveKind::kBroadcast, rails_broadcast, false).c_str(), "hier_broadcast_leaders");
  assert_string_equal(chosen(CollectiveKind::kReduce, 1 << 20, true).c_str(), "hier_reduce_leaders");
  assert_string_equal(chosen(CollectiveKind::kAllGather, 8, true).c_str(), "hier_allgather_rails");
  assert_string_equal(chosen(CollectiveKind::kAllGather, 8, true, "", 2, true).c_str(), "hier_allgather_streamed");
  assert_string_equal(chosen(CollectiveKind::kAllGather, 8, false, "", 2, true).c_str(),
                      "hier_allgather_point_to_point");
  assert_string_equal(chosen(CollectiveKind::kAllGather, 8, false).c_str(), "hier_allgather_point_to_point");
  assert_string_equal(chosen(CollectiveKind::kReduceScatter, 8, true).c_str(), "hier_reduce_scatter_rails");
  assert_string_equal(chosen(CollectiveKind::kReduceScatter, 8, true, "", 2, true).c_str(),
                      "hier_reduce_scatter_streamed");
  assert_string_equal(chosen(CollectiveKind::kReduceScatter, 8, true, "", 3, true).c_str(),
                      "hier_reduce_scatter_rails");
  assert_string_equal(chosen(CollectiveKind::kReduceScatter, 8, false).c_str(), "hier_reduce_scatter_point_to_point");
  assert_string_equal(chosen(CollectiveKind::kAllToAll, 8, true).c_str(), "hier_alltoall_point_to_point");
  assert_string_equal(chosen(CollectiveKind::kBarrier, 0, false).c_str(), "hier_barrier_leaders");
  // The exchanges of split and setup run by messages only.
  expect_error(dist::Status::kInternal, "a split on the hierarchical path", "no algorithm on the hierarchical path",
                [&] { chosen(CollectiveKind::kSplit, 8, true); });
  assert_string_equal(dist::name(dist::Path::kHierarchical), "hierarchical");
  assert_int_equal(static_cast<int>(dist::Path::kHierarchical), DIST_COMM_PATH_HIERARCHICAL);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_selection),
      cmocka_unit_test(test_selection_is_pinned),
      cmocka_unit_test(test_shared_memory_selection_is_pinned),
      cmocka_unit_test(test_learned_alternative),
      cmocka_unit_test(test_forced_names),
      cmocka_unit_test(test_hierarchical_selection),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
