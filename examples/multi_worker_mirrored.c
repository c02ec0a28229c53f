/* MultiWorkerMirroredStrategy: the digits MLP (examples/digits/trainer.c) on
 * every worker of the cluster (TF_CONFIG, as dist-run sets it), 2 logical CPU
 * replicas per worker, kept in sync by ring all-reduce. Every worker prints
 * the hash of its final weights: they are identical.
 *
 *   dist-run -n 2 -- build/examples/multi_worker_mirrored [epochs] [digits.csv.gz]
 */
#include <stdio.h>
#include <unistd.h>

#include "digits/trainer.h"

int main(int argc, char** argv) {
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
  /* How the workers' collectives travel (the demo prints it across hosts). */
  dist_comm_t* world = NULL;
  dist_comm_path_t path = DIST_COMM_PATH_SELF;
  DIGITS_CHECK(dist_comm_world(context, &world));
  DIGITS_CHECK(dist_comm_path(world, &path));
  const char* path_names[] = {"self", "point_to_point", "shared_memory", "hierarchical"};
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  printf("multi_worker_mirrored worker %d on %s: path %s\n", (int)worker, host,
         path >= 0 && path < 4 ? path_names[path] : "unknown");

  char label[64];
  snprintf(label, sizeof label, "multi_worker_mirrored worker %d", (int)worker);
  const int status = digits_example_main(argc, argv, strategy, label);
  dist_strategy_destroy(strategy);
  dist_context_destroy(context);
  dist_cluster_destroy(cluster);
  return status;
}
