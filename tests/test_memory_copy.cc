// The shared-memory path's copies (collectives/shm/memory_copy.h): every way
// of copying moves exactly the bytes asked for, at any size and alignment,
// and touches nothing around them; DIST_SHM_COPY and the processor pick the
// way copy_chunk copies.
#include <cstdint>
#include <cstring>
#include <vector>

#include "collectives/shm/memory_copy.h"
#include "internal_test_support.h"

namespace {

using dist::ChunkCopy;

using CopyFunction = void (*)(void*, const void*, size_t);

// Sizes around the vector moves' 64-byte lines and stream_store's head (up
// to a cache line of the destination), a page, memcpy's least size (kMemcpyMinBytes) and a slot-sized
// chunk with a ragged end.
const size_t kSizes[] = {0,   1,   15,   16,   17,        63,    64,    65,    127,
                         128, 129, 4095, 4096, 4096 + 13, 16383, 16384, 16385, 256 * 1024 + 7};
const size_t kOffsets[] = {0, 1, 8, 15, 16, 33, 48, 63};
constexpr size_t kGuard = 64;  // bytes checked untouched on each side of the destination

uint8_t source_byte(size_t i) { return static_cast<uint8_t>(i * 131 + 7); }

// Copies kSizes[*] bytes between every pair of misalignments with `copy` and
// checks the destination and its guards byte by byte.
void check_copies(const char* what, CopyFunction copy) {
  const size_t most = 256 * 1024 + 7;
  std::vector<uint8_t> source(most + 64);
  std::vector<uint8_t> destination(most + 64 + 2 * kGuard);
  for (size_t i = 0; i < source.size(); ++i) source[i] = source_byte(i);
  for (size_t bytes : kSizes) {
    for (size_t from : kOffsets) {
      for (size_t to : kOffsets) {
        std::memset(destination.data(), 0xA5, destination.size());
        uint8_t* out = destination.data() + kGuard + to;
        copy(out, source.data() + from, bytes);
        for (size_t i = 0; i < bytes; ++i) {
          if (out[i] != source[from + i]) {
            fail_msg("%s of %zu bytes (source +%zu, destination +%zu): byte %zu is %u, expected %u", what, bytes, from,
                     to, i, out[i], source[from + i]);
          }
        }
        for (size_t i = 0; i < kGuard + to; ++i) {
          if (destination[i] != 0xA5) {
            fail_msg("%s of %zu bytes wrote %zu bytes before its destination", what, bytes, kGuard + to - i);
          }
        }
        for (size_t i = kGuard + to + bytes; i < destination.size(); ++i) {
          if (destination[i] != 0xA5) {
            fail_msg("%s of %zu bytes wrote past its end (byte %zu)", what, bytes, i - kGuard - to);
          }
        }
      }
    }
  }
}

void test_copy_chunk(void**) { check_copies("copy_chunk", dist::copy_chunk); }

void test_vector_moves(void**) { check_copies("copy_with_vector_moves", dist::copy_with_vector_moves); }

void test_stream_store(void**) { check_copies("stream_store", dist::stream_store); }

void test_stream_store_16_byte_stores(void**) {
  check_copies("stream_store with 16-byte stores", [](void* dst, const void* src, size_t bytes) {
    dist::stream_store_as(dist::StreamStores::k16Bytes, dst, src, bytes);
  });
}

// Only a processor with AVX has them, and there stream_store uses them.
void test_stream_store_32_byte_stores(void**) {
  if (dist::stream_stores() != dist::StreamStores::k32Bytes) skip();
  check_copies("stream_store with 32-byte stores", [](void* dst, const void* src, size_t bytes) {
    dist::stream_store_as(dist::StreamStores::k32Bytes, dst, src, bytes);
  });
}

void test_zero_bytes_take_null_buffers(void**) {
  dist::copy_chunk(nullptr, nullptr, 0);
  dist::copy_with_vector_moves(nullptr, nullptr, 0);
}

void test_choice(void**) {
  assert_true(dist::chunk_copy_for(nullptr, false) == ChunkCopy::kMemcpy);
  assert_true(dist::chunk_copy_for(nullptr, true) == ChunkCopy::kVectorMoves);
  assert_true(dist::chunk_copy_for("memcpy", true) == ChunkCopy::kMemcpy);
  assert_true(dist::chunk_copy_for("vectors", false) == ChunkCopy::kVectorMoves);
  // Anything else is no setting: the processor decides.
  assert_true(dist::chunk_copy_for("", true) == ChunkCopy::kVectorMoves);
  assert_true(dist::chunk_copy_for("fast", false) == ChunkCopy::kMemcpy);
}

// The process's own choice follows DIST_SHM_COPY where the test's
// environment sets it (ctest runs this suite with each setting).
void test_environment(void**) {
  const char* setting = std::getenv("DIST_SHM_COPY");
  if (setting == nullptr) skip();
  const ChunkCopy expected = std::strcmp(setting, "memcpy") == 0 ? ChunkCopy::kMemcpy : ChunkCopy::kVectorMoves;
  assert_true(dist::chunk_copy() == expected);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_chunk),
      cmocka_unit_test(test_vector_moves),
      cmocka_unit_test(test_stream_store),
      cmocka_unit_test(test_stream_store_16_byte_stores),
      cmocka_unit_test(test_stream_store_32_byte_stores),
      cmocka_unit_test(test_zero_bytes_take_null_buffers),
      cmocka_unit_test(test_choice),
      cmocka_unit_test(test_environment),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
