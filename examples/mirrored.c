/* MirroredStrategy: the digits MLP on 4 logical CPU devices of this process,
 * one replica thread each, variables mirrored on every device.
 *
 *   build/examples/mirrored [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  struct train_options train;
  const char* path = NULL;
  digits_parse_args(argc, argv, &train, &path);
  struct digits data;
  if (digits_load(path, &data) != 0) return 1;

  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES;
  options.kind = DIST_STRATEGY_MIRRORED;
  options.num_cpu_devices = 4;
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, &options, &strategy));

  struct train_report report;
  DIGITS_CHECK(digits_train(strategy, &data, &train, &report));
  digits_print_report("mirrored", &report);
  dist_strategy_destroy(strategy);
  digits_free(&data);
  return 0;
}
