// How a SyncOnReadVariable (ON_READ) aggregates: each replica keeps its own
// value; reading in cross-replica context combines them over the sync group,
// and writing there spreads the value so that a later read gives it back.
#include <cstring>
#include <vector>

#include "collectives/reduce_kernels.h"
#include "strategy/replica_context.h"
#include "variables/aggregation_op.h"
#include "variables/variable.h"
#ifdef DIST_HAVE_CUDA
#include "variables/device_copies.h"
#endif

namespace dist {

void Variable::read_on_read_aggregated(const TensorRef& out) {
  if (aggregation_ == Aggregation::kNone) {
    fail_invalid("variable '" + name_ +
                 "' is ON_READ with aggregation NONE: it cannot be read in cross-replica context (give it SUM, "
                 "MEAN or ONLY_FIRST_REPLICA)");
  }
  std::vector<std::vector<unsigned char>> staging(static_cast<size_t>(num_copies()));
  std::vector<const void*> inputs;
  for (int i = 0; i < num_copies(); ++i) inputs.push_back(host_copy(i, staging[static_cast<size_t>(i)]));
  if (!out.on_device()) {
    reduce_across_replicas(*strategy_, reduce_op_of(aggregation_), inputs, out);
    return;
  }
#ifdef DIST_HAVE_CUDA
  std::vector<unsigned char> result(bytes_);
  reduce_across_replicas(*strategy_, reduce_op_of(aggregation_), inputs, TensorRef{result.data(), count_, dtype_});
  write_out(*strategy_, result.data(), out);
#endif
}

void Variable::update_on_read_everywhere(UpdateKind kind, const void* value) {
  if (aggregation_ != Aggregation::kSum) {
    for (int i = 0; i < num_copies(); ++i) apply_to_copy(i, value, kind);
    return;
  }
  if (kind != UpdateKind::kAssign) {
    fail_invalid(label(kind) + " in cross-replica context: an ON_READ variable with aggregation SUM supports only "
                 "assign there (as tf.distribute's SyncOnReadVariable)");
  }
  // The copies must sum back to `value` when read.
  std::vector<unsigned char> share(bytes_);
  if (bytes_ > 0) std::memcpy(share.data(), value, bytes_);
  finalize_mean(share.data(), count_, dtype_, strategy_->num_replicas_in_sync());
  for (int i = 0; i < num_copies(); ++i) apply_to_copy(i, share.data(), kind);
}

}  // namespace dist
