/* The unfused reference of the fused-all-reduce tests: each replica
 * all-reduces its tensors one call per tensor (SUM, i32). Shared by the
 * single-process suite and the multi-process worker. */
#ifndef DIST_UNFUSED_ALL_REDUCE_H
#define DIST_UNFUSED_ALL_REDUCE_H

#include <distribute/c_api.h>

enum { kUnfusedMaxReplicas = 4, kUnfusedMaxTensors = 8 };

struct unfused_all_reduce {
  int num_tensors;
  const uint64_t* sizes;
  int32_t* tensors[kUnfusedMaxReplicas][kUnfusedMaxTensors]; /* [local replica][tensor] */
};

/* A dist_replica_fn_t; user_data is a struct unfused_all_reduce. */
static inline dist_status_t unfused_all_reduce_each(dist_replica_context_t* replica, void* user_data) {
  struct unfused_all_reduce* job = (struct unfused_all_reduce*)user_data;
  int32_t r = 0;
  dist_status_t status = dist_replica_local_index(replica, &r);
  for (int i = 0; status == DIST_OK && i < job->num_tensors; ++i) {
    dist_buffer_t b = {job->tensors[r][i], job->sizes[i], DIST_DTYPE_I32, DIST_MEMORY_HOST, NULL};
    status = dist_replica_all_reduce(replica, DIST_OP_SUM, &b);
  }
  return status;
}

#endif /* DIST_UNFUSED_ALL_REDUCE_H */
