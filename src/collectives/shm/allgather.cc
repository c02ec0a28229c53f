#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Each rank writes its block's chunk; everyone copies every block's chunk,
// its own from its input while the others arrive. With `single_copy` the
// blocks are read straight from the peers' buffers instead.
void shm_allgather(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, bool single_copy) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.step_bytes() / element;
  const int n = group.size();
  const int me = group.rank();
  auto* out = static_cast<unsigned char*>(recv);
  // In place (send == recv, or send at the own block) the own block is the input.
  unsigned char* own_block = out + static_cast<size_t>(me) * count * element;
  const bool in_place = send == recv || send == own_block;
  const auto* in = in_place ? own_block : static_cast<const unsigned char*>(send);
  const bool streamed = !in_place && streams_result(send, recv, static_cast<size_t>(n) * count * element);
  const size_t block_bytes = count * element;
  if (single_copy) {
    // Block q of the result is all of rank q's input.
    auto read_of = [&](int peer) { return PeerRead{0, out + static_cast<size_t>(peer) * block_bytes, block_bytes}; };
    auto copy_own = [&] {
      if (!in_place) write_result(own_block, in, block_bytes, streamed);
    };
    read_from_peers(group, in, read_of, copy_own);
    return;
  }
  group.rotate_slots(block_bytes);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    copy_chunk(group.my_area(bytes), in + first * element, bytes);
    group.arrive();
    if (!in_place) write_result(own_block + first * element, in + first * element, bytes, streamed);
    group.wait_arrived();
    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      write_result(out + (static_cast<size_t>(r) * count + first) * element, group.area(r, bytes), bytes, streamed);
    }
  });
}

}  // namespace dist
