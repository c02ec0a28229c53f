#include "collectives/algorithms/payload.h"

#include <algorithm>
#include <cstring>

#include "collectives/algorithm_thresholds.h"
#include "collectives/reduce_kernels.h"

namespace dist {

Payload::Payload(DType dtype, ReduceOp op, const AlgorithmOptions& options)
    : dtype_(dtype),
      op_(op),
      element_bytes_(size_of(dtype)),
      chunk_elements_(std::max<size_t>(1, choose_chunk_bytes(options) / element_bytes_)) {}

size_t Payload::chunks(size_t elements) const {
  return std::max<size_t>(1, (elements + chunk_elements_ - 1) / chunk_elements_);
}

ElementRange Payload::chunk(size_t elements, size_t index) const {
  const size_t begin = std::min(elements, index * chunk_elements_);
  return {begin, std::min(chunk_elements_, elements - begin)};
}

void Payload::combine(void* out, const void* a, const void* b, size_t elements) const {
  if (elements > 0) reduce(out, a, b, elements, dtype_, op_);
}

void Payload::copy(void* to, const void* from, size_t elements) const {
  if (to != from && elements > 0) std::memcpy(to, from, bytes(elements));
}

}  // namespace dist
