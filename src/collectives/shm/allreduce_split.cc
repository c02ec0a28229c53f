#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/algorithms/block_layout.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Per step, with the chunk cut into n slices and rank r owning slice r:
//   1. each rank copies into its slot only the slices the others own (for the
//      next step already while it waits for the others in step 2);
//   2. rank r combines slice r of everyone (its own straight from its input),
//      writes the result to its output and to its slot;
//   3. each rank copies the other slices' results from their owners' slots.
// Per rank and element that is about 4 bytes of memory traffic per byte of
// message (copy in (n-1)/n, combine, copy out (n-1)/n), against 5 for a
// direct combine of whole slots, and only (n-1)/n of it crosses cores.
void shm_allreduce_split(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.slot_bytes() / element;
  const int n = group.size();
  const int me = group.rank();
  const void* inputs[kShmMaxRanks];
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  // A large result goes to memory with streaming stores, through a cached slice.
  const bool streamed = count * element >= kStreamStoreMinBytes;
  std::vector<unsigned char> scratch(streamed ? BlockLayout(per_step, n).largest() * element : 0);
  // Copies into `slot` the slices of the chunk at `first` that the others combine.
  auto copy_in = [&](unsigned char* slot, size_t first) {
    const size_t elements = std::min(per_step, count - first);
    const BlockLayout slices(elements, n);
    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      const size_t at = slices.offset(r) * element;
      copy_chunk(slot + at, in + (first + slices.offset(r)) * element, slices.size(r) * element);
    }
  };
  copy_in(group.my_slot(), 0);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const BlockLayout slices(elements, n);
    const unsigned char* chunk_in = in + first * element;
    unsigned char* chunk_out = out + first * element;
    unsigned char* slot = group.my_slot();
    group.arrive_and_wait();

    const size_t mine = slices.offset(me) * element;
    const size_t mine_bytes = slices.size(me) * element;
    for (int r = 0; r < n; ++r) inputs[r] = r == me ? chunk_in + mine : group.slot(r) + mine;
    // In place, the own slice of the input is the output: reduce_many allows that.
    unsigned char* result = streamed ? scratch.data() : chunk_out + mine;
    reduce_many(result, inputs, static_cast<size_t>(n), slices.size(me), dtype, op);
    if (op == ReduceOp::MEAN) finalize_mean(result, slices.size(me), dtype, n);
    copy_chunk(slot + mine, result, mine_bytes);
    if (streamed) stream_store(chunk_out + mine, result, mine_bytes);
    group.publish_reduced();
    // While the others finish combining, read the next step's input: the
    // memory traffic overlaps the wait instead of following it.
    if (first + elements < count) copy_in(group.my_next_slot(), first + elements);
    group.wait_reduced();

    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      const size_t at = slices.offset(r) * element;
      if (streamed) {
        stream_store(chunk_out + at, group.slot(r) + at, slices.size(r) * element);
      } else {
        copy_chunk(chunk_out + at, group.slot(r) + at, slices.size(r) * element);
      }
    }
  });
}

}  // namespace dist
