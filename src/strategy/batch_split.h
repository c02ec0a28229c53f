// Splitting one worker's batch among its local replicas without copying, as
// TF rebatches a per-worker batch: ceil(rows / replicas) rows each, the last
// replicas fewer (or none) when the batch is partial.
#pragma once

#include <cstdint>
#include <vector>

#include "strategy/tensor_ref.h"

namespace dist {

// batch.count must be whole rows; throws otherwise. Returns one view per replica.
std::vector<TensorRef> split_batch(const TensorRef& batch, uint64_t rows, int replicas);

}  // namespace dist
