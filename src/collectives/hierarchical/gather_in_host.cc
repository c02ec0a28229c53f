#include "collectives/hierarchical/gather_in_host.h"

#include <algorithm>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

void gather_in_host(ShmGroup& group, const unsigned char* mine, FunctionRef<size_t(int)> bytes_of,
                    FunctionRef<void(int, size_t, const unsigned char*, size_t)> deliver) {
  const int n = group.size();
  const int me = group.rank();
  size_t largest = 0;
  for (int r = 0; r < n; ++r) largest = std::max(largest, bytes_of(r));
  const size_t step = group.step_bytes();
  for_each_step(group, largest, step, [&](size_t first, size_t) {
    const size_t own = step_part(bytes_of(me), first, step);
    copy_chunk(group.my_area(own), mine + first, own);
    group.arrive_and_wait();
    for (int r = 0; r < n; ++r) {
      const size_t bytes = step_part(bytes_of(r), first, step);
      if (r != me && bytes > 0) deliver(r, first, group.area(r, bytes), bytes);
    }
  });
}

void gather_blocks_in_host(ShmGroup& group, void* buffer, const BlockLayout& blocks, size_t element) {
  auto* data = static_cast<unsigned char*>(buffer);
  auto bytes_of = [&](int r) { return blocks.size(r) * element; };
  auto deliver = [&](int r, size_t offset, const unsigned char* from, size_t bytes) {
    copy_chunk(data + blocks.offset(r) * element + offset, from, bytes);
  };
  gather_in_host(group, data + blocks.offset(group.rank()) * element, bytes_of, deliver);
}

}  // namespace dist
