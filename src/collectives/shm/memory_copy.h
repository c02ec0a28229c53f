// The copies of the shared-memory path: memcpy where it is the faster, else
// written out.
//
// copy_chunk: glibc's memcpy, except on AMD processors. There memcpy moves
// blocks of a few KiB and up with `rep movsb`, which runs several times
// slower when source and destination sit at the same offset within a page --
// exactly the case of a slot and a user buffer (both page aligned, same
// offset into the chunk): the split all-reduce of 1 MiB took 517 us with
// memcpy and 169 us with plain 16-byte vector moves, which have no such case.
// On Intel processors memcpy (wider moves, chosen for the processor) is the
// faster from kMemcpyMinBytes: on one with AVX-512, 2 ranks, its broadcast
// took 0.84 of the vector moves' time at 16 KiB, 0.77-0.81 at 32-64 KiB and
// 0.84-0.96 from 256 KiB to 16 MiB, its all-gather 0.76-0.94 from 16 KiB to
// 1 MiB; below, its calls cost more than they save (1 KiB 1.09-1.20, 4 KiB
// 1.05-1.08, 8 KiB level; bench/README.md). DIST_SHM_COPY=memcpy or vectors
// fixes the choice.
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

// Where memcpy copies, from this size (below it, the vector moves).
inline constexpr size_t kMemcpyMinBytes = 16 * 1024;

// The two ways copy_chunk copies, and which one this process uses (chosen
// once, by chunk_copy_for() of its environment and processor).
enum class ChunkCopy { kMemcpy, kVectorMoves };
ChunkCopy chunk_copy();
// DIST_SHM_COPY's `setting` ("memcpy", "vectors"; null or anything else: by
// the processor), on an AMD processor or not.
ChunkCopy chunk_copy_for(const char* setting, bool amd_processor);
// copy_chunk's vector moves, whatever chunk_copy() says.
void copy_with_vector_moves(void* dst, const void* src, size_t bytes);

// The same with non-temporal stores, ordered before any later store of this
// thread (it ends with a store fence). Each whole cache line of the
// destination takes two 32-byte stores where the processor has AVX, else
// four 16-byte ones.
void stream_store(void* dst, const void* src, size_t bytes);

// The widths of stream_store's stores, and the one this process uses.
enum class StreamStores { k16Bytes, k32Bytes };
StreamStores stream_stores();
// stream_store with stores of `width`; k32Bytes needs a processor with AVX
// (stream_stores() says so). Where there are no vector stores at all, a
// plain copy.
void stream_store_as(StreamStores width, void* dst, const void* src, size_t bytes);

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
