#include "strategy/batch_split.h"

#include <algorithm>
#include <string>

#include "base/status.h"

namespace dist {

std::vector<TensorRef> split_batch(const TensorRef& batch, uint64_t rows, int replicas) {
  if (replicas < 1) fail_invalid("split_batch needs at least one replica");
  if (rows == 0) {
    if (batch.count != 0) fail_invalid("a batch of 0 rows must have count 0, not " + std::to_string(batch.count));
  } else if (batch.count % rows != 0) {
    fail_invalid("batch count " + std::to_string(batch.count) + " is not whole rows of a " + std::to_string(rows) +
                 "-row batch");
  }
  const uint64_t row_elements = rows == 0 ? 0 : batch.count / rows;
  const uint64_t per_replica = (rows + static_cast<uint64_t>(replicas) - 1) / static_cast<uint64_t>(replicas);
  const size_t row_bytes = static_cast<size_t>(row_elements) * size_of(batch.dtype);
  std::vector<TensorRef> parts;
  for (int r = 0; r < replicas; ++r) {
    const uint64_t begin = std::min(rows, per_replica * static_cast<uint64_t>(r));
    const uint64_t end = std::min(rows, begin + per_replica);
    TensorRef part;
    part.dtype = batch.dtype;
    part.count = (end - begin) * row_elements;
    part.data = part.count == 0 ? nullptr : static_cast<unsigned char*>(batch.data) + begin * row_bytes;
    parts.push_back(part);
  }
  return parts;
}

}  // namespace dist
