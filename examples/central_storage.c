/* CentralStorageStrategy: the digits MLP (examples/digits/trainer.c) computed
 * on 2 logical CPU devices, its weights held once on the host and updated
 * with the aggregate of both replicas' gradients.
 *
 *   build/examples/central_storage [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
  options.kind = DIST_STRATEGY_CENTRAL_STORAGE;
  options.num_cpu_devices = 2;
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, &options, &strategy));
  const int status = digits_example_main(argc, argv, strategy, "central_storage");
  dist_strategy_destroy(strategy);
  return status;
}
