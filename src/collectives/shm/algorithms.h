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
#include <functional>

#include "base/dtype.h"
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
// slot into a separate recv, of group.step_bytes() in place.
void shm_allreduce_split(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
// The same with its input in pieces and its result handed to `sink` part by
// part (piecewise.h), each rank's own slice through `finish` first when given
// (and announced to `prepare` a step ahead); in steps of group.step_bytes(),
// so every part lies within one step.
void shm_allreduce_split(ShmGroup& group, const PieceList& input, const ResultSink& sink, DType dtype, ReduceOp op,
                         const PartFinisher* finish = nullptr, const PartPreparer* prepare = nullptr);
void shm_reduce(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root);
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root);
void shm_allgather(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype);
void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
void shm_alltoall(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype);
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

// Data that only moves (all-gather, all-to-all, broadcast) is copied
// straight from the peers' buffers, when the group can (single_copy.h), for
// blocks of these sizes: one copy instead of two. Below, the system call and
// the second handshake cost more than the copy saved; with more ranks than
// cores, more so. Above, the kernel's copy, whose writes pull every
// destination line into the cache first, loses to the slots' streamed writes
// (all-gather of 32 MiB blocks, 2 ranks: 7.4-9.0 ms against 7.4-7.7). A
// broadcast's single copy is made by the receivers alone, where the slots
// split it between the root and them: it stops being ahead at 4 MiB, and with
// more ranks than cores it is behind.
inline constexpr size_t kSingleCopyMinBytes = 16 * 1024;
inline constexpr size_t kSingleCopyMinBytesSharedCores = 128 * 1024;
inline constexpr size_t kSingleCopyMaxBytes = 16 * 1024 * 1024;
inline constexpr size_t kSingleCopyMaxBroadcastBytes = 2 * 1024 * 1024;

// Whether a collective of `kind` with `bytes` per block takes the single copy
// on `group`.
bool takes_single_copy(const ShmGroup& group, CollectiveKind kind, size_t bytes);

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
void read_from_peers(ShmGroup& group, const void* published, const std::function<PeerRead(int)>& read_of,
                     const std::function<void()>& meanwhile);

// For all-to-all and reduce-scatter: copies elements [first, first+elements)
// of each of the n blocks of `count` elements in `input` into part b of this
// rank's slot (parts of `part_bytes`), except this rank's own block, which
// only this rank reads, straight from `input`.
void copy_blocks_in(ShmGroup& group, const unsigned char* input, size_t count, size_t first, size_t elements,
                    size_t element, size_t part_bytes);

}  // namespace dist
