// Copying a finished chunk to its destination in DRAM without first reading
// the destination into the cache. An ordinary store to a line that is not
// cached makes the core read it first (read-for-ownership); for results of
// tens of MiB that read is a third of all memory traffic, and memory
// bandwidth is what limits large collectives. Non-temporal stores write whole
// lines straight to memory instead.
#pragma once

#include <cstddef>

namespace dist {

// dst[0..bytes) = src[0..bytes); buffers must not overlap. Ordered before any
// later store of this thread (it ends with a store fence).
void stream_store(void* dst, const void* src, size_t bytes);

// Messages from this size on are written with stream_store: well beyond what
// the caches keep, so the destination is not in cache anyway.
inline constexpr size_t kStreamStoreMinBytes = 8u << 20;

}  // namespace dist
