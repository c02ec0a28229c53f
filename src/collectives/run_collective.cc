// run_collective: checks a call's buffers against its kind, takes the
// point-to-point row of the table of algorithms (algorithm_table.h) that
// applies, runs it, and turns a SUM into a MEAN where the result lives.
#include "collectives/run_collective.h"

#include "base/status.h"
#include "collectives/call_check.h"
#include "collectives/reduce_kernels.h"

namespace dist {

void run_collective(Channel& channel, const CollectiveCall& call, const AlgorithmOptions& options,
                    const ForcedAllReduce& forced, const AlgorithmRow** ran) {
  // Every argument first: an algorithm must not fail halfway for a reason
  // local to one rank, leaving its peers waiting.
  check_call(channel.size(), channel.rank(), call);
  const CallSignature& s = call.signature;
  const int n = channel.size();
  const size_t count = static_cast<size_t>(s.count);
  Selection selection;
  selection.bytes = s.kind == CollectiveKind::kBarrier ? 0 : count * size_of(s.dtype);
  selection.ranks = n;
  const AlgorithmRow& row = select_algorithm(s.kind, Path::kPointToPoint, selection, forced);
  if (ran != nullptr) *ran = &row;
  row.run({call, &channel, nullptr, &options, nullptr});

  // MEAN was combined as SUM; divide where the result lives.
  if (s.op != ReduceOp::MEAN || n == 1 || !reduces(s.kind)) return;
  if (s.kind == CollectiveKind::kReduce && channel.rank() != s.root) return;
  finalize_mean(call.recv, count, s.dtype, n);
}

}  // namespace dist
