// The all-gather inside one host that the hierarchical collectives end with:
// each rank's contribution may have its own size, and each peer's arrives in
// pieces at a place the caller chooses (its final place in the user's
// buffer), in steps of the group's step.
#pragma once

#include <cstddef>

#include "base/function_ref.h"
#include "collectives/algorithms/block_layout.h"
#include "collectives/shm/group.h"

namespace dist {

// Every rank contributes `mine` (bytes_of(rank()) bytes); deliver(peer, offset,
// data, bytes) receives bytes [offset, offset + bytes) of each peer's.
void gather_in_host(ShmGroup& group, const unsigned char* mine, FunctionRef<size_t(int)> bytes_of,
                    FunctionRef<void(int, size_t, const unsigned char*, size_t)> deliver);

// In place: block b of `blocks` (elements of `element` bytes) of `buffer`
// comes from rank b, whose own block is already there.
void gather_blocks_in_host(ShmGroup& group, void* buffer, const BlockLayout& blocks, size_t element);

}  // namespace dist
