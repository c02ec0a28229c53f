#include "strategy/input_context.h"

#include <string>

#include "base/status.h"

namespace dist {

InputContext::InputContext(int32_t num_input_pipelines, int32_t input_pipeline_id, int32_t num_replicas_in_sync)
    : num_input_pipelines_(num_input_pipelines),
      input_pipeline_id_(input_pipeline_id),
      num_replicas_in_sync_(num_replicas_in_sync) {
  if (num_input_pipelines < 1) {
    fail_invalid("num_input_pipelines " + std::to_string(num_input_pipelines) + " must be at least 1");
  }
  if (input_pipeline_id < 0 || input_pipeline_id >= num_input_pipelines) {
    fail_invalid("input_pipeline_id " + std::to_string(input_pipeline_id) + " is out of range for " +
                 std::to_string(num_input_pipelines) + " input pipelines");
  }
  if (num_replicas_in_sync < 1) {
    fail_invalid("num_replicas_in_sync " + std::to_string(num_replicas_in_sync) + " must be at least 1");
  }
}

int64_t InputContext::per_replica_batch_size(int64_t global_batch_size) const {
  if (global_batch_size < 0) fail_invalid("global batch size " + std::to_string(global_batch_size) + " is negative");
  if (global_batch_size % num_replicas_in_sync_ != 0) {
    fail_invalid("the global batch size " + std::to_string(global_batch_size) +
                 " is not divisible by the number of replicas in sync (" + std::to_string(num_replicas_in_sync_) +
                 ")");
  }
  return global_batch_size / num_replicas_in_sync_;
}

std::vector<int64_t> InputContext::shard_files(int64_t num_files) const {
  if (num_files < 0) fail_invalid("num_files " + std::to_string(num_files) + " is negative");
  if (num_files < num_input_pipelines_) {
    fail_invalid(std::to_string(num_files) + " files cannot be sharded across " +
                 std::to_string(num_input_pipelines_) + " input pipelines: pipelines " + std::to_string(num_files) +
                 ".." + std::to_string(num_input_pipelines_ - 1) +
                 " would get none (shard by data, e.g. an index range, instead)");
  }
  std::vector<int64_t> mine;
  for (int64_t i = input_pipeline_id_; i < num_files; i += num_input_pipelines_) mine.push_back(i);
  return mine;
}

InputContext::Range InputContext::shard_range(int64_t total) const {
  if (total < 0) fail_invalid("total " + std::to_string(total) + " is negative");
  const int64_t pipelines = num_input_pipelines_;
  const int64_t id = input_pipeline_id_;
  const int64_t base = total / pipelines;
  const int64_t longer = total % pipelines;  // the first `longer` blocks get one more
  Range range;
  range.begin = id * base + (id < longer ? id : longer);
  range.count = base + (id < longer ? 1 : 0);
  return range;
}

}  // namespace dist
