/* One rank of tests/multihost/fault-check: joins the cluster its TF_CONFIG
 * names, runs all-reduces (DIST_FAULT_BYTES, default 16 MiB) in a loop until
 * one fails, because the check cut a link or killed a rank or a host, then
 * tries one call more and destroys the context. It prints, on stdout:
 *   ready                                after the first call succeeded
 *   failed STATUS at EPOCH: MESSAGE      the first failure, EPOCH in seconds
 *   later STATUS: MESSAGE                the call after it
 *   destroyed in SECONDS                 how long dist_context_destroy took
 * and exits 0 when both calls failed with DIST_ERR_PEER_FAILED or
 * DIST_ERR_TIMEOUT, 1 otherwise (3 when it could not join). The check judges
 * the times and the messages. DIST_FAULT_TIMEOUT_MS sets the context's
 * deadline of each call (default 10000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <distribute/c_api.h>

static double epoch_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int is_peer_error(dist_status_t status) {
  return status == DIST_ERR_PEER_FAILED || status == DIST_ERR_TIMEOUT;
}

int main(void) {
  const char* bytes_setting = getenv("DIST_FAULT_BYTES");
  const char* timeout_setting = getenv("DIST_FAULT_TIMEOUT_MS");
  const uint64_t count = (bytes_setting ? strtoull(bytes_setting, NULL, 10) : (16u << 20)) / sizeof(float);
  dist_cluster_t* cluster = NULL;
  if (dist_cluster_resolve(NULL, &cluster) != DIST_OK) {
    printf("resolve: %s\n", dist_last_error());
    return 3;
  }
  dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
  options.field_mask = DIST_CONTEXT_OPT_TIMEOUT_MS | DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS;
  options.timeout_ms = timeout_setting ? atoll(timeout_setting) : 10000;
  options.connect_timeout_ms = 30000;
  dist_context_t* context = NULL;
  dist_status_t status = dist_context_create(cluster, &options, &context);
  dist_cluster_destroy(cluster);
  if (status != DIST_OK) {
    printf("context: %s: %s\n", dist_status_string(status), dist_last_error());
    return 3;
  }
  dist_comm_t* world = NULL;
  if (dist_comm_world(context, &world) != DIST_OK) {
    printf("world: %s\n", dist_last_error());
    return 3;
  }
  float* data = calloc(count > 0 ? count : 1, sizeof(float));
  dist_buffer_t buffer;
  memset(&buffer, 0, sizeof buffer);
  buffer.data = data;
  buffer.count = count;
  buffer.dtype = DIST_DTYPE_F32;
  buffer.memory_kind = DIST_MEMORY_HOST;
  status = dist_all_reduce(world, NULL, &buffer, DIST_OP_SUM, NULL);
  if (status != DIST_OK) {
    printf("first call: %s: %s\n", dist_status_string(status), dist_last_error());
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  while (status == DIST_OK) status = dist_all_reduce(world, NULL, &buffer, DIST_OP_SUM, NULL);
  printf("failed %s at %.3f: %s\n", dist_status_string(status), epoch_seconds(), dist_last_error());
  fflush(stdout);
  const dist_status_t later = dist_all_reduce(world, NULL, &buffer, DIST_OP_SUM, NULL);
  printf("later %s: %s\n", dist_status_string(later), dist_last_error());
  fflush(stdout);
  const double start = epoch_seconds();
  dist_context_destroy(context);
  printf("destroyed in %.3f\n", epoch_seconds() - start);
  free(data);
  return is_peer_error(status) && is_peer_error(later) ? 0 : 1;
}
