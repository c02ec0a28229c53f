// Whole-call single copies of a reduction: each rank publishes where its
// input and its result start, then reads slices of the peers' inputs and
// writes finished slices into the peers' results (process_vm_readv/writev),
// with no step of the group in between. shm_allreduce_read_write and the
// hierarchical streamed all-reduce are built of these; they end with
// end_single_copies().
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/dtype.h"
#include "collectives/reduce_op.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/group.h"

namespace dist {

// Where one rank's input and result start, in its own process.
struct PeerBuffers {
  uint64_t input = 0;
  uint64_t result = 0;
};

// One step of `group`: publishes this rank's buffers and fills `all` (one
// per rank) with every rank's. Needs group.single_copy().
void exchange_peer_buffers(ShmGroup& group, const void* send, void* recv, PeerBuffers* all);

// Combines `count` elements at byte `offset` of every rank's input, in rank
// order, into `out`; this rank's part is read at `own` (its input + offset).
// The peers' parts are read into `staging` ((size - 1) * count elements).
// False, with `outcome` saying which read failed, when one did.
bool combine_from_peers(const ShmGroup& group, const PeerBuffers* all, size_t offset, const void* own, void* out,
                        size_t count, DType dtype, ReduceOp op, unsigned char* staging, SingleCopyOutcome& outcome);

// The same over any `count`, a step's worth (kShmStepBytes) at a time, so
// that the peers' parts stay in L2: `staging` holds peer_staging_bytes().
bool combine_from_peers_by_steps(const ShmGroup& group, const PeerBuffers* all, size_t offset, const void* own,
                                 void* out, size_t count, DType dtype, ReduceOp op, unsigned char* staging,
                                 SingleCopyOutcome& outcome);
// What combine_from_peers_by_steps needs of staging for at most `count`
// elements at a time.
size_t peer_staging_bytes(const ShmGroup& group, size_t count, DType dtype);

// Writes `bytes` at out + offset into every peer's result at the same offset.
// False, with `outcome` saying which write failed, when one did.
bool write_to_peers(const ShmGroup& group, const PeerBuffers* all, const void* out, size_t offset, size_t bytes,
                    SingleCopyOutcome& outcome);

}  // namespace dist
