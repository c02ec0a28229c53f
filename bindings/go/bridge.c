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
