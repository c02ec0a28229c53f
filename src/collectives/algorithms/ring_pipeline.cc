#include "collectives/algorithms/ring_pipeline.h"

#include <algorithm>

#include "collectives/algorithms/scratch_buffer.h"

namespace dist {
namespace {

// Chunks in flight around the ring at once (see ring_pipeline.h).
constexpr size_t kRingWavefront = 2;

// One send and one receive of one chunk at one step of one pass.
struct Unit {
  bool gather = false;  // all-gather pass (else reduce-scatter)
  int step = 0;
  size_t chunk = 0;
  size_t lane = 0;  // the chunk's place in its wavefront, which picks its staging slots
};

class RingRun {
 public:
  RingRun(Channel& channel, const RingGeometry& ring, const RingPasses& passes, const Payload& payload)
      : channel_(channel),
        ring_(ring),
        passes_(passes),
        payload_(payload),
        steps_(ring.size - 1),
        chunks_(payload.chunks(ring.blocks.largest())),
        passes_per_chunk_((passes.reduce_scatter ? 1 : 0) + (passes.all_gather ? 1 : 0)),
        slot_bytes_(payload.bytes(std::min(payload.chunk_elements(), ring.blocks.largest()))),
        // Reduce-scatter staging: two receive slots, then two partial slots per lane.
        staging_(passes.reduce_scatter ? (2 + 2 * kRingWavefront) * slot_bytes_ : 0) {}

  void run() {
    const size_t total = chunks_ * passes_per_chunk_ * static_cast<size_t>(steps_);
    if (total == 0) return;
    TransferId arriving = post_receive(0, unit_at(0));
    for (size_t index = 0; index < total; ++index) {
      const Unit unit = unit_at(index);
      const TransferId following = index + 1 < total ? post_receive(index + 1, unit_at(index + 1)) : arriving;
      const TransferId leaving = post_send(unit);
      channel_.wait(arriving);
      if (!unit.gather) {
        // An in-place reduce-scatter writes its result over input block 0,
        // which the send just posted may still be reading (a rendezvous send
        // reads the buffer when the peer asks, not when posted): with two
        // ranks that send is of the very chunk the result overwrites.
        if (unit.step == steps_ - 1 && passes_.reduced_block == passes_.input) channel_.wait(leaving);
        reduce(index, unit);
      }
      channel_.wait(leaving);
      arriving = following;
    }
  }

 private:
  int block_at(int offset) const {
    const int n = ring_.size;
    return ((ring_.position + offset) % n + n) % n;
  }

  // The elements of `chunk` of `block`, as offsets into the whole layout.
  ElementRange piece(int block, size_t chunk) const {
    ElementRange range = payload_.chunk(ring_.blocks.size(block), chunk);
    range.begin += ring_.blocks.offset(block);
    return range;
  }

  unsigned char* receive_slot(size_t index) { return staging_.data() + (index % 2) * slot_bytes_; }
  unsigned char* partial_slot(size_t lane, int step) {
    return staging_.data() + (2 + 2 * lane + static_cast<size_t>(step % 2)) * slot_bytes_;
  }

  // Units run wavefront by wavefront; inside one, pass by pass, step by step,
  // lane by lane.
  Unit unit_at(size_t index) const {
    const size_t steps = static_cast<size_t>(steps_);
    const size_t full_wavefront = kRingWavefront * passes_per_chunk_ * steps;
    const size_t first_chunk = index / full_wavefront * kRingWavefront;
    const size_t width = std::min(kRingWavefront, chunks_ - first_chunk);
    size_t within = index % full_wavefront;
    Unit unit;
    const size_t scatter_units = passes_.reduce_scatter ? width * steps : 0;
    unit.gather = within >= scatter_units;
    if (unit.gather) within -= scatter_units;
    unit.step = static_cast<int>(within / width);
    unit.lane = within % width;
    unit.chunk = first_chunk + unit.lane;
    return unit;
  }

  TransferId post_receive(size_t index, const Unit& unit) {
    if (unit.gather) {
      const ElementRange range = piece(block_at(-unit.step - 1), unit.chunk);
      return channel_.recv(ring_.previous, payload_.at(passes_.output, range.begin), payload_.bytes(range.length));
    }
    const ElementRange range = piece(block_at(-unit.step - 2), unit.chunk);
    return channel_.recv(ring_.previous, receive_slot(index), payload_.bytes(range.length));
  }

  TransferId post_send(const Unit& unit) {
    if (unit.gather) {
      const ElementRange range = piece(block_at(-unit.step), unit.chunk);
      return channel_.send(ring_.next, payload_.at(passes_.output, range.begin), payload_.bytes(range.length));
    }
    const ElementRange range = piece(block_at(-unit.step - 1), unit.chunk);
    // Step 0 sends this rank's own input; later steps the partial combined one step earlier.
    const void* source =
        unit.step == 0 ? payload_.at(passes_.input, range.begin) : partial_slot(unit.lane, unit.step - 1);
    return channel_.send(ring_.next, source, payload_.bytes(range.length));
  }

  // Combines the received partial with this rank's input: into a partial slot,
  // or at the last step (block_at(-steps-1) is this position's block) into the
  // reduced block.
  void reduce(size_t index, const Unit& unit) {
    const int block = block_at(-unit.step - 2);
    const ElementRange range = piece(block, unit.chunk);
    void* target = unit.step == steps_ - 1
                       ? payload_.at(passes_.reduced_block, range.begin - ring_.blocks.offset(block))
                       : partial_slot(unit.lane, unit.step);
    payload_.combine(target, receive_slot(index), payload_.at(passes_.input, range.begin), range.length);
  }

  Channel& channel_;
  const RingGeometry& ring_;
  const RingPasses& passes_;
  const Payload& payload_;
  const int steps_;
  const size_t chunks_;
  const size_t passes_per_chunk_;
  const size_t slot_bytes_;
  ScratchBuffer staging_;
};

}  // namespace

void run_ring(Channel& channel, const RingGeometry& ring, const RingPasses& passes, const Payload& payload) {
  if (ring.size <= 1) return;
  RingRun(channel, ring, passes, payload).run();
}

}  // namespace dist
