/* OneDeviceStrategy: the digits MLP on one replica in this process.
 *
 *   build/examples/one_device [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  struct train_options train;
  const char* path = NULL;
  digits_parse_args(argc, argv, &train, &path);
  struct digits data;
  if (digits_load(path, &data) != 0) return 1;

  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, NULL, &strategy)); /* the default kind: ONE_DEVICE */

  struct train_report report;
  DIGITS_CHECK(digits_train(strategy, &data, &train, &report));
  digits_print_report("one_device", &report);
  dist_strategy_destroy(strategy);
  digits_free(&data);
  return 0;
}
