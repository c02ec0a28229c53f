#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// A step's slot holds the same chunk of each block this rank sends, block b
// (bound for rank b) in part b; rank r copies part r of every slot, and its own
// block straight from its input while the others arrive. In place, a step
// reads and writes the same positions, read before anyone writes.
void shm_alltoall(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, bool single_copy) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  const int me = group.rank();
  const size_t per_step = group.step_bytes() / element / static_cast<size_t>(n);
  const size_t part_bytes = place_slot_parts(group, count, per_step, element);
  auto* out = static_cast<unsigned char*>(recv);
  const auto* in = static_cast<const unsigned char*>(send);
  const bool streamed = streams_result(send, recv, static_cast<size_t>(n) * count * element);
  const size_t my_part = static_cast<size_t>(me) * part_bytes;
  // With `single_copy` (out of place only: in place a rank's buffer changes
  // while the peers would read it) blocks are read straight from the peers'
  // buffers, block `me` of each.
  const size_t block_bytes = count * element;
  const BlockLayout blocks(count * static_cast<size_t>(n), n);
  if (single_copy) {
    // Block q of the result is block `me` of rank q's input.
    const size_t own = static_cast<size_t>(me) * block_bytes;
    auto read_of = [&](int peer) { return PeerRead{own, out + static_cast<size_t>(peer) * block_bytes, block_bytes}; };
    auto copy_own = [&] { write_result(out + own, in + own, block_bytes, streamed); };
    read_from_peers(group, in, read_of, copy_own);
    return;
  }
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    const size_t own = (static_cast<size_t>(me) * count + first) * element;
    copy_blocks_in(group, in, blocks, first, per_step, element, part_bytes);
    group.arrive();
    if (out != in && elements > 0) write_result(out + own, in + own, bytes, streamed);
    group.wait_arrived();
    for (int r = 0; r < n && elements > 0; ++r) {
      if (r == me) continue;
      write_result(out + (static_cast<size_t>(r) * count + first) * element, group.slot(r) + my_part, bytes, streamed);
    }
  });
}

}  // namespace dist
