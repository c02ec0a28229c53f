#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// The root writes each chunk once into its slot; every other rank copies it
// out. With `streamed` the root's writes are non-temporal (stream_store):
// they skip the cache-line reads that an ordinary store to a line another
// core has just read makes, which in this machine's slow mode run at a third
// of their speed, and leave the chunk in memory for the readers at the same
// speed in either mode (algorithm_thresholds.h, kStreamedBroadcastMinBytes).
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root, bool streamed) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.step_bytes() / element;
  const bool at_root = group.rank() == root;
  auto* data = static_cast<unsigned char*>(buffer);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    if (at_root) write_result(group.my_area(bytes), data + first * element, bytes, streamed);
    group.arrive_and_wait();
    if (!at_root) copy_chunk(data + first * element, group.area(root, bytes), bytes);
  });
}

}  // namespace dist
