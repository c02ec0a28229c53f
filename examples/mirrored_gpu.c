/* MirroredStrategy on this process's GPUs: one replica per visible GPU
 * (CUDA_VISIBLE_DEVICES applied), the digits MLP's weights mirrored on each,
 * every replica's forward and backward pass run by its GPU
 * (examples/digits/mlp_cuda.cu), the gradients all-reduced by the strategy's
 * cross-device ops and applied on every GPU. Without a GPU (or without CUDA)
 * it trains on one CPU device instead, and says so.
 *
 *   build/examples/mirrored_gpu [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND;
  options.kind = DIST_STRATEGY_MIRRORED;
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, &options, &strategy));
  int32_t replicas = 0;
  dist_cross_device_ops_t ops = 0;
  const char* device = NULL;
  DIGITS_CHECK(dist_strategy_num_local_replicas(strategy, &replicas));
  DIGITS_CHECK(dist_strategy_cross_device_ops(strategy, &ops));
  DIGITS_CHECK(dist_strategy_device(strategy, 0, &device));
  static const char* const kOps[] = {"AUTO", "NcclAllReduce", "HierarchicalCopyAllReduce", "ReductionToOneDevice"};
  printf("mirrored_gpu: %d replica(s), first %s, cross-device ops %s\n", (int)replicas, device,
         ops >= 0 && ops <= 3 ? kOps[ops] : "?");
  const int status = digits_example_main(argc, argv, strategy, "mirrored_gpu");
  dist_strategy_destroy(strategy);
  return status;
}
