// The rows: one table per collective kind, each algorithm once, in the order
// selection tries them. A row's size rule stands next to it; the numbers are
// in algorithm_thresholds.h.
#include "collectives/algorithm_table.h"

#include <iterator>

#include "base/dtype.h"
#include "base/numbers.h"
#include "base/status.h"
#include "collectives/algorithms/allgather_ring.h"
#include "collectives/algorithms/allreduce_rabenseifner.h"
#include "collectives/algorithms/allreduce_recursive_doubling.h"
#include "collectives/algorithms/allreduce_ring.h"
#include "collectives/algorithms/alltoall_pairwise.h"
#include "collectives/algorithms/alltoallv_pairwise.h"
#include "collectives/algorithms/barrier_dissemination.h"
#include "collectives/algorithms/broadcast_binomial.h"
#include "collectives/algorithms/broadcast_scatter_allgather.h"
#include "collectives/algorithms/reduce_binomial.h"
#include "collectives/algorithms/reduce_scatter_ring.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/shm/algorithms.h"

namespace dist {
namespace {

// The call's fields as the algorithms take them.
size_t count_of(const AlgorithmRun& r) { return static_cast<size_t>(r.call.signature.count); }
DType dtype_of(const AlgorithmRun& r) { return r.call.signature.dtype; }
ReduceOp op_of(const AlgorithmRun& r) { return r.call.signature.op; }
int root_of(const AlgorithmRun& r) { return r.call.signature.root; }

bool always(const Selection&) { return true; }

size_t rabenseifner_max_bytes(int ranks) {
  return is_power_of_two(ranks) ? kRabenseifnerMaxBytes : kRabenseifnerFoldedMaxBytes;
}

constexpr Path kP2P = Path::kPointToPoint;
constexpr Path kShm = Path::kSharedMemory;
constexpr Path kHier = Path::kHierarchical;

bool rails_for_all_reduce(const Selection& s) {
  return s.even_hosts && (s.forced || s.bytes > kHierarchicalLeadersMaxBytes);
}

// Two hosts of as many ranks each, whose ranks reach each other's memory.
bool streams_between_two_hosts(const Selection& s) { return s.even_hosts && s.hosts == 2 && s.single_copy; }

bool streams_all_reduce(const Selection& s) {
  return streams_between_two_hosts(s) && (s.forced || s.bytes > kHierarchicalLeadersMaxBytes);
}

const AlgorithmRow kAllReduce[] = {
    {Algorithm::kShmAllReduceDirect, "shm_direct", kShm,
     "every rank combines the whole message itself: one announcement per step",
     [](const Selection& s) { return !s.pieces && (s.forced || s.bytes <= kShmDirectMaxBytes); }, "shm_direct", 0,
     [](const AlgorithmRun& r) {
       shm_allreduce_direct(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r));
     }},
    {Algorithm::kShmAllReduceReadWrite, "shm_read_write", kShm,
     "rank r reads slice r of every peer's input, combines it and writes it into every peer's result",
     takes_read_write, "shm_read_write", 0,
     [](const AlgorithmRun& r) {
       shm_allreduce_read_write(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r));
     }},
    {Algorithm::kShmAllReduceSplitSingleCopy, "shm_split_single_copy", kShm,
     "rank r combines slice r and writes it straight into every peer's result",
     [](const Selection& s) { return !s.pieces && takes_split_write(s); }, "shm_split", 0,
     [](const AlgorithmRun& r) {
       shm_allreduce_split_write(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r));
     }},
    {Algorithm::kShmAllReduceSplit, "shm_split", kShm,
     "rank r combines slice r and everyone copies the finished slices; also in pieces", always, "shm_split", 0,
     [](const AlgorithmRun& r) {
       if (r.call.pieces != nullptr) {
         shm_allreduce_split(*r.group, *r.call.pieces, *r.call.sink, dtype_of(r), op_of(r), r.call.finish);
       } else {
         shm_allreduce_split(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r));
       }
     }},
    {Algorithm::kHierAllReduceStreamed, "hier_allreduce_streamed", kHier,
     "two hosts: each rank sums its block in the host chunk by chunk while the last chunks cross to the other host",
     streams_all_reduce, "hier_streamed", 0,
     [](const AlgorithmRun& r) { hier_allreduce_streamed(*r.hierarchy, r.call); }},
    {Algorithm::kHierAllReduceRails, "hier_allreduce_rails", kHier,
     "reduce-scatter in the host, all-reduce of each rank's shard on its rail, all-gather in the host",
     rails_for_all_reduce, "hier_rails", 0, [](const AlgorithmRun& r) { hier_allreduce_rails(*r.hierarchy, r.call); }},
    {Algorithm::kHierAllReduceLeaders, "hier_allreduce_leaders", kHier,
     "reduce to local rank 0, all-reduce between one rank per host, broadcast in the host", always, "hier_leaders",
     0, [](const AlgorithmRun& r) { hier_allreduce_leaders(*r.hierarchy, r.call); }},
    {Algorithm::kAllReduceRing, "ring", kP2P, "reduce-scatter and all-gather around a ring: 2(n-1) steps",
     [](const Selection& s) { return s.forced || s.bytes > rabenseifner_max_bytes(s.ranks); }, "ring", 1,
     [](const AlgorithmRun& r) {
       allreduce_ring(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r), *r.options);
     }},
    {Algorithm::kAllReduceRabenseifner, "rabenseifner", kP2P,
     "recursive halving then doubling: log2(n) steps each way, moving the message about twice",
     [](const Selection& s) {
       return s.forced || (s.bytes > kRecursiveDoublingMaxBytes && s.bytes <= rabenseifner_max_bytes(s.ranks));
     },
     "rabenseifner", 2,
     [](const AlgorithmRun& r) {
       allreduce_rabenseifner(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r), *r.options);
     }},
    {Algorithm::kAllReduceRecursiveDoubling, "recursive_doubling", kP2P,
     "log2(n) exchanges of the whole message: the fewest steps",
     [](const Selection& s) { return s.forced || s.bytes <= kRecursiveDoublingMaxBytes; }, "recursive_doubling", 3,
     [](const AlgorithmRun& r) {
       allreduce_recursive_doubling(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r),
                                    *r.options);
     }},
};

const AlgorithmRow kReduce[] = {
    {Algorithm::kShmReduce, "shm", kShm, "the root combines every rank's slot", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_reduce(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r), root_of(r));
     }},
    {Algorithm::kHierReduceLeaders, "hier_reduce_leaders", kHier,
     "reduce in each host to one rank (the root on its own), then between those to the root", always, nullptr, 0,
     [](const AlgorithmRun& r) { hier_reduce_leaders(*r.hierarchy, r.call); }},
    {Algorithm::kReduceBinomial, "reduce_binomial", kP2P, "a binomial tree towards the root", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       reduce_binomial(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r), root_of(r),
                       *r.options);
     }},
};

const AlgorithmRow kBroadcast[] = {
    {Algorithm::kShmBroadcastSingleCopy, "shm_single_copy", kShm,
     "each rank reads most of the root's buffer itself while the root writes the rest into theirs",
     [](const Selection& s) { return takes_single_copy(s, CollectiveKind::kBroadcast); }, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_broadcast_single_copy(*r.group, r.call.recv, count_of(r), dtype_of(r), root_of(r));
     }},
    {Algorithm::kShmBroadcast, "shm", kShm,
     "the root writes each chunk once (from 64 KiB with the stores its recent calls found faster); the others copy "
     "it out",
     always, nullptr, 0,
     [](const AlgorithmRun& r) { shm_broadcast(*r.group, r.call.recv, count_of(r), dtype_of(r), root_of(r)); }},
    {Algorithm::kHierBroadcastRails, "hier_broadcast_rails", kHier,
     "the root's host shares the message; each rail carries a block of it to the other hosts, which gather them",
     [](const Selection& s) { return s.even_hosts && s.bytes >= kHierarchicalRailsMinBroadcastBytes; }, nullptr, 0,
     [](const AlgorithmRun& r) { hier_broadcast_rails(*r.hierarchy, r.call); }},
    {Algorithm::kHierBroadcastLeaders, "hier_broadcast_leaders", kHier,
     "the root sends to one rank per host, which shares it in its host", always, nullptr, 0,
     [](const AlgorithmRun& r) { hier_broadcast_leaders(*r.hierarchy, r.call); }},
    {Algorithm::kBroadcastScatterAllGather, "broadcast_scatter_allgather", kP2P,
     "the root scatters the message and a ring all-gathers it: the root sends it about once",
     [](const Selection& s) { return s.ranks > 2 && s.bytes >= kScatterAllGatherMinBytes; }, nullptr, 0,
     [](const AlgorithmRun& r) {
       broadcast_scatter_allgather(*r.channel, r.call.recv, count_of(r), dtype_of(r), root_of(r), *r.options);
     }},
    {Algorithm::kBroadcastBinomial, "broadcast_binomial", kP2P, "a binomial tree from the root", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       broadcast_binomial(*r.channel, r.call.recv, count_of(r), dtype_of(r), root_of(r), *r.options);
     }},
};

const AlgorithmRow kAllGather[] = {
    {Algorithm::kShmAllGatherSingleCopy, "shm_single_copy", kShm, "every rank reads every peer's block itself",
     [](const Selection& s) { return takes_single_copy(s, CollectiveKind::kAllGather); }, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_allgather(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), true);
     }},
    {Algorithm::kShmAllGather, "shm", kShm, "each rank writes its block's chunk; everyone copies every block",
     always, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_allgather(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), false);
     }},
    {Algorithm::kHierAllGatherStreamed, "hier_allgather_streamed", kHier,
     "two hosts: each rank trades its block with its counterpart chunk by chunk and writes both into its host peers'",
     streams_between_two_hosts, nullptr, 0,
     [](const AlgorithmRun& r) { hier_allgather_streamed(*r.hierarchy, r.call); }},
    {Algorithm::kHierAllGatherRails, "hier_allgather_rails", kHier,
     "all-gather on the rails, then in the host straight into the result",
     [](const Selection& s) { return s.even_hosts; }, nullptr, 0,
     [](const AlgorithmRun& r) { hier_allgather_rails(*r.hierarchy, r.call); }},
    {Algorithm::kHierAllGatherPointToPoint, "hier_allgather_point_to_point", kHier,
     "uneven hosts: the point-to-point all-gather over all ranks", always, nullptr, 0,
     [](const AlgorithmRun& r) { hier_point_to_point(*r.hierarchy, r.call); }},
    {Algorithm::kAllGatherRing, "allgather_ring", kP2P, "blocks passed around a ring: n-1 steps", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       allgather_ring(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), *r.options);
     }},
};

const AlgorithmRow kReduceScatter[] = {
    {Algorithm::kShmReduceScatter, "shm", kShm, "rank r combines block r of every rank's slot", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_reduce_scatter(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r));
     }},
    {Algorithm::kHierReduceScatterStreamed, "hier_reduce_scatter_streamed", kHier,
     "two hosts: each rank sums its and its counterpart's blocks in the host while the last chunks cross",
     streams_between_two_hosts, nullptr, 0,
     [](const AlgorithmRun& r) { hier_reduce_scatter_streamed(*r.hierarchy, r.call); }},
    {Algorithm::kHierReduceScatterRails, "hier_reduce_scatter_rails", kHier,
     "reduce-scatter in the host of what each rail delivers, then on the rails",
     [](const Selection& s) { return s.even_hosts; }, nullptr, 0,
     [](const AlgorithmRun& r) { hier_reduce_scatter_rails(*r.hierarchy, r.call); }},
    {Algorithm::kHierReduceScatterPointToPoint, "hier_reduce_scatter_point_to_point", kHier,
     "uneven hosts: the point-to-point reduce-scatter over all ranks", always, nullptr, 0,
     [](const AlgorithmRun& r) { hier_point_to_point(*r.hierarchy, r.call); }},
    {Algorithm::kReduceScatterRing, "reduce_scatter_ring", kP2P, "partial sums passed around a ring: n-1 steps",
     always, nullptr, 0,
     [](const AlgorithmRun& r) {
       reduce_scatter_ring(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), op_of(r), *r.options);
     }},
};

const AlgorithmRow kAllToAll[] = {
    {Algorithm::kShmAllToAllSingleCopy, "shm_single_copy", kShm, "every rank reads its block of every peer's buffer",
     [](const Selection& s) { return !s.in_place && takes_single_copy(s, CollectiveKind::kAllToAll); }, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_alltoall(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), true);
     }},
    {Algorithm::kShmAllToAll, "shm", kShm, "each rank's slot holds a part for every rank", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       shm_alltoall(*r.group, r.call.send, r.call.recv, count_of(r), dtype_of(r), false);
     }},
    {Algorithm::kHierAllToAllPointToPoint, "hier_alltoall_point_to_point", kHier,
     "the point-to-point all-to-all over all ranks: every block crosses once anyway", always, nullptr, 0,
     [](const AlgorithmRun& r) { hier_point_to_point(*r.hierarchy, r.call); }},
    {Algorithm::kAllToAllPairwise, "alltoall_pairwise", kP2P, "n-1 pairwise exchanges", always, nullptr, 0,
     [](const AlgorithmRun& r) {
       alltoall_pairwise(*r.channel, r.call.send, r.call.recv, count_of(r), dtype_of(r), *r.options);
     }},
};

// Every path's communicator runs it over its channel (Communicator::path_for).
const AlgorithmRow kAllToAllV[] = {
    {Algorithm::kAllToAllVPairwise, "alltoallv_pairwise", kP2P, "n-1 pairwise exchanges of blocks of any size",
     always, nullptr, 0,
     [](const AlgorithmRun& r) {
       alltoallv_pairwise(*r.channel, r.call.send, r.call.recv, dtype_of(r), *r.call.blocks);
     }},
};

const AlgorithmRow kBarrier[] = {
    {Algorithm::kShmBarrier, "shm", kShm, "one step of the group", always, nullptr, 0,
     [](const AlgorithmRun& r) { shm_barrier(*r.group); }},
    {Algorithm::kHierBarrierLeaders, "hier_barrier_leaders", kHier,
     "in the host, between one rank per host, and in the host again", always, nullptr, 0,
     [](const AlgorithmRun& r) { hier_barrier_leaders(*r.hierarchy, r.call); }},
    {Algorithm::kBarrierDissemination, "barrier_dissemination", kP2P, "log2(n) rounds of empty messages", always,
     nullptr, 0, [](const AlgorithmRun& r) { barrier_dissemination(*r.channel); }},
};

struct Table {
  const AlgorithmRow* rows;
  size_t size;
  const AlgorithmRow* begin() const { return rows; }
  const AlgorithmRow* end() const { return rows + size; }
};

template <size_t N>
constexpr Table table(const AlgorithmRow (&rows)[N]) {
  static_assert(N <= 32, "ForcedAllReduce::rows has a bit per row");
  return {rows, N};
}

// Indexed by CollectiveKind, up to kBarrier; the kinds after it are mapped by table_of.
const Table kTables[] = {table(kAllReduce), table(kReduce),    table(kBroadcast), table(kAllGather),
                         table(kReduceScatter), table(kAllToAll), table(kBarrier), table(kAllToAllV)};

Table table_of(CollectiveKind kind, Path path) {
  // The exchanges of dist_comm_split and of a new communicator gather, by
  // messages only.
  if (kind == CollectiveKind::kSplit || kind == CollectiveKind::kCommSetup) {
    if (path != Path::kPointToPoint) return {nullptr, 0};
    kind = CollectiveKind::kAllGather;
  }
  const auto index = kind == CollectiveKind::kAllToAllV ? std::size(kTables) - 1 : static_cast<size_t>(kind);
  if (index >= std::size(kTables)) {
    fail(Status::kInternal, "collective kind " + std::to_string(static_cast<int>(kind)) + " is not valid");
  }
  return kTables[index];
}

// A path, and the name that forces an all-reduce onto it (by size there).
struct PathRow {
  Path path;
  const char* name;
  const char* forced_as;
  int32_t option;  // DIST_ALLREDUCE_* that forces it, 0 for none
};

const PathRow kPaths[] = {
    {Path::kSelf, "self", nullptr, 0},
    {Path::kPointToPoint, "point_to_point", nullptr, 0},
    {Path::kSharedMemory, "shared_memory", "shm", 4},
    {Path::kHierarchical, "hierarchical", "hierarchical", 5},
    {Path::kNccl, "nccl", nullptr, 0},
    {Path::kStaged, "staged", nullptr, 0},
};

}  // namespace

const char* name(Path path) {
  for (const PathRow& row : kPaths) {
    if (row.path == path) return row.name;
  }
  return "unknown path";
}

bool takes_single_copy(const Selection& s, CollectiveKind kind) {
  if (!s.single_copy) return false;
  if (s.bytes < (s.shares_cores ? kSingleCopyMinBytesSharedCores : kSingleCopyMinBlockBytes)) return false;
  switch (kind) {
    case CollectiveKind::kAllGather:
      return s.bytes <= kSingleCopyMaxBytes;
    case CollectiveKind::kAllToAll:
      return !s.shares_cores || s.bytes <= kSingleCopyMaxBytes;
    case CollectiveKind::kBroadcast:
      // With more ranks than cores the readers and the writing root queue
      // for the same cores; with a core each, from 32 KiB, one copy by all of
      // them at once took 0.27-0.64 of the slots' time (bench/README.md).
      return !s.shares_cores;
    default:
      return false;
  }
}

bool takes_read_write(const Selection& s) {
  return !s.pieces && s.single_copy &&
         (s.forced || (s.in_place && !s.shares_cores && s.bytes >= kReadWriteMinBytes));
}

bool takes_split_write(const Selection& s) {
  const size_t most = s.in_place ? (s.shares_cores ? kSplitWriteMaxBytesInPlaceSharedCores : kSplitWriteMaxBytesInPlace)
                                 : (s.shares_cores ? kSplitWriteMaxBytesSharedCores : kSplitWriteMaxBytes);
  return s.single_copy && s.bytes >= kSplitWriteMinBytes && s.bytes <= most;
}

const AlgorithmRow& select_algorithm(CollectiveKind kind, Path path, Selection selection,
                                     const ForcedAllReduce& forced) {
  const Table rows = table_of(kind, path);
  if (forced.rows != 0 && kind == CollectiveKind::kAllReduce) {
    Selection any_size = selection;
    any_size.forced = true;
    for (size_t i = 0; i < rows.size; ++i) {
      const AlgorithmRow& row = rows.rows[i];
      if ((forced.rows >> i & 1) != 0 && row.path == path && row.applies(any_size)) return row;
    }
  }
  for (const AlgorithmRow& row : rows) {
    if (row.path == path && row.applies(selection)) return row;
  }
  fail(Status::kInternal, std::string(name(kind)) + " has no algorithm on the " + name(path) + " path");
}

const AlgorithmRow* learned_alternative(CollectiveKind kind, const AlgorithmRow& chosen, const Selection& s,
                                        const ForcedAllReduce& forced) {
  if (kind != CollectiveKind::kAllReduce || forced.rows != 0) return nullptr;
  // The split's own rule (takes_split_write) has already said single copies,
  // no pieces and at most kSplitWriteMaxBytes.
  if (chosen.id != Algorithm::kShmAllReduceSplitSingleCopy || s.in_place || s.shares_cores) return nullptr;
  for (const AlgorithmRow& row : kAllReduce) {
    if (row.id == Algorithm::kShmAllReduceReadWrite) return &row;
  }
  return nullptr;
}

bool find_forced_all_reduce(const std::string& name, ForcedAllReduce* forced) {
  ForcedAllReduce found;
  if (!name.empty()) {
    for (const PathRow& row : kPaths) {
      if (row.forced_as != nullptr && name == row.forced_as) {
        found.any = true;
        found.path = row.path;
      }
    }
    for (size_t i = 0; i < std::size(kAllReduce); ++i) {
      const AlgorithmRow& row = kAllReduce[i];
      if (row.forced_as != nullptr && name == row.forced_as) {
        found.any = true;
        found.path = row.path;
        found.rows |= uint32_t{1} << i;
      }
    }
    if (!found.any) return false;
  }
  *forced = found;
  return true;
}

const char* forced_all_reduce_name(int32_t option) {
  if (option == 0) return "";
  for (const PathRow& row : kPaths) {
    if (row.option == option) return row.forced_as;
  }
  for (const AlgorithmRow& row : kAllReduce) {
    if (row.option == option) return row.forced_as;
  }
  return nullptr;
}

std::string forced_all_reduce_names(const Path* path, const char* quote, const char* separator) {
  std::string names;
  auto add = [&](const char* name) {
    const std::string quoted_name = std::string(quote) + name + quote;
    if (names.find(quoted_name) != std::string::npos) return;  // rows forced together: named once
    if (!names.empty()) names += separator;
    names += quoted_name;
  };
  for (const PathRow& p : kPaths) {
    if (path != nullptr && p.path != *path) continue;
    if (p.forced_as != nullptr) add(p.forced_as);
    for (const AlgorithmRow& row : kAllReduce) {
      if (row.path == p.path && row.forced_as != nullptr) add(row.forced_as);
    }
  }
  return names;
}

ForcedAllReduce forced_point_to_point(const std::string& name) {
  ForcedAllReduce forced;
  if (!find_forced_all_reduce(name, &forced) || (forced.any && forced.path != Path::kPointToPoint)) {
    const Path point_to_point = Path::kPointToPoint;
    fail_invalid("all-reduce algorithm " + quoted(name) + " is not one of " +
                 forced_all_reduce_names(&point_to_point, "'", ", "));
  }
  return forced;
}

const char* name(Algorithm algorithm) {
  for (const Table& rows : kTables) {
    for (const AlgorithmRow& row : rows) {
      if (row.id == algorithm) return row.name;
    }
  }
  return "unknown algorithm";
}

}  // namespace dist
