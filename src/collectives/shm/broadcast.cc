#include <algorithm>
#include <cstring>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// The root writes each chunk once; every other rank copies it out. With
// `single_copy` the message is read straight from the root's buffer instead.
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root, bool single_copy) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.step_bytes() / element;
  const bool at_root = group.rank() == root;
  auto* data = static_cast<unsigned char*>(buffer);
  const size_t bytes = count * element;
  if (single_copy) {
    auto read_of = [&](int peer) { return !at_root && peer == root ? PeerRead{0, data, bytes} : PeerRead{}; };
    auto nothing = [] {};
    read_from_peers(group, data, read_of, nothing);
    return;
  }
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    if (at_root) copy_chunk(group.my_area(bytes), data + first * element, bytes);
    group.arrive_and_wait();
    if (!at_root) copy_chunk(data + first * element, group.area(root, bytes), bytes);
  });
}

}  // namespace dist
