/* What the collective rank programs of the multi-process and multi-host
 * suites share: checks (checks.h), joining the cluster their launcher
 * described in TF_CONFIG, the world communicator, and host buffers. One
 * program per rank, one translation unit. */
#ifndef DIST_TEST_WORKER_SUPPORT_H
#define DIST_TEST_WORKER_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <distribute/c_api.h>

#include "checks.h"

/* CLOCK_MONOTONIC: one clock for every process of the machine, emulated
 * hosts included, so a launcher can compare a rank's times with its own. */
static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static dist_context_t* join(int64_t timeout_ms) {
  dist_cluster_t* cluster = NULL;
  if (dist_cluster_resolve(NULL, &cluster) != DIST_OK) {
    fprintf(stderr, "resolve: %s\n", dist_last_error());
    exit(2);
  }
  dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
  options.field_mask = DIST_CONTEXT_OPT_TIMEOUT_MS | DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS;
  options.timeout_ms = timeout_ms;
  const char* connect_ms = getenv("DIST_TEST_CONNECT_MS");
  options.connect_timeout_ms = connect_ms ? atoll(connect_ms) : 30000;
  dist_context_t* context = NULL;
  const double start = now_seconds();
  dist_status_t status = dist_context_create(cluster, &options, &context);
  dist_cluster_destroy(cluster);
  if (status != DIST_OK) {
    /* The time it took: tests bound it by the connect deadline. */
    printf("context after %.3f s: %s: %s\n", now_seconds() - start, dist_status_string(status), dist_last_error());
    fflush(stdout);
    exit(3);
  }
  return context;
}

/* The world communicator, this rank and the rank count (n may be NULL);
 * exits 2, saying why, when the context cannot give them. */
static dist_comm_t* world_of(dist_context_t* context, int32_t* rank, int32_t* n) {
  dist_comm_t* world = NULL;
  int32_t size = 0;
  if (dist_comm_world(context, &world) != DIST_OK || dist_comm_rank(world, rank) != DIST_OK ||
      dist_comm_size(world, &size) != DIST_OK) {
    fprintf(stderr, "world communicator: %s\n", dist_last_error());
    exit(2);
  }
  if (n != NULL) *n = size;
  return world;
}

static dist_buffer_t buffer_of(void* data, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t b;
  memset(&b, 0, sizeof b);
  b.data = data;
  b.count = count;
  b.dtype = dtype;
  b.memory_kind = DIST_MEMORY_HOST;
  return b;
}

#endif /* DIST_TEST_WORKER_SUPPORT_H */
