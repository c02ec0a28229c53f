#include <algorithm>

#include "collectives/algorithms/scratch_buffer.h"
#include "collectives/hierarchical/algorithms.h"
#include "collectives/hierarchical/gather_in_host.h"
#include "collectives/shm/memory_copy.h"

namespace dist {

// Rail l gathers the blocks of the ranks with local rank l, one per host;
// then the host's ranks gather each other's rail blocks, each block landing
// straight at its owner's place in the result.
void hier_allgather_rails(Hierarchy& h, const CollectiveCall& call) {
  const CallSignature& s = call.signature;
  const size_t count = static_cast<size_t>(s.count);
  const size_t block_bytes = count * size_of(s.dtype);
  const size_t hosts = static_cast<size_t>(h.num_hosts());
  const HostLayout& layout = h.layout();
  auto* out = static_cast<unsigned char*>(call.recv);
  unsigned char* own_block = out + static_cast<size_t>(h.rank()) * block_bytes;
  const void* mine = call.send == call.recv ? own_block : call.send;
  ScratchBuffer rail_blocks(hosts * block_bytes);
  h.across(h.rail(), part_call(s, CollectiveKind::kAllGather, count, mine, rail_blocks.data(), s.op));
  // Block j of local rank l's rail blocks belongs to local rank l of host j.
  auto place = [&](int local, size_t offset) {
    const size_t j = offset / block_bytes;
    return out + static_cast<size_t>(layout.ranks_on[j][static_cast<size_t>(local)]) * block_bytes + offset % block_bytes;
  };
  for (size_t j = 0; j < hosts && block_bytes > 0; ++j) {
    unsigned char* to = place(h.local_rank(), j * block_bytes);
    if (to != mine) copy_chunk(to, rail_blocks.data() + j * block_bytes, block_bytes);
  }
  h.in_host([&](ShmGroup& group) {
    auto bytes_of = [&](int) { return hosts * block_bytes; };
    auto deliver = [&](int local, size_t offset, const unsigned char* from, size_t bytes) {
      // A step may cross from one block into the next.
      while (bytes > 0) {
        const size_t piece = std::min(bytes, block_bytes - offset % block_bytes);
        copy_chunk(place(local, offset), from, piece);
        offset += piece;
        from += piece;
        bytes -= piece;
      }
    };
    gather_in_host(group, rail_blocks.data(), bytes_of, deliver);
  });
}

}  // namespace dist
