// The checks every dist_buffer_t goes through at the C ABI: a real dtype, host
// memory, and data for a non-empty count whose byte size fits in memory.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include <distribute/c_api.h>

namespace dist {

struct Checked {
  DType dtype = DType::U8;
  uint64_t count = 0;
  void* data = nullptr;
};

// Throws invalid-argument naming `name` and the field that is wrong.
Checked check_buffer(const dist_buffer_t* buffer, const char* name);

}  // namespace dist
