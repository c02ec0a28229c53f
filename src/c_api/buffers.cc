#include "c_api/buffers.h"

#include <string>

#include "c_api/guard.h"
#ifdef DIST_HAVE_CUDA
#include "gpu/cuda_memory.h"
#endif

namespace dist {

Checked check_buffer(const dist_buffer_t* buffer, const char* name) {
  require(buffer, name);
  Checked out;
  out.dtype = dtype_from_int(buffer->dtype);
  out.count = buffer->count;
  out.data = buffer->data;
  out.stream = buffer->stream;
  // `name` becomes a string on the error paths only: every call passes here.
  // A count whose bytes, times 16, overflow is refused (by the multiplication:
  // a division per buffer costs an 8-byte call tens of cycles).
  // The builtin checks the exact product against size_t, whatever count's width.
  size_t bytes_times_16 = 0;
  if (__builtin_mul_overflow(buffer->count, 16 * size_of(out.dtype), &bytes_times_16)) {
    fail_invalid(std::string(name) + ": count " + std::to_string(buffer->count) + " is too large");
  }
  if (buffer->count > 0 && buffer->data == nullptr) {
    fail_invalid(std::string(name) + ": data is NULL for count " + std::to_string(buffer->count));
  }
  switch (buffer->memory_kind) {
    case DIST_MEMORY_HOST:
      if (buffer->stream != nullptr) fail_invalid(std::string(name) + ": stream must be NULL for host memory");
      break;
    case DIST_MEMORY_CUDA:
#ifdef DIST_HAVE_CUDA
      out.device = check_device_buffer(buffer->data, static_cast<size_t>(buffer->count) * size_of(out.dtype), name);
      out.memory = MemoryKind::kCuda;
      break;
#else
      fail(Status::kUnsupported, std::string(name) + ": memory_kind is DIST_MEMORY_CUDA but this libdistribute was "
                                                     "built without CUDA (dist_build_features)");
#endif
    default:
      fail_invalid(std::string(name) + ": memory_kind " + std::to_string(buffer->memory_kind) +
                   " is neither DIST_MEMORY_HOST nor DIST_MEMORY_CUDA");
  }
  return out;
}

void same_memory(const Checked& a, const Checked& b) {
  if (a.memory != b.memory) {
    fail_invalid(std::string("send is ") + (a.memory == MemoryKind::kCuda ? "CUDA" : "host") + " memory but recv is " +
                 (b.memory == MemoryKind::kCuda ? "CUDA" : "host") + " memory");
  }
  if (a.stream != b.stream) fail_invalid("send and recv name different CUDA streams");
}

void host_memory_only(const Checked& buffer, const char* function) {
  if (buffer.memory == MemoryKind::kCuda) {
    fail(Status::kUnsupported, std::string(function) + " takes host memory only (DIST_MEMORY_HOST)");
  }
}

}  // namespace dist
