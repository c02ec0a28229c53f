/* Preloaded into dist-bench by test_dist_bench_tool.c (LD_PRELOAD) to show that
 * its result check catches a wrong result: each collective below runs the
 * library's own, then, on the rank named by DIST_TEST_CORRUPT_RANK, flips the
 * lowest bit of element 3 of the result when there is one. One-element calls
 * (dist-bench's own agreement between ranks) are left alone. */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdlib.h>

#include <distribute/c_api.h>

static const uint64_t kCorruptElement = 3;

static size_t element_size(dist_dtype_t dtype) {
  switch (dtype) {
    case DIST_DTYPE_I8: case DIST_DTYPE_U8: return 1;
    case DIST_DTYPE_F16: case DIST_DTYPE_BF16: return 2;
    case DIST_DTYPE_I32: case DIST_DTYPE_U32: case DIST_DTYPE_F32: return 4;
    default: return 8;
  }
}

/* Little-endian: the first byte holds the element's lowest bits. */
static void corrupt(dist_comm_t* comm, const dist_buffer_t* result, dist_status_t status) {
  const char* wanted = getenv("DIST_TEST_CORRUPT_RANK");
  int32_t rank = -1;
  if (status != DIST_OK || wanted == NULL || result == NULL || result->data == NULL) return;
  if (result->count <= kCorruptElement || dist_comm_rank(comm, &rank) != DIST_OK || rank != atoi(wanted)) return;
  ((unsigned char*)result->data)[kCorruptElement * element_size(result->dtype)] ^= 1u;
}

/* The library's definition of `name`, found past this one. */
#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

typedef dist_status_t (*reduce_fn)(dist_comm_t*, const dist_buffer_t*, const dist_buffer_t*, dist_op_t,
                                   dist_request_t**);
typedef dist_status_t (*rooted_reduce_fn)(dist_comm_t*, const dist_buffer_t*, const dist_buffer_t*, dist_op_t,
                                          int32_t, dist_request_t**);
typedef dist_status_t (*broadcast_fn)(dist_comm_t*, const dist_buffer_t*, int32_t, dist_request_t**);
typedef dist_status_t (*move_fn)(dist_comm_t*, const dist_buffer_t*, const dist_buffer_t*, dist_request_t**);

dist_status_t dist_all_reduce(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv, dist_op_t op,
                              dist_request_t** request) {
  dist_status_t status = REAL(dist_all_reduce, reduce_fn)(comm, send, recv, op, request);
  corrupt(comm, recv, status);
  return status;
}

dist_status_t dist_reduce(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv, dist_op_t op,
                          int32_t root, dist_request_t** request) {
  dist_status_t status = REAL(dist_reduce, rooted_reduce_fn)(comm, send, recv, op, root, request);
  corrupt(comm, recv, status);
  return status;
}

dist_status_t dist_broadcast(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t root, dist_request_t** request) {
  dist_status_t status = REAL(dist_broadcast, broadcast_fn)(comm, buffer, root, request);
  corrupt(comm, buffer, status);
  return status;
}

dist_status_t dist_all_gather(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                              dist_request_t** request) {
  dist_status_t status = REAL(dist_all_gather, move_fn)(comm, send, recv, request);
  corrupt(comm, recv, status);
  return status;
}

dist_status_t dist_reduce_scatter(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                                  dist_op_t op, dist_request_t** request) {
  dist_status_t status = REAL(dist_reduce_scatter, reduce_fn)(comm, send, recv, op, request);
  corrupt(comm, recv, status);
  return status;
}

dist_status_t dist_all_to_all(dist_comm_t* comm, const dist_buffer_t* send, const dist_buffer_t* recv,
                              dist_request_t** request) {
  dist_status_t status = REAL(dist_all_to_all, move_fn)(comm, send, recv, request);
  corrupt(comm, recv, status);
  return status;
}
