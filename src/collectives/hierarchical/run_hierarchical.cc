#include "collectives/hierarchical/run_hierarchical.h"

#include "collectives/call_check.h"

namespace dist {

Selection hierarchical_selection(const Hierarchy& h, size_t bytes) {
  Selection selection;
  selection.bytes = bytes;
  selection.ranks = h.size();
  selection.even_hosts = h.even();
  selection.hosts = h.num_hosts();
  selection.single_copy = h.host_group() != nullptr && h.host_group()->single_copy();
  return selection;
}

void run_hierarchical_collective(Hierarchy& h, const CollectiveCall& call, uint64_t seq,
                                 std::chrono::milliseconds timeout, const AlgorithmOptions& options,
                                 const ForcedAllReduce& forced, const AlgorithmRow** ran) {
  check_call(h.size(), h.rank(), call);
  const CallSignature& s = call.signature;
  h.begin(s, seq, timeout, options);
  const size_t bytes = s.kind == CollectiveKind::kBarrier ? 0 : static_cast<size_t>(s.count) * size_of(s.dtype);
  Selection selection = hierarchical_selection(h, bytes);
  selection.in_place = call.send == call.recv;
  const AlgorithmRow& row = select_algorithm(s.kind, Path::kHierarchical, selection, forced);
  if (ran != nullptr) *ran = &row;
  row.run({call, nullptr, nullptr, nullptr, &h});
}

}  // namespace dist
