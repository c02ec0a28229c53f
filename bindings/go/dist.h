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

#endif
