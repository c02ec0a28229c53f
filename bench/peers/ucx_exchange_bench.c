/* What UCX itself achieves for the bytes a 2-rank all-reduce must move, timed
 * like the collectives (peer_measure):
 *
 *   RANK=r SIZE=2 GLOO_STORE_DIR=D ucx_exchange_bench [--chunk BYTES] [--window W]
 *                                                      [--variant NAME] <peer options>
 *
 * Two processes each send `bytes` to the other and receive `bytes` from it, at
 * the same time, through UCX's tagged messages (whatever transports UCX_TLS
 * allows), and nothing else: no reduction, no step structure. The message
 * goes as chunks of --chunk bytes (default: one message), with up to --window
 * chunks (default 4) in flight each way, as a pipelined all-reduce sends.
 * algbw = busbw = bytes moved each way per second.
 *
 * Why it matters: with 2 ranks, every all-reduce of c bytes must send c bytes
 * each way (c/2 of inputs to reduce, c/2 of results), so its bus bandwidth
 * (= algbw for 2 ranks) can beat this exchange only by moving its bytes in a
 * way that suits the transport better than every chunking tried here. Run
 * with UCX_TLS=tcp it is the transport's own figure for the `tcp` all-reduce
 * variants in bench/compare.
 *
 * Rendezvous: each rank writes its UCP worker address to D/ucx-address-<rank>
 * (renamed into place whole) and reads the other's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "peer_csv.h"
#include "peer_measure.h"
#include "peer_options.h"

enum { kDataTag = 1, kControlTag = 2, kMaxControlValues = 64, kMaxWindow = 64 };

typedef struct {
  ucp_context_h context;
  ucp_worker_h worker;
  ucp_ep_h ep;
  int rank;
  char* send;
  char* recv;
  size_t bytes;
  size_t chunk;  /* 0: the whole message at once */
  int window;
} exchange_t;

static void die(const char* what, ucs_status_t status) {
  fprintf(stderr, "ucx_exchange_bench: %s: %s\n", what, ucs_status_string(status));
  exit(1);
}

/* Progresses until the request (or immediate status) completes. */
static void wait_request(exchange_t* x, ucs_status_ptr_t request, const char* what) {
  if (request == NULL) return;
  if (UCS_PTR_IS_ERR(request)) die(what, UCS_PTR_STATUS(request));
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) ucp_worker_progress(x->worker);
  ucp_request_free(request);
  if (status != UCS_OK) die(what, status);
}

/* Sends `bytes` from `out` and receives `bytes` into `in`, chunk by chunk
 * (chunk 0: all at once), `window` chunks each way in flight, each chunk's
 * receive posted before its send. Chunks complete in order on both sides
 * (tag matching keeps the order of one sender's messages). */
static void exchange(exchange_t* x, const char* out, char* in, size_t bytes, size_t chunk, int window,
                     ucp_tag_t tag) {
  if (chunk == 0 || chunk > bytes) chunk = bytes;
  const size_t chunks = bytes == 0 ? 0 : (bytes + chunk - 1) / chunk;
  ucs_status_ptr_t sends[kMaxWindow], receives[kMaxWindow];
  ucp_request_param_t param = {0};
  for (size_t next = 0, done = 0; done < chunks;) {
    while (next < chunks && next - done < (size_t)window) {
      const size_t offset = next * chunk;
      const size_t length = offset + chunk > bytes ? bytes - offset : chunk;
      const size_t lane = next % (size_t)window;
      receives[lane] = ucp_tag_recv_nbx(x->worker, in + offset, length, tag, (ucp_tag_t)-1, &param);
      sends[lane] = ucp_tag_send_nbx(x->ep, out + offset, length, tag, &param);
      next++;
    }
    const size_t lane = done % (size_t)window;
    wait_request(x, sends[lane], "tag send");
    wait_request(x, receives[lane], "tag receive");
    done++;
  }
}

/* What is timed: the message, as the options cut it. */
static void run_exchange(void* self) {
  exchange_t* x = self;
  exchange(x, x->send, x->recv, x->bytes, x->chunk, x->window, kDataTag);
}

static void barrier(void* self) {
  exchange_t* x = self;
  char out = 0, in = 0;
  exchange(x, &out, &in, 1, 0, 1, kControlTag);
}

static void max_over_ranks(void* self, double* v, size_t n) {
  exchange_t* x = self;
  double other[kMaxControlValues];
  if (n > kMaxControlValues) {
    fprintf(stderr, "ucx_exchange_bench: %zu values to combine, at most %d\n", n, kMaxControlValues);
    exit(1);
  }
  exchange(x, (const char*)v, (char*)other, n * sizeof *v, 0, 1, kControlTag);
  for (size_t i = 0; i < n; i++)
    if (other[i] > v[i]) v[i] = other[i];
}

static int read_environment(int* rank, const char** store) {
  const char* rank_text = getenv("RANK");
  const char* size_text = getenv("SIZE");
  *store = getenv("GLOO_STORE_DIR");
  if (!rank_text || !size_text || !*store) {
    fprintf(stderr, "ucx_exchange_bench: RANK, SIZE and GLOO_STORE_DIR must be set\n");
    return 0;
  }
  if (strcmp(size_text, "2") != 0) {
    fprintf(stderr, "ucx_exchange_bench: SIZE is %s; the exchange is between exactly 2 processes\n", size_text);
    return 0;
  }
  *rank = atoi(rank_text);
  if (*rank != 0 && *rank != 1) {
    fprintf(stderr, "ucx_exchange_bench: RANK %s is not 0 or 1\n", rank_text);
    return 0;
  }
  return 1;
}

/* Publishes this worker's address and connects to the other rank's. */
static int connect_peer(exchange_t* x, const char* store) {
  ucp_address_t* address = NULL;
  size_t length = 0;
  ucs_status_t status = ucp_worker_get_address(x->worker, &address, &length);
  if (status != UCS_OK) die("ucp_worker_get_address", status);
  char path[4096], staged[4200];
  snprintf(path, sizeof path, "%s/ucx-address-%d", store, x->rank);
  snprintf(staged, sizeof staged, "%s.tmp", path);
  FILE* out = fopen(staged, "wb");
  int written = out != NULL && fwrite(address, 1, length, out) == length;
  if (out != NULL && fclose(out) != 0) written = 0;
  ucp_worker_release_address(x->worker, address);
  if (!written || rename(staged, path) != 0) {
    fprintf(stderr, "ucx_exchange_bench: cannot publish this rank's address as %s: %s\n", path, strerror(errno));
    return 0;
  }

  snprintf(path, sizeof path, "%s/ucx-address-%d", store, 1 - x->rank);
  FILE* in = NULL;
  for (int tries = 0; tries < 3000 && !(in = fopen(path, "rb")); tries++) {
    const struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  if (!in) {
    fprintf(stderr, "ucx_exchange_bench: rank %d's address never appeared at %s\n", 1 - x->rank, path);
    return 0;
  }
  char peer[8192];
  const size_t peer_length = fread(peer, 1, sizeof peer, in);
  fclose(in);
  if (peer_length == 0 || peer_length == sizeof peer) {
    fprintf(stderr, "ucx_exchange_bench: %s holds %zu bytes, not a worker address\n", path, peer_length);
    return 0;
  }
  ucp_ep_params_t ep_params = {0};
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = (const ucp_address_t*)peer;
  status = ucp_ep_create(x->worker, &ep_params, &x->ep);
  if (status != UCS_OK) die("ucp_ep_create", status);
  return 1;
}

static void open_ucx(exchange_t* x) {
  ucp_params_t params = {0};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG;
  ucs_status_t status = ucp_init(&params, NULL, &x->context);
  if (status != UCS_OK) die("ucp_init", status);
  ucp_worker_params_t worker_params = {0};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  status = ucp_worker_create(x->context, &worker_params, &x->worker);
  if (status != UCS_OK) die("ucp_worker_create", status);
}

static void close_ucx(exchange_t* x) {
  if (x->ep) {
    ucp_request_param_t param = {0};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t closing = ucp_ep_close_nbx(x->ep, &param);
    if (closing != NULL && !UCS_PTR_IS_ERR(closing)) {
      while (ucp_request_check_status(closing) == UCS_INPROGRESS) ucp_worker_progress(x->worker);
      ucp_request_free(closing);
    }
  }
  ucp_worker_destroy(x->worker);
  ucp_cleanup(x->context);
}

/* Byte i of what `rank` sends: differs between the ranks and along the message. */
static char pattern(int rank, size_t i) { return (char)(i * 7 + (size_t)rank * 13 + 1); }

/* Times every size; rank 0 prints the rows. The first exchange of each size
 * is checked: each rank must receive exactly what the other sent. */
static int measure_all(const peer_options_t* opts, exchange_t* x) {
  for (int s = 0; s < opts->num_sizes; s++) {
    const size_t bytes = opts->sizes[s];
    x->send = malloc(bytes);
    x->recv = malloc(bytes);
    x->bytes = bytes;
    if (!x->send || !x->recv) {
      fprintf(stderr, "ucx_exchange_bench: out of memory for %zu B\n", bytes);
      return 1;
    }
    for (size_t i = 0; i < bytes; i++) x->send[i] = pattern(x->rank, i);
    memset(x->recv, 0, bytes);
    run_exchange(x);
    for (size_t i = 0; i < bytes; i++) {
      if (x->recv[i] != pattern(1 - x->rank, i)) {
        fprintf(stderr, "ucx_exchange_bench: byte %zu of %zu received from rank %d is wrong\n", i, bytes,
                1 - x->rank);
        return 1;
      }
    }
    peer_ops_t ops = {x, run_exchange, barrier, max_over_ranks};
    if (peer_measure_row(&ops, opts->budget_s, opts->max_call_s, "ucx_exchange_bench", "ucx_exchange", opts->variant,
                         2, bytes, x->rank == 0) != 0) {
      return 1;
    }
    free(x->send);
    free(x->recv);
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  const char* chunk_text = "0";
  const char* window_text = "4";
  const peer_own_option_t own[] = {{"--chunk", 1, &chunk_text}, {"--window", 1, &window_text}, {NULL, 0, NULL}};
  peer_options_t opts;
  if (!peer_options_parse_own(argc, argv, "sendrecv", own, &opts)) return 2;
  exchange_t x = {0};
  char* end = NULL;
  x.chunk = strtoull(chunk_text, &end, 10);
  if (end == chunk_text || *end != '\0') {
    fprintf(stderr, "ucx_exchange_bench: --chunk %s is not a byte count\n", chunk_text);
    return 2;
  }
  x.window = atoi(window_text);
  if (x.window < 1 || x.window > kMaxWindow) {
    fprintf(stderr, "ucx_exchange_bench: --window %s is not between 1 and %d\n", window_text, kMaxWindow);
    return 2;
  }
  const char* store = NULL;
  if (!read_environment(&x.rank, &store)) return 2;
  if (opts.header && x.rank == 0) peer_csv_header(stdout);
  open_ucx(&x);
  if (!connect_peer(&x, store)) return 1;
  const int status = measure_all(&opts, &x);
  /* Neither side closes while the other may still be exchanging. */
  if (status == 0) barrier(&x);
  close_ucx(&x);
  return status;
}
