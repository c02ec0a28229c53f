/* MirroredStrategy: the digits MLP (examples/digits/trainer.c) on 4 logical CPU
 * devices of this process, one replica thread each, its weights mirrored on
 * every device.
 *
 *   build/examples/mirrored [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
  options.kind = DIST_STRATEGY_MIRRORED;
  options.num_cpu_devices = 4;
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, &options, &strategy));
  const int status = digits_example_main(argc, argv, strategy, "mirrored");
  dist_strategy_destroy(strategy);
  return status;
}
