/* The C side of the Go binding: the header, and bridges that build the
 * dist_buffer_t descriptors in C memory, so that no Go memory passed to C ever
 * holds a Go pointer (cgo's pointer rules). */
#ifndef DIST_GO_BRIDGE_H
#define DIST_GO_BRIDGE_H

#ifdef DIST_INSTALLED
#include <distribute/c_api.h>
#else
#include "../../include/c_api.h"
#endif

/* Which collective a bridge call runs. */
enum {
  GO_ALL_REDUCE, GO_REDUCE, GO_BROADCAST, GO_ALL_GATHER, GO_REDUCE_SCATTER, GO_ALL_TO_ALL, GO_BARRIER
};

/* Runs one collective; a NULL send (or recv) data pointer with has_* == 0 passes a
 * NULL descriptor (in place, or no buffer on a non-root). */
dist_status_t go_collective(int kind, dist_comm_t* comm, int has_send, void* send, uint64_t send_count,
                            int has_recv, void* recv, uint64_t recv_count, dist_dtype_t dtype,
                            dist_op_t op, int32_t root, dist_request_t** request);

/* Point to point: dist_send (is_send) or dist_recv over one descriptor built here. */
dist_status_t go_p2p(int is_send, dist_comm_t* comm, void* data, uint64_t count, dist_dtype_t dtype, int32_t peer,
                     int32_t tag, dist_request_t** request);
/* A blocking dist_recv that also reports the sender: through a request waited for,
 * read and freed within this one call, so C keeps no Go pointer after it. */
dist_status_t go_recv_with_source(dist_comm_t* comm, void* data, uint64_t count, dist_dtype_t dtype, int32_t peer,
                                  int32_t tag, int32_t* source);
/* dist_all_to_all_v with the two descriptors built here. */
dist_status_t go_all_to_all_v(dist_comm_t* comm, void* send, uint64_t send_count, const uint64_t* send_counts,
                              const uint64_t* send_offsets, void* recv, uint64_t recv_count,
                              const uint64_t* recv_counts, const uint64_t* recv_offsets, dist_dtype_t dtype,
                              dist_request_t** request);
/* dist_request_on_complete with the trampoline calling goRequestComplete with that cgo.Handle. */
dist_status_t go_request_on_complete(dist_request_t* request, uintptr_t handle);

/* Strategy callbacks: user_data carries a runtime/cgo.Handle (an integer, never a
 * Go pointer); the trampolines call the exported Go functions of callback.go. */
dist_status_t go_strategy_run(dist_strategy_t* strategy, uintptr_t handle);
dist_status_t go_replica_merge_call(dist_replica_context_t* replica, uintptr_t value, uintptr_t handle);

/* dist_server_start with, when log_handle is not 0, the log trampoline calling
 * goServerLog with that cgo.Handle. */
dist_status_t go_server_start(const dist_cluster_t* cluster, dist_server_options_t* options, uintptr_t log_handle,
                              dist_server_t** server);

/* dist_context_create_oob with the exchange trampolines calling goOobAllgather,
 * goOobTest and goOobFree with that cgo.Handle; each request is a cgo.Handle too. */
dist_status_t go_context_create_oob(int32_t rank, int32_t size, uintptr_t handle,
                                    const dist_context_options_t* options, dist_context_t** context);

/* Single-buffer calls of replicas and variables, with the descriptor built here. */
enum {
  GO_VAR_READ,
  GO_VAR_ASSIGN,
  GO_VAR_ASSIGN_ADD,
  GO_VAR_ASSIGN_SUB,
  GO_VAR_APPLY_GRADIENT,
  GO_REPLICA_ALL_REDUCE,
  GO_SET_RESULT
};
dist_status_t go_buffer_call(int kind, dist_variable_t* variable, dist_replica_context_t* replica, void* data,
                             uint64_t count, dist_dtype_t dtype, dist_op_t op);
/* The row calls of variables on parameter servers: read, add or apply rows. */
enum { GO_ROWS_READ, GO_ROWS_ADD, GO_ROWS_APPLY };
dist_status_t go_rows_call(int kind, dist_variable_t* variable, dist_replica_context_t* replica, const int64_t* rows,
                           uint64_t num_rows, void* data, uint64_t count, dist_dtype_t dtype);
dist_status_t go_variable_read_copy(const dist_variable_t* variable, int32_t i, void* data, uint64_t count,
                                    dist_dtype_t dtype);

/* Descriptor arrays over C memory (data copied in by the caller). */
dist_buffer_t* go_buffers_new(size_t n);
void go_buffer_set(dist_buffer_t* buffers, size_t i, void* data, uint64_t count, dist_dtype_t dtype);

/* dist_strategy_split_batch, answered as element offsets into the batch. */
dist_status_t go_split_batch(const dist_strategy_t* strategy, void* data, uint64_t count, dist_dtype_t dtype,
                             uint64_t rows, int64_t* offsets, int64_t* counts, int32_t n);

#endif
