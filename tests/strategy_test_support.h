/* Helpers shared by the single-process strategy suites. */
#ifndef DIST_STRATEGY_TEST_SUPPORT_H
#define DIST_STRATEGY_TEST_SUPPORT_H

#include "test_support.h"

/* A strategy without a context; bytes_per_pack 0 and bind_threads 0 leave the
 * defaults. Fails the test when creation fails. */
static inline dist_strategy_t* create_strategy(dist_strategy_kind_t kind, int32_t devices, uint64_t bytes_per_pack,
                                               int32_t bind_threads) {
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_NUM_CPU_DEVICES |
                       (bytes_per_pack ? DIST_STRATEGY_OPT_BYTES_PER_PACK : 0) |
                       (bind_threads ? DIST_STRATEGY_OPT_BIND_THREADS : 0);
  options.kind = kind;
  options.num_cpu_devices = devices;
  options.bytes_per_pack = bytes_per_pack;
  options.bind_threads = bind_threads;
  dist_strategy_t* strategy = NULL;
  assert_dist_ok(dist_strategy_create(NULL, &options, &strategy));
  return strategy;
}

static inline dist_strategy_t* make_strategy(dist_strategy_kind_t kind, int32_t devices) {
  return create_strategy(kind, devices, 0, 0);
}

static inline dist_buffer_t buffer_of(void* data, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  return b;
}

#endif /* DIST_STRATEGY_TEST_SUPPORT_H */
