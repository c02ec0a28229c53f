#include <algorithm>
#include <optional>

#include "collectives/algorithm_thresholds.h"
#include "collectives/algorithms/block_layout.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/store_choice.h"

namespace dist {

// The split all-reduce (allreduce_split.cc) with each rank's reduced slice
// written straight into every peer's result (process_vm_writev) instead of
// through its slot. Per step, with the chunk cut into n slices and rank r
// owning slice r:
//   1. each rank copies into its slot only the slices the others own (for
//      the next step already once it has combined its own);
//   2. rank r combines slice r of everyone (its own straight from its input)
//      into its own result, and writes it into each peer's result.
// Nothing is copied out of a slot, so per rank and element that is about 3.5
// bytes of memory traffic per byte of message against 4.5 for the split into
// a separate result (copy in, combine, copy out of the own slot and of the
// others'), and no second announcement per step: a peer arrives at the next
// step only once it has combined this one, which is when this rank's slot may
// be rewritten. A last step tells every rank that the peers' writes into its
// result are done, and whether all succeeded.
//
// In place too: a peer writes slice p of step s into this rank's buffer only
// once this rank has arrived at step s, by which time it has copied that
// slice of its input into its slot, and it never reads those elements again.
// Steps are whole slots either way.
void shm_allreduce_split_write(ShmGroup& group, const PieceList& input, void* recv, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const size_t count = input.count();
  const int n = group.size();
  const int me = group.rank();
  auto* out = static_cast<unsigned char*>(recv);
  const void* inputs[kShmMaxRanks];
  // Where each rank's result starts: published with the first step, and
  // read once it is over (later steps' records hold other things).
  publish_address(group, recv);
  uintptr_t results[kShmMaxRanks];
  bool results_known = false;
  SingleCopyOutcome outcome;
  std::optional<ChosenStores> stores;
  if (count * element >= kChosenCopyInStoresMinBytes) stores.emplace(group.copy_in_stores(), count * element);
  const bool streamed = stores && stores->streamed();
  copy_others_slices(group, input, group.my_slot(), 0, per_step, streamed);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const BlockLayout slices(elements, n);
    group.arrive_and_wait();
    if (!results_known) {
      for (int r = 0; r < n; ++r) results[r] = published_address(group, r);
      results_known = true;
    }
    const size_t mine = (first + slices.offset(me)) * element;
    const size_t bytes = slices.size(me) * element;
    input.for_each_part(first + slices.offset(me), slices.size(me), [&](const unsigned char* data, size_t at, size_t k) {
      for (int r = 0; r < n; ++r) inputs[r] = r == me ? data : group.slot(r) + (slices.offset(me) + at) * element;
      reduce_many(out + mine + at * element, inputs, static_cast<size_t>(n), k, dtype, op);
    });
    if (op == ReduceOp::MEAN) finalize_mean(out + mine, slices.size(me), dtype, n);
    // Each rank starts with the next one: two ranks do not write to the same peer at once.
    for (int k = 1; k < n && outcome.error == 0 && bytes > 0; ++k) {
      const int peer = (me + k) % n;
      auto* theirs = reinterpret_cast<void*>(results[peer] + mine);
      outcome.error = group.write_to(peer, theirs, out + mine, bytes);
      if (outcome.error != 0) outcome.peer = peer;
    }
    if (first + elements < count) {
      copy_others_slices(group, input, group.my_next_slot(), first + elements, per_step, streamed);
    }
  });
  end_single_copies(group, outcome, "write to");
  if (stores) stores->finished();
}

void shm_allreduce_split_write(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const Piece whole{send, count};
  shm_allreduce_split_write(group, PieceList(&whole, 1, size_of(dtype)), recv, dtype, op);
}

}  // namespace dist
