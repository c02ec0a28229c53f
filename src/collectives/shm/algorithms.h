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

#include <cstddef>

#include "base/dtype.h"
#include "collectives/reduce_op.h"
#include "collectives/shm/group.h"

namespace dist {

// Every rank combines all contributions of each chunk itself: one
// announcement per step; reads n slots per element. Best for small messages.
void shm_allreduce_direct(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
// Rank r combines slice r of each chunk and everyone copies the finished
// slices: two announcements per step, and the least memory traffic
// (allreduce_split.cc counts it). Best from a few KiB on.
void shm_allreduce_split(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
void shm_reduce(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root);
void shm_broadcast(ShmGroup& group, void* buffer, size_t count, DType dtype, int root);
void shm_allgather(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype);
void shm_reduce_scatter(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op);
void shm_alltoall(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype);
void shm_barrier(ShmGroup& group);

// Steps needed for `count` elements at `per_step` a step; an empty call still
// takes one step, which is where ranks compare signatures.
inline size_t shm_steps(size_t count, size_t per_step) {
  return count == 0 ? 1 : (count + per_step - 1) / per_step;
}

}  // namespace dist
