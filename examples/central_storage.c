/* CentralStorageStrategy: the digits MLP computed on 2 logical CPU devices,
 * its weights held once on the host, updates aggregated before they apply.
 *
 *   build/examples/central_storage [epochs] [digits.csv.gz]
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
  options.kind = DIST_STRATEGY_CENTRAL_STORAGE;
  options.num_cpu_devices = 2;
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, &options, &strategy));

  struct train_report report;
  DIGITS_CHECK(digits_train(strategy, &data, &train, &report));
  digits_print_report("central_storage", &report);
  dist_strategy_destroy(strategy);
  digits_free(&data);
  return 0;
}
