#include "collectives/algorithm_thresholds.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"
#include "collectives/shm/store_choice.h"

namespace dist {

// The root writes each chunk once into its slot; every other rank copies it
// out. From kChosenStoresMinBytes the root writes with the stores its recent
// calls ran faster with (store_choice.h): non-temporal ones skip the
// cache-line reads an ordinary store to a line another core has just read
// makes, which in this machine's slow mode run at a third of their speed, and
// leave the chunk in memory for the readers at the same speed in either mode;
// in the fast mode ordinary ones leave it in the cache, which is faster.
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root) {
  const size_t element = size_of(dtype);
  const size_t per_step = group.step_bytes() / element;
  const bool at_root = group.rank() == root;
  auto* data = static_cast<unsigned char*>(buffer);
  const size_t total = count * element;
  if (!at_root || total < kChosenStoresMinBytes) {
    for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
      const size_t bytes = elements * element;
      if (at_root) copy_chunk(group.my_area(bytes), data + first * element, bytes);
      group.arrive_and_wait();
      if (!at_root) copy_chunk(data + first * element, group.area(root, bytes), bytes);
    });
    return;
  }
  ChosenStores stores(group.broadcast_stores(), total);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const size_t bytes = elements * element;
    write_result(group.my_area(bytes), data + first * element, bytes, stores.streamed());
    group.arrive_and_wait();
  });
  stores.finished();
}

}  // namespace dist
