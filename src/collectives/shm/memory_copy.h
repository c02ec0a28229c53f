// The copies of the shared-memory path, written out instead of calling memcpy.
//
// copy_chunk: glibc's memcpy moves blocks of a few KiB and up with `rep movsb`,
// which on the AMD cores of these machines runs several times slower when
// source and destination sit at the same offset within a page — exactly the
// case of a slot and a user buffer (both page aligned, same offset into the
// chunk). Measured with dist-bench: the split all-reduce of 1 MiB took 517 us
// with memcpy and 169 us with vector moves. A plain loop of 16-byte moves has
// no such case.
//
// stream_store: copying a finished chunk to its destination in DRAM without
// first reading the destination into the cache. An ordinary store to a line
// that is not cached makes the core read it first (read-for-ownership); for
// results of tens of MiB that read is a third of all memory traffic, and memory
// bandwidth is what limits large collectives. Non-temporal stores write whole
// lines straight to memory instead.
#pragma once

#include <cstddef>

namespace dist {

// dst[0..bytes) = src[0..bytes); the buffers must not overlap.
void copy_chunk(void* dst, const void* src, size_t bytes);

// The same with non-temporal stores, ordered before any later store of this
// thread (it ends with a store fence).
void stream_store(void* dst, const void* src, size_t bytes);

// Whether a collective writes its result of `bytes` with stream_store: from
// 8 MiB on, well beyond what the caches keep, so the destination is not in
// cache anyway -- unless the result overwrites the input (send == recv),
// whose lines were just read and are cached, where plain stores are cheaper
// (one 102 MB all-reduce in place: 20-24 ms against 24-26 ms streamed).
inline bool streams_result(const void* send, const void* recv, size_t bytes) {
  return bytes >= (size_t{8} << 20) && send != recv;
}

// Writes part of a result: with stream_store where streams_result() said so
// for the whole result, else with copy_chunk.
inline void write_result(void* dst, const void* src, size_t bytes, bool streamed) {
  if (streamed) {
    stream_store(dst, src, bytes);
  } else {
    copy_chunk(dst, src, bytes);
  }
}

}  // namespace dist
