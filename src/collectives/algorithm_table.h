// The table of paths and algorithms: one table per collective kind, one row
// per algorithm, with its id, its name (what dist_comm_algorithm returns),
// its path, what it does, when it applies and how it is forced, and the
// function that runs it. Selection is this data: the first row of the call's
// kind and path that applies runs. dist_comm_algorithm, dist_comm_path,
// dist_comm_configure, DIST_ALLREDUCE_ALGO and dist-bench's --algo read it.
// Adding an algorithm is its own file and one row in algorithm_table.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectives/algorithm_thresholds.h"
#include "collectives/collective_call.h"
#include "collectives/path.h"
#include "collectives/signature.h"

namespace dist {

class Channel;
class Hierarchy;
class ShmGroup;

enum class Algorithm {
  kAllReduceRing,
  kAllReduceRabenseifner,
  kAllReduceRecursiveDoubling,
  kReduceBinomial,
  kBroadcastBinomial,
  kBroadcastScatterAllGather,
  kAllGatherRing,
  kReduceScatterRing,
  kAllToAllPairwise,
  kAllToAllVPairwise,
  kBarrierDissemination,
  kShmAllReduceDirect,
  kShmAllReduceReadWrite,
  kShmAllReduceSplitSingleCopy,
  kShmAllReduceSplit,
  kShmReduce,
  kShmBroadcast,
  kShmBroadcastSingleCopy,
  kShmAllGatherSingleCopy,
  kShmAllGather,
  kShmReduceScatter,
  kShmAllToAllSingleCopy,
  kShmAllToAll,
  kShmBarrier,
  kHierAllReduceStreamed,
  kHierAllReduceRails,
  kHierAllReduceLeaders,
  kHierReduceLeaders,
  kHierBroadcastRails,
  kHierBroadcastLeaders,
  kHierAllGatherStreamed,
  kHierAllGatherRails,
  kHierAllGatherPointToPoint,
  kHierReduceScatterStreamed,
  kHierReduceScatterRails,
  kHierReduceScatterPointToPoint,
  kHierAllToAllPointToPoint,
  kHierBarrierLeaders,
};

// What a row's predicate sees of a call: its size, its communicator, and
// what the path's group offers.
struct Selection {
  size_t bytes = 0;         // per rank (per block for all_gather, all_to_all)
  int ranks = 1;
  bool in_place = false;    // send == recv
  bool pieces = false;      // a piecewise all-reduce (CollectiveCall::pieces)
  bool single_copy = false; // shared memory: the ranks reach each other's memory (shm/single_copy.h)
  bool shares_cores = false;  // shared memory: more ranks than some rank has cores
  bool even_hosts = false;  // hierarchical: every host has as many ranks (the rails exist)
  int hosts = 1;            // hierarchical: how many hosts the ranks are on
  bool forced = false;      // the row's forced name was chosen: only what it can do counts, not size
};

// What a row's function runs over: the call, and the path's group.
struct AlgorithmRun {
  const CollectiveCall& call;
  Channel* channel;                  // point-to-point rows
  ShmGroup* group;                   // shared-memory rows
  const AlgorithmOptions* options;   // point-to-point rows: the pipeline chunk
  Hierarchy* hierarchy;              // hierarchical rows
};

struct AlgorithmRow {
  Algorithm id;
  const char* name;
  Path path;
  const char* description;
  bool (*applies)(const Selection& selection);
  // The name that forces it (DIST_ALLREDUCE_ALGO, AlgorithmOptions::all_reduce),
  // or null; rows that share a name are forced together, the first that
  // applies running. `option`: the C ABI's DIST_ALLREDUCE_* number for it, 0 for none.
  const char* forced_as;
  int32_t option;
  void (*run)(const AlgorithmRun& run);
};

// A forced all-reduce, resolved from its name once (when the options change),
// so that a call compares integers only.
struct ForcedAllReduce {
  bool any = false;     // false: AUTO
  Path path = Path::kPointToPoint;  // the path the name asks for
  uint32_t rows = 0;    // bit i: row i of the all-reduce table is forced
};

// The forced all-reduce `name` means ("" is AUTO); false for a name the table
// does not know.
bool find_forced_all_reduce(const std::string& name, ForcedAllReduce* forced);
// The name DIST_ALLREDUCE_* number `option` stands for ("" for AUTO), or null.
const char* forced_all_reduce_name(int32_t option);
// Every name find_forced_all_reduce knows on `path` (every path when null),
// in the table's order, each in `quote`s, joined by `separator`:
// "ring, rabenseifner, recursive_doubling, shm, shm_direct, shm_split, hierarchical".
std::string forced_all_reduce_names(const Path* path, const char* quote, const char* separator);

// The row that runs a call of `kind` on `path`: among the forced rows (when
// `forced` names rows of this kind and path) the first that can run it, else
// the first whose size rule applies. Throws kInternal where the path has no
// row for the kind.
const AlgorithmRow& select_algorithm(CollectiveKind kind, Path path, Selection selection,
                                     const ForcedAllReduce& forced);

// Where two rows can run a call and which is the faster depends on the
// machine's speed mode, so that a shared-memory group learns between them
// call by call (shm/agreed_choice.h): the other row for a call `selection`
// chose `chosen` for. Null where nothing is learned (forced rows among them).
// Today one pair: an out-of-place all-reduce from 256 KiB to 16 MiB with a
// core for every rank, the split writing into the peers' results or
// shm_read_write.
const AlgorithmRow* learned_alternative(CollectiveKind kind, const AlgorithmRow& chosen, const Selection& selection,
                                        const ForcedAllReduce& forced);

// The forced all-reduce for `name` when it is "" (AUTO) or a point-to-point
// algorithm; other names throw invalid-argument, listing those.
ForcedAllReduce forced_point_to_point(const std::string& name);

// "ring", "rabenseifner", "recursive_doubling", "reduce_binomial", "shm_direct", ...
const char* name(Algorithm algorithm);

// Whether the shared-memory group described by `selection` takes the single
// copy for a collective of `kind` with `bytes` per block, whether an
// all-reduce reads the peers' inputs and writes their results, and whether the
// split all-reduce writes into the peers' results (algorithm_thresholds.h).
bool takes_single_copy(const Selection& selection, CollectiveKind kind);
bool takes_read_write(const Selection& selection);
bool takes_split_write(const Selection& selection);

}  // namespace dist
