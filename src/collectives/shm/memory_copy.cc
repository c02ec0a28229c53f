#include "collectives/shm/memory_copy.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "topology/processor_vendor.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DIST_HAVE_SSE2_STREAMS 1
#endif

namespace dist {

namespace {

// Decided when the library loads; every copy reads it.
const ChunkCopy g_chunk_copy = chunk_copy_for(std::getenv("DIST_SHM_COPY"), processor_is_amd());

}  // namespace

ChunkCopy chunk_copy_for(const char* setting, bool amd) {
  if (setting != nullptr && std::strcmp(setting, "memcpy") == 0) return ChunkCopy::kMemcpy;
  if (setting != nullptr && std::strcmp(setting, "vectors") == 0) return ChunkCopy::kVectorMoves;
  return amd ? ChunkCopy::kVectorMoves : ChunkCopy::kMemcpy;
}

ChunkCopy chunk_copy() { return g_chunk_copy; }

void copy_chunk(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;  // empty calls may pass null buffers
  if (g_chunk_copy == ChunkCopy::kMemcpy && bytes >= kMemcpyMinBytes) {
    std::memcpy(dst, src, bytes);
  } else {
    copy_with_vector_moves(dst, src, bytes);
  }
}

void copy_with_vector_moves(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  size_t i = 0;
#ifdef DIST_HAVE_SSE2_STREAMS
  // Explicit vector moves: a plain loop could be turned back into memcpy.
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 48));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 16), b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 32), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 48), d);
  }
#endif
  // The tail (under 64 bytes) is small enough for memcpy's own small-copy code.
  std::memcpy(out + i, in + i, bytes - i);
}

namespace {

#ifdef DIST_HAVE_SSE2_STREAMS
// One 64-byte line per step: its loads, then its non-temporal stores to
// `out`, which starts a cache line (each line's stores fill one
// write-combining buffer).
void stream_lines_sse2(unsigned char* out, const unsigned char* in, size_t body) {
  for (size_t i = 0; i < body; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i + 48), d);
  }
}

// The same in two 32-byte stores per line. Fewer, wider stores fill a line's
// write-combining buffer sooner: two processes each streaming 32 MiB took
// 0.70-1.0 (median 0.84) of the 16-byte stores' time, and the all-gather of 64
// MiB 0.83 of its time before (bench/README.md, 2026-12-02).
__attribute__((target("avx"))) void stream_lines_avx(unsigned char* out, const unsigned char* in, size_t body) {
  for (size_t i = 0; i < body; i += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i + 32), b);
  }
}

// __builtin_cpu_supports("avx") also checks that the OS saves the YMM registers.
const StreamStores g_stream_stores = __builtin_cpu_supports("avx") ? StreamStores::k32Bytes : StreamStores::k16Bytes;
#else
const StreamStores g_stream_stores = StreamStores::k16Bytes;
#endif

}  // namespace

StreamStores stream_stores() { return g_stream_stores; }

void stream_store(void* dst, const void* src, size_t bytes) { stream_store_as(g_stream_stores, dst, src, bytes); }

void stream_store_as(StreamStores width, void* dst, const void* src, size_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
#ifdef DIST_HAVE_SSE2_STREAMS
  // Head up to a cache line of the destination, then whole lines.
  const size_t head = (64 - reinterpret_cast<uintptr_t>(out) % 64) % 64;
  if (bytes < head + 64) {
    copy_chunk(out, in, bytes);
    return;
  }
  copy_chunk(out, in, head);
  out += head;
  in += head;
  bytes -= head;
  const size_t body = bytes / 64 * 64;
  if (width == StreamStores::k32Bytes) {
    stream_lines_avx(out, in, body);
  } else {
    stream_lines_sse2(out, in, body);
  }
  _mm_sfence();
  copy_chunk(out + body, in + body, bytes - body);
#else
  (void)width;
  copy_chunk(out, in, bytes);
#endif
}

}  // namespace dist
