// TF's InputContext: how many input pipelines feed the sync group, which one
// this is, and how batches and data divide among them.
#pragma once

#include <cstdint>
#include <vector>

namespace dist {

class InputContext {
 public:
  // Throws invalid-argument for counts below 1 or an id outside the pipelines.
  InputContext(int32_t num_input_pipelines, int32_t input_pipeline_id, int32_t num_replicas_in_sync);

  int32_t num_input_pipelines() const { return num_input_pipelines_; }
  int32_t input_pipeline_id() const { return input_pipeline_id_; }
  int32_t num_replicas_in_sync() const { return num_replicas_in_sync_; }

  // global / replicas; throws when it does not divide.
  int64_t per_replica_batch_size(int64_t global_batch_size) const;

  // File i goes to pipeline i % pipelines; throws when some pipeline gets none.
  std::vector<int64_t> shard_files(int64_t num_files) const;

  // This pipeline's contiguous block of [0, total): {begin, count}; the first
  // total % pipelines blocks are one longer; count 0 when there is none.
  struct Range {
    int64_t begin = 0;
    int64_t count = 0;
  };
  Range shard_range(int64_t total) const;

 private:
  int32_t num_input_pipelines_;
  int32_t input_pipeline_id_;
  int32_t num_replicas_in_sync_;
};

}  // namespace dist
