// The ring passes behind the ring all-reduce, the ring reduce-scatter, the
// ring all-gather and the scatter/all-gather broadcast.
//
// n ring positions each own one block of a BlockLayout; position p sends to
// the next position and receives from the previous one.
//  - Reduce-scatter pass, n-1 steps: at step s, p sends its partial result for
//    block p-s-1 and receives the previous position's partial for block
//    p-s-2, which it combines with its own input. After the last step p holds
//    block p reduced over all positions.
//  - All-gather pass, n-1 steps: at step s, p sends block p-s and receives
//    block p-s-1 straight into the output.
//
// Blocks are cut into pipeline chunks and the passes run chunk-major, a few
// chunks (kRingWavefront) at a time: those chunks go through every
// reduce-scatter step and then every all-gather step before the next chunks
// start. Partial results therefore live only in small staging slots that stay
// in L2 (the output is written once per element, never with a partial), and a
// finished chunk is forwarded while it is still in cache. Keeping a few chunks
// in the wavefront lets one chunk's transfer overlap another's reduction.
//
// Every rank posts its receive for the next unit of work before sending and
// before waiting, so each wait depends only on work the neighbours did
// earlier in the same order: no cycle of waits, even with a rendezvous
// transport.
#pragma once

#include "collectives/algorithms/block_layout.h"
#include "collectives/algorithms/payload.h"
#include "transport/channel.h"

namespace dist {

struct RingGeometry {
  int size = 1;      // positions on the ring
  int position = 0;  // this rank's position
  int previous = 0;  // channel rank of position - 1
  int next = 0;      // channel rank of position + 1
  BlockLayout blocks{0, 1};
};

// The ring in channel rank order: position = rank, neighbours rank -/+ 1.
inline RingGeometry ring_in_rank_order(const Channel& channel, BlockLayout blocks) {
  RingGeometry ring;
  ring.size = channel.size();
  ring.position = channel.rank();
  ring.previous = (ring.position + ring.size - 1) % ring.size;
  ring.next = (ring.position + 1) % ring.size;
  ring.blocks = blocks;
  return ring;
}

struct RingPasses {
  bool reduce_scatter = false;
  bool all_gather = false;
  // Reduce-scatter: every position's contribution, blocks at their layout
  // offsets; and where this position's finished block goes.
  const void* input = nullptr;
  void* reduced_block = nullptr;
  // All-gather: every block at its layout offset. This position's block must
  // be there already, or be `reduced_block` of the same run.
  void* output = nullptr;
};

void run_ring(Channel& channel, const RingGeometry& ring, const RingPasses& passes, const Payload& payload);

}  // namespace dist
