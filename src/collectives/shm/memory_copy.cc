#include "collectives/shm/memory_copy.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "topology/processor_vendor.h"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
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

void stream_store(void* dst, const void* src, size_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
#ifdef DIST_HAVE_SSE2_STREAMS
  // Head up to a 16-byte boundary of the destination, then 64-byte lines.
  const size_t head = (16 - reinterpret_cast<uintptr_t>(out) % 16) % 16;
  if (bytes < head + 64) {
    copy_chunk(out, in, bytes);
    return;
  }
  copy_chunk(out, in, head);
  out += head;
  in += head;
  bytes -= head;
  const size_t body = bytes / 64 * 64;
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
  _mm_sfence();
  copy_chunk(out + body, in + body, bytes - body);
#else
  copy_chunk(out, in, bytes);
#endif
}

}  // namespace dist
