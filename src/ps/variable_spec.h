// What a server needs to hold one shard of a variable: the logical variable
// (name, dtype, full shape), which rows of it this shard holds, and how it is
// updated (optimizer, synchronous aggregation). A variable that is not
// partitioned is one shard holding every row. Scalars count as one row of one
// element; rank >= 1 variables are split along their first dimension.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "optimizers/optimizer_config.h"

namespace dist::ps {

// Synchronous training: gradients are summed until `replicas_to_aggregate`
// of them (at most one per worker per round) have arrived, then their mean is
// applied once. A gradient computed at version s is dropped when the variable
// is already more than `max_staleness` versions past s. 0 = asynchronous.
struct SyncConfig {
  uint32_t replicas_to_aggregate = 0;
  uint32_t max_staleness = 0;
};

struct VariableSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // of the whole variable
  uint64_t row_offset = 0;     // first row of the variable this shard holds
  uint64_t rows = 1;           // rows this shard holds
  // None: apply_gradient is refused (the variable is only read and assigned).
  // Each variable carries its own, so two variables on one server can train
  // with different optimizers and learning rates.
  std::optional<OptimizerConfig> optimizer;
  SyncConfig sync;

  uint64_t total_rows() const { return shape.empty() ? 1 : static_cast<uint64_t>(shape[0]); }
  uint64_t row_elements() const;
  uint64_t elements() const { return rows * row_elements(); }
  size_t row_bytes() const { return static_cast<size_t>(row_elements()) * size_of(dtype); }
  size_t bytes() const { return static_cast<size_t>(elements()) * size_of(dtype); }
};

inline constexpr size_t kMaxNameBytes = 1024;
inline constexpr size_t kMaxRank = 8;
// The largest shard a server accepts (and a message may carry): 16 GiB.
inline constexpr uint64_t kMaxShardBytes = uint64_t{16} << 30;

// Throws invalid-argument naming the field: empty or over-long name, negative
// dimension, rank over kMaxRank, rows outside the shape, a shard larger than
// kMaxShardBytes, a bad optimizer or sync setting.
void validate(const VariableSpec& spec);

// Same variable and the same rows of it (update settings aside).
bool same_slice(const VariableSpec& a, const VariableSpec& b);

// The optimizer's name ("sgd", "adam", ...), or "none".
const char* optimizer_label(const VariableSpec& spec);

// "name[rows 0..9 of 10] f32 [10,4]" for logs and messages.
std::string describe(const VariableSpec& spec);

// The shape as "[10,4]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace dist::ps
