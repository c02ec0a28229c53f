/* MultiWorkerMirroredStrategy: the digits MLP on every worker of the cluster
 * (TF_CONFIG), 2 logical CPU replicas per worker, kept in sync by all-reduce.
 * Every worker prints the hash of its final weights: they are identical.
 *
 *   dist-run -n 2 -- build/examples/multi_worker_mirrored [epochs] [digits.csv.gz]
 */
#include <stdio.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
  struct train_options train;
  const char* path = NULL;
  digits_parse_args(argc, argv, &train, &path);
  struct digits data;
  if (digits_load(path, &data) != 0) return 1;

  dist_cluster_t* cluster = NULL;
  dist_context_t* context = NULL;
  DIGITS_CHECK(dist_cluster_resolve(NULL, &cluster));
  DIGITS_CHECK(dist_context_create(cluster, NULL, &context));

  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES | DIST_STRATEGY_OPT_COMMUNICATION;
  options.kind = DIST_STRATEGY_MULTI_WORKER_MIRRORED;
  options.num_cpu_devices = 2;
  options.communication = DIST_COMMUNICATION_RING;
  dist_strategy_t* strategy = NULL;
  DIGITS_CHECK(dist_strategy_create(context, &options, &strategy));
  int32_t in_sync = 0, worker = 0, workers = 0;
  DIGITS_CHECK(dist_strategy_num_replicas_in_sync(strategy, &in_sync));
  DIGITS_CHECK(dist_strategy_worker_index(strategy, &worker, &workers));
  if (worker == 0) printf("%d workers x 2 replicas = %d replicas in sync\n", (int)workers, (int)in_sync);

  struct train_report report;
  DIGITS_CHECK(digits_train(strategy, &data, &train, &report));
  char label[64];
  snprintf(label, sizeof label, "multi_worker_mirrored worker %d", (int)worker);
  digits_print_report(label, &report);
  dist_strategy_destroy(strategy);
  dist_context_destroy(context);
  dist_cluster_destroy(cluster);
  digits_free(&data);
  return 0;
}
