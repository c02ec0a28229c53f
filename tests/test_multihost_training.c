/* The training example across emulated hosts: examples/multi_worker_mirrored
 * (the digits MLP under MULTI_WORKER_MIRRORED, 2 replicas per worker) on 2
 * hosts x 2 workers learns the digits and ends with the same weights on all
 * four workers, bit for bit (the FNV-1a hash of every weight each prints).
 * Skips (77), saying why, where emulated hosts cannot be made (not root);
 * skips the test where the example or its data is missing. */
#include <unistd.h>

#include "digits/digits.h"
#include "multihost/hosts.h"
#include "multihost/layout.h"
#include "test_support.h"

static const struct layout k2x2 = {"2x2", 4, {0, 0, 1, 1}};

enum { kEpochs = 20 };

static void test_identical_weights_2x2(void** state) {
  (void)state;
  const char* example = getenv("DIST_MULTI_WORKER_MIRRORED");
  if (example == NULL || access(DIGITS_DEFAULT_PATH, R_OK) != 0) {
    print_message("skipped: the example is not built (zlib) or %s is missing (python3-sklearn)\n",
                  DIGITS_DEFAULT_PATH);
    skip();
  }
  char epochs[16];
  snprintf(epochs, sizeof epochs, "%d", kEpochs);
  const char* args[] = {epochs, DIGITS_DEFAULT_PATH, NULL};
  layout_start(&k2x2, example, args, NULL);
  layout_finish(240);
  layout_expect_success("multi_worker_mirrored");
  char first_hash[32] = "";
  for (int r = 0; r < k2x2.ranks; ++r) {
    char output[65536], prefix[64], hash[32] = "";
    double accuracy = 0;
    layout_output(r, output, sizeof output);
    snprintf(prefix, sizeof prefix, "multi_worker_mirrored worker %d: ", r);
    const char* report = strstr(output, prefix);
    const char* accuracy_text = report != NULL ? strstr(report, "test accuracy ") : NULL;
    const char* hash_text = report != NULL ? strstr(report, "weights fnv1a64 ") : NULL;
    if (accuracy_text == NULL || hash_text == NULL || sscanf(accuracy_text, "test accuracy %lf", &accuracy) != 1 ||
        sscanf(hash_text, "weights fnv1a64 %31s", hash) != 1) {
      fail_msg("worker %d printed no report:\n%s", r, output);
    }
    print_message("worker %d on host %d: test accuracy %.4f, weights %s\n", r, k2x2.host_of[r], accuracy, hash);
    /* The MLP reaches about 0.9 on the held-out digits in 20 epochs; a
     * broken gradient exchange does not get near it. */
    if (accuracy < 0.85) fail_msg("worker %d: test accuracy %.4f after %d epochs", r, accuracy, kEpochs);
    if (r == 0) snprintf(first_hash, sizeof first_hash, "%s", hash);
    assert_string_equal(hash, first_hash);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_identical_weights_2x2, layout_teardown),
  };
  return hosts_run_suite("multihost_training", tests);
}
