/* OneDeviceStrategy: the digits MLP (examples/digits/trainer.c) on one replica
 * in this process.
 *
 *   build/examples/one_device [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(NULL, NULL, &strategy)); /* the default kind: ONE_DEVICE */
  const int status = digits_example_main(argc, argv, strategy, "one_device");
  dist_strategy_destroy(strategy);
  return status;
}
