// The shared-memory collectives, one per file, all built on ShmGroup's steps.
// Buffer shapes and in-place rules are those of collective_call.h; the caller
// has checked them (check_call). Each call moves its data in steps of at most
// one slot per rank, so any message size works with a fixed-size segment, and
// each step's data stays in cache between being written and being read.
//
// MEAN is applied to each finished chunk while it is in cache; every rank that
// holds a result computes it from the same sums in the same order, so results
// are bit-identical on every rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "base/dtype.h"
#include "base/function_ref.h"
#include "collectives/algorithms/block_layout.h"
#include "collectives/piecewise.h"
#include "collectives/reduce_op.h"
#include "collectives/shm/group.h"
#include "collectives/signature.h"

namespace dist {

// Every rank combines all contributions of each chunk itself: one
// announcement per step; reads n slots per element. Best for small messages.
void shm_allreduce_direct(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
// Rank r combines slice r of each chunk and everyone copies the finished
// slices: two announcements per step, and the least memory traffic
// (allreduce_split.cc counts it). Best from a few KiB on. Steps of the whole
// slot into a separate recv, of group.step_bytes() in place; through the slots
// always (shm_allreduce_split_write is the single-copy variant).
void shm_allreduce_split(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
// The same with its input in pieces and its result handed to `sink` part by
// part (piecewise.h), each rank's own slice reduced by `finish` instead when
// given; in steps of group.step_bytes(),
// so every part lies within one step.
void shm_allreduce_split(ShmGroup& group, const PieceList& input, const ResultSink& sink, DType dtype, ReduceOp op,
                         const PartFinisher* finish = nullptr);
void shm_reduce(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root);
// Broadcast moves data through the slots, the root's writes ordinary or
// non-temporal as its recent calls found faster (store_choice.h). All-gather and all-to-all
// move it through the slots, or with `single_copy` (the table's
// *_single_copy rows: the group can, and the size suits) straight from the
// peers' buffers; all-to-all only out of place.
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root);
// The same by single copies, the root and the others each copying a part
// (needs group.single_copy()).
void shm_broadcast_single_copy(ShmGroup& group, void* buffer, size_t count, DType dtype, int root);
void shm_allgather(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, bool single_copy);
void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
// The same with blocks of uneven sizes: block b of `send` at blocks.offset(b),
// rank r's result (blocks.size(r) elements) at `recv`, which may be its own
// block of `send` (the hierarchical all-reduce lands it in the user's buffer).
void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, const BlockLayout& blocks, DType dtype,
                        ReduceOp op);
void shm_alltoall(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, bool single_copy);
void shm_barrier(ShmGroup& group);

// out = the combination of `elements` elements at byte `offset` of every rank's
// slot for the current step, in rank order, with MEAN finished. This rank's
// own contribution is read from `mine`, the private memory it was copied from,
// not from its slot: peers are still reading the slot, and a load from a line
// they are reading costs this core as much as a miss.
void combine_slots(const ShmGroup& group, size_t offset, const void* mine, void* out, size_t elements, DType dtype,
                   ReduceOp op);
// The same from the start of every rank's area of the current step
// (ShmGroup::area: the call record for small steps, else the slot), where
// each rank put `bytes` (elements of dtype).
void combine_areas(const ShmGroup& group, const void* mine, void* out, size_t elements, size_t bytes, DType dtype,
                   ReduceOp op);

// Runs body(first, elements) for each step of a call of `count` elements at
// `per_step` a step, moving the group on after each. An empty call still
// takes one step, which is where ranks compare signatures.
template <typename Body>
void for_each_step(ShmGroup& group, size_t count, size_t per_step, Body&& body) {
  const size_t steps = count == 0 ? 1 : (count + per_step - 1) / per_step;
  for (size_t step = 0; step < steps; ++step) {
    const size_t first = step * per_step;
    body(first, std::min(per_step, count - first));
    group.next_step();
  }
}


// Rank r combines slice r of each chunk into its own result and writes it
// into every peer's result, in steps of a whole slot; where takes_split_write
// (algorithm_table.h).
void shm_allreduce_split_write(ShmGroup& group, const PieceList& input, void* recv, DType dtype, ReduceOp op);
void shm_allreduce_split_write(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);

// The ranks combine the message chunk by chunk, each claiming its own
// slice's chunks first and then what is left of the others', reading the
// peers' inputs straight from their buffers and writing the result into
// theirs: two steps in all, none of them waiting for a peer in between
// (needs single copies).
void shm_allreduce_read_write(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);

// Copies into `slot` the slices of the chunk of `input` at element `first`
// (chunks of `per_step` elements, one slice per rank) that the other ranks
// combine; with non-temporal stores when `streamed` (store_choice.h).
void copy_others_slices(const ShmGroup& group, const PieceList& input, unsigned char* slot, size_t first,
                        size_t per_step, bool streamed);

// Single copies find each other's buffers through the call record: a rank
// publishes where its buffer starts before it arrives at a step, and any
// rank's is read after waiting for that step.
void publish_address(ShmGroup& group, const void* buffer);
uintptr_t published_address(const ShmGroup& group, int rank);

// How a rank's single copies of a call went: 0, or the errno of the first
// that failed and the peer it was made with.
struct SingleCopyOutcome {
  int64_t error = 0;
  int64_t peer = -1;
};

// The last step of a call with single copies: each rank reports `mine`; once
// all have, none copies to or from another's buffer any more (the peers may
// reuse theirs), and if any copy failed every rank throws, naming who could
// not `verb` whom (kPeerFailed for a process that is gone).
void end_single_copies(ShmGroup& group, const SingleCopyOutcome& mine, const char* verb);

// What a rank reads from one peer: `bytes` at `offset` from where the peer's
// published data starts, into `into` (0 bytes: nothing).
struct PeerRead {
  size_t offset = 0;
  unsigned char* into = nullptr;
  size_t bytes = 0;
};

// The single-copy exchange: each rank publishes `published`, the start of
// its data, and makes read_of(peer) from every peer. `meanwhile` runs while
// the peers publish (the rank's own block). Fails on every rank when one
// read failed. Takes two steps; needs group.single_copy().
void read_from_peers(ShmGroup& group, const void* published, FunctionRef<PeerRead(int)> read_of,
                     FunctionRef<void()> meanwhile);

// For all-to-all and reduce-scatter: copies elements [first, first+per_step)
// of each of the n `blocks` of `input` (as far as the block reaches) into part
// b of this rank's slot (parts of `part_bytes`), except this rank's own
// block, which only this rank reads, straight from `input`.
void copy_blocks_in(ShmGroup& group, const unsigned char* input, const BlockLayout& blocks, size_t first,
                    size_t per_step, size_t element, size_t part_bytes);

// The bytes of a part in a step's slot (copy_blocks_in), for blocks of at
// most `largest` elements in steps of `per_step`: a whole share of the step,
// or for a call of one step its block rounded up to a line, the parts then
// placed where this call's turn puts them (ShmGroup::rotate_slots) when a
// part reaches kShmRotationMinBytes.
size_t place_slot_parts(ShmGroup& group, size_t largest, size_t per_step, size_t element);

// Elements [first, first+per_step) of a block of `size`, clipped to it.
inline size_t step_part(size_t size, size_t first, size_t per_step) {
  return first >= size ? 0 : std::min(per_step, size - first);
}

}  // namespace dist
