#include "c_api/buffers.h"

#include <limits>
#include <string>

#include "c_api/guard.h"

namespace dist {

Checked check_buffer(const dist_buffer_t* buffer, const char* name) {
  require(buffer, name);
  Checked out;
  out.dtype = dtype_from_int(buffer->dtype);
  out.count = buffer->count;
  out.data = buffer->data;
  const std::string field(name);
  if (buffer->memory_kind != DIST_MEMORY_HOST) {
    fail_invalid(field + ": memory_kind " + std::to_string(buffer->memory_kind) + " is not DIST_MEMORY_HOST");
  }
  if (buffer->stream != nullptr) fail_invalid(field + ": stream must be NULL for host memory");
  if (buffer->count > std::numeric_limits<size_t>::max() / 16 / size_of(out.dtype)) {
    fail_invalid(field + ": count " + std::to_string(buffer->count) + " is too large");
  }
  if (buffer->count > 0 && buffer->data == nullptr) {
    fail_invalid(field + ": data is NULL for count " + std::to_string(buffer->count));
  }
  return out;
}

}  // namespace dist
