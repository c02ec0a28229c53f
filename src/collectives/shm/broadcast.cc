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
  group.rotate_slots(total);
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

// Every rank publishes where its buffer starts; each of the others reads the
// first part of the root's buffer into its own while the root writes the rest
// into each of theirs (process_vm_readv / writev). The bytes go once, by every
// core at the same time, where the slots copy them twice; the root's part is
// 1/n of each buffer, so that it copies as much as each of the others.
void shm_broadcast_single_copy(ShmGroup& group, void* buffer, size_t count, DType dtype, int root) {
  const size_t element = size_of(dtype);
  const int n = group.size();
  const size_t read_bytes = (count - count / static_cast<size_t>(n)) * element;
  const size_t written_bytes = count * element - read_bytes;
  auto* data = static_cast<unsigned char*>(buffer);
  publish_address(group, buffer);
  group.arrive_and_wait();
  SingleCopyOutcome outcome;
  if (group.rank() == root) {
    // Each peer in turn from the next one: as read_from_peers does.
    for (int k = 1; k < n && outcome.error == 0; ++k) {
      const int peer = (root + k) % n;
      auto* remote = reinterpret_cast<void*>(published_address(group, peer) + read_bytes);
      outcome.error = group.write_to(peer, remote, data + read_bytes, written_bytes);
      if (outcome.error != 0) outcome.peer = peer;
    }
  } else {
    outcome.error = group.read_from(root, reinterpret_cast<const void*>(published_address(group, root)), data, read_bytes);
    if (outcome.error != 0) outcome.peer = root;
  }
  group.next_step();
  end_single_copies(group, outcome, "read from or write to");
}

}  // namespace dist
