#include "collectives/shm/run_shm.h"

#include "collectives/call_check.h"

namespace dist {

Selection shm_selection(const ShmGroup& group, size_t bytes, bool in_place) {
  Selection selection;
  selection.bytes = bytes;
  selection.ranks = group.size();
  selection.in_place = in_place;
  selection.single_copy = group.single_copy();
  selection.shares_cores = group.shares_cores();
  return selection;
}

void run_shm_collective(ShmGroup& group, const CollectiveCall& call, uint64_t seq, std::chrono::milliseconds timeout,
                        const ForcedAllReduce& forced, const AlgorithmRow** ran) {
  const CallSignature& s = call.signature;
  check_call(group.size(), group.rank(), call);
  group.begin(s, seq, timeout);
  run_shm_algorithm(group, call, forced, ran);
}

void run_shm_algorithm(ShmGroup& group, const CollectiveCall& call, const ForcedAllReduce& forced,
                       const AlgorithmRow** ran) {
  const CallSignature& s = call.signature;
  const size_t bytes = s.kind == CollectiveKind::kBarrier ? 0 : static_cast<size_t>(s.count) * size_of(s.dtype);
  Selection selection = shm_selection(group, bytes, call.send == call.recv);
  selection.pieces = call.pieces != nullptr;
  const AlgorithmRow& row = select_algorithm(s.kind, Path::kSharedMemory, selection, forced);
  const AlgorithmRow* other = learned_alternative(s.kind, row, selection, forced);
  if (other == nullptr) {
    if (ran != nullptr) *ran = &row;
    row.run({call, nullptr, &group, nullptr, nullptr});
    return;
  }
  // Every rank takes the row rank 0 decided for this call (agreed_choice.h).
  AgreedChoice& choice = group.all_reduce_choice();
  const AgreedChoice::Call agreed = choice.begin(group.call_index(), bytes);
  const AlgorithmRow& taken = agreed.second ? *other : row;
  if (ran != nullptr) *ran = &taken;
  taken.run({call, nullptr, &group, nullptr, nullptr});
  choice.finished(agreed);
}

}  // namespace dist
