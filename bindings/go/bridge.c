#include <stdlib.h>

#include "_cgo_export.h"
#include "dist.h"

dist_status_t go_collective(int kind, dist_comm_t* comm, int has_send, void* send, uint64_t send_count,
                            int has_recv, void* recv, uint64_t recv_count, dist_dtype_t dtype,
                            dist_op_t op, int32_t root, dist_request_t** request) {
  dist_buffer_t s = {send, send_count, dtype, DIST_MEMORY_HOST, NULL};
  dist_buffer_t r = {recv, recv_count, dtype, DIST_MEMORY_HOST, NULL};
  const dist_buffer_t* sp = has_send ? &s : NULL;
  const dist_buffer_t* rp = has_recv ? &r : NULL;
  switch (kind) {
    case GO_ALL_REDUCE: return dist_all_reduce(comm, sp, rp, op, request);
    case GO_REDUCE: return dist_reduce(comm, sp, rp, op, root, request);
    case GO_BROADCAST: return dist_broadcast(comm, rp, root, request);
    case GO_ALL_GATHER: return dist_all_gather(comm, sp, rp, request);
    case GO_REDUCE_SCATTER: return dist_reduce_scatter(comm, sp, rp, op, request);
    case GO_ALL_TO_ALL: return dist_all_to_all(comm, sp, rp, request);
    case GO_BARRIER: return dist_barrier(comm, request);
    default: return DIST_ERR_INTERNAL; /* unreachable: kinds come from collective.go */
  }
}

dist_status_t go_p2p(int is_send, dist_comm_t* comm, void* data, uint64_t count, dist_dtype_t dtype, int32_t peer,
                     int32_t tag, dist_request_t** request) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  return is_send ? dist_send(comm, &b, peer, tag, request) : dist_recv(comm, &b, peer, tag, request);
}

dist_status_t go_recv_with_source(dist_comm_t* comm, void* data, uint64_t count, dist_dtype_t dtype, int32_t peer,
                                  int32_t tag, int32_t* source) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  dist_request_t* request = NULL;
  dist_status_t status = dist_recv(comm, &b, peer, tag, &request);
  if (status != DIST_OK) return status;
  status = dist_request_wait(request, -1);
  if (status == DIST_OK) status = dist_request_source(request, source);
  dist_request_free(request); /* keeps the thread's last error: freeing sets none */
  return status;
}

dist_status_t go_all_to_all_v(dist_comm_t* comm, void* send, uint64_t send_count, const uint64_t* send_counts,
                              const uint64_t* send_offsets, void* recv, uint64_t recv_count,
                              const uint64_t* recv_counts, const uint64_t* recv_offsets, dist_dtype_t dtype,
                              dist_request_t** request) {
  dist_buffer_t s = {send, send_count, dtype, DIST_MEMORY_HOST, NULL};
  dist_buffer_t r = {recv, recv_count, dtype, DIST_MEMORY_HOST, NULL};
  return dist_all_to_all_v(comm, &s, send_counts, send_offsets, &r, recv_counts, recv_offsets, request);
}

static void completion_trampoline(void* user_data, dist_status_t status, const char* message) {
  goRequestComplete((uintptr_t)user_data, status, (char*)message);
}

dist_status_t go_request_on_complete(dist_request_t* request, uintptr_t handle) {
  return dist_request_on_complete(request, completion_trampoline, (void*)handle);
}

static dist_status_t replica_trampoline(dist_replica_context_t* replica, void* user_data) {
  return goReplicaCall(replica, (uintptr_t)user_data);
}

dist_status_t go_strategy_run(dist_strategy_t* strategy, uintptr_t handle) {
  return dist_strategy_run(strategy, replica_trampoline, (void*)handle);
}

static dist_status_t merge_trampoline(dist_strategy_t* strategy, void* const* values, int32_t num_values,
                                      void* user_data) {
  return goMergeCall(strategy, (uintptr_t*)values, num_values, (uintptr_t)user_data);
}

dist_status_t go_replica_merge_call(dist_replica_context_t* replica, uintptr_t value, uintptr_t handle) {
  return dist_replica_merge_call(replica, merge_trampoline, (void*)value, (void*)handle);
}

static void log_trampoline(const char* message, void* user_data) {
  goServerLog((char*)message, (uintptr_t)user_data);
}

dist_status_t go_server_start(const dist_cluster_t* cluster, dist_server_options_t* options, uintptr_t log_handle,
                              dist_server_t** server) {
  if (log_handle != 0) {
    options->field_mask |= DIST_SERVER_OPT_LOG;
    options->log = log_trampoline;
    options->log_user_data = (void*)log_handle;
  }
  return dist_server_start(cluster, options, server);
}

static int32_t oob_allgather_trampoline(void* user_data, const void* send, void* recv, size_t bytes,
                                        void** request) {
  uintptr_t started = 0;
  const int32_t status = goOobAllgather((uintptr_t)user_data, (void*)send, recv, bytes, &started);
  *request = (void*)started;
  return status;
}

static int32_t oob_test_trampoline(void* user_data, void* request) {
  return goOobTest((uintptr_t)user_data, (uintptr_t)request);
}

static void oob_free_trampoline(void* user_data, void* request) {
  goOobFree((uintptr_t)user_data, (uintptr_t)request);
}

dist_status_t go_context_create_oob(int32_t rank, int32_t size, uintptr_t handle,
                                    const dist_context_options_t* options, dist_context_t** context) {
  dist_oob_t oob = {0, rank, size, oob_allgather_trampoline, oob_test_trampoline, oob_free_trampoline,
                    (void*)handle};
  return dist_context_create_oob(&oob, options, context);
}

dist_status_t go_buffer_call(int kind, dist_variable_t* variable, dist_replica_context_t* replica, void* data,
                             uint64_t count, dist_dtype_t dtype, dist_op_t op) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  switch (kind) {
    case GO_VAR_READ: return dist_variable_read(variable, replica, &b);
    case GO_VAR_ASSIGN: return dist_variable_assign(variable, replica, &b);
    case GO_VAR_ASSIGN_ADD: return dist_variable_assign_add(variable, replica, &b);
    case GO_VAR_ASSIGN_SUB: return dist_variable_assign_sub(variable, replica, &b);
    case GO_VAR_APPLY_GRADIENT: return dist_variable_apply_gradient(variable, replica, &b);
    case GO_REPLICA_ALL_REDUCE: return dist_replica_all_reduce(replica, op, &b);
    case GO_SET_RESULT: return dist_replica_set_result(replica, &b);
    default: return DIST_ERR_INTERNAL; /* unreachable: kinds come from variable.go and replica.go */
  }
}

dist_status_t go_rows_call(int kind, dist_variable_t* variable, dist_replica_context_t* replica, const int64_t* rows,
                           uint64_t num_rows, void* data, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  switch (kind) {
    case GO_ROWS_READ: return dist_variable_read_rows(variable, replica, rows, num_rows, &b);
    case GO_ROWS_ADD: return dist_variable_add_rows(variable, replica, rows, num_rows, &b);
    case GO_ROWS_APPLY: return dist_variable_apply_rows(variable, replica, rows, num_rows, &b);
    default: return DIST_ERR_INTERNAL; /* unreachable: kinds come from variable.go */
  }
}

dist_status_t go_variable_read_copy(const dist_variable_t* variable, int32_t i, void* data, uint64_t count,
                                    dist_dtype_t dtype) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  return dist_variable_read_copy(variable, i, &b);
}

dist_buffer_t* go_buffers_new(size_t n) { return calloc(n ? n : 1, sizeof(dist_buffer_t)); }

void go_buffer_set(dist_buffer_t* buffers, size_t i, void* data, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t b = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  buffers[i] = b;
}

dist_status_t go_split_batch(const dist_strategy_t* strategy, void* data, uint64_t count, dist_dtype_t dtype,
                             uint64_t rows, int64_t* offsets, int64_t* counts, int32_t n) {
  dist_buffer_t batch = {data, count, dtype, DIST_MEMORY_HOST, NULL};
  dist_buffer_t* parts = go_buffers_new((size_t)(n > 0 ? n : 0));
  if (!parts) return DIST_ERR_NO_MEMORY;
  const dist_status_t status = dist_strategy_split_batch(strategy, &batch, rows, parts, n);
  if (status == DIST_OK) {
    /* Byte offsets, not pointers: C keeps no Go pointer and Go receives none. */
    for (int32_t i = 0; i < n; ++i) {
      counts[i] = (int64_t)parts[i].count;
      offsets[i] = parts[i].data && parts[i].count ? (int64_t)((char*)parts[i].data - (char*)data) : 0;
    }
  }
  free(parts);
  return status;
}
