/* One rank of bench/faults/trials, through the public C ABI only: joins the
 * TF_CONFIG cluster with a deadline on every call, then all-reduces BYTES of
 * float32 in a loop, checking every sum, until a call fails or MAX seconds pass.
 * Reports on stdout, one line each, times on CLOCK_MONOTONIC (one clock for
 * every namespace here, so the driver can subtract its own fault time):
 *   ready RANK HOSTNAME T          after the first checked call
 *   error T STATUS CALLS MESSAGE   the first failed call
 *   later T STATUS MESSAGE         the call after it (it must fail too)
 *   destroyed T                    dist_context_destroy returned
 *   no-error CALLS                 MAX seconds passed without a failure
 * Exit 0 after "destroyed" or "no-error"; 3 when joining fails; 2 for bad
 * arguments; 4 for a wrong sum (which is a library bug, not a fault).
 *
 *   fault_worker [--bytes N] [--timeout-ms MS] [--max-seconds S]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <distribute/c_api.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int64_t number_after(int argc, char** argv, int* i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "fault_worker: %s needs a value\n", argv[*i]);
    exit(2);
  }
  char* end = NULL;
  const long long value = strtoll(argv[++*i], &end, 10);
  if (*end != '\0' || value <= 0) {
    fprintf(stderr, "fault_worker: %s takes a positive integer, not '%s'\n", argv[*i - 1], argv[*i]);
    exit(2);
  }
  return value;
}

/* One line, message flattened: the driver reads fields by spaces. */
static void report(const char* what, dist_status_t status, long calls) {
  char message[512];
  snprintf(message, sizeof message, "%s", dist_last_error());
  for (char* c = message; *c; ++c)
    if (*c == '\n') *c = ' ';
  if (calls >= 0)
    printf("%s %.6f %s %ld %s\n", what, now(), dist_status_string(status), calls, message);
  else
    printf("%s %.6f %s %s\n", what, now(), dist_status_string(status), message);
}

static dist_buffer_t floats(float* data, uint64_t count) {
  dist_buffer_t b;
  memset(&b, 0, sizeof b);
  b.data = data;
  b.count = count;
  b.dtype = DIST_DTYPE_F32;
  b.memory_kind = DIST_MEMORY_HOST;
  return b;
}

int main(int argc, char** argv) {
  int64_t bytes = 16 << 20, timeout_ms = 3000, max_seconds = 120;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--bytes") == 0) bytes = number_after(argc, argv, &i);
    else if (strcmp(argv[i], "--timeout-ms") == 0) timeout_ms = number_after(argc, argv, &i);
    else if (strcmp(argv[i], "--max-seconds") == 0) max_seconds = number_after(argc, argv, &i);
    else {
      fprintf(stderr, "fault_worker: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);

  dist_cluster_t* cluster = NULL;
  dist_status_t status = dist_cluster_resolve(NULL, &cluster);
  if (status != DIST_OK) {
    report("join-failed", status, 0);
    return 3;
  }
  dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
  options.field_mask = DIST_CONTEXT_OPT_TIMEOUT_MS | DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS;
  options.timeout_ms = timeout_ms;
  options.connect_timeout_ms = 60000;
  dist_context_t* context = NULL;
  status = dist_context_create(cluster, &options, &context);
  dist_cluster_destroy(cluster);
  dist_comm_t* world = NULL;
  int32_t rank = 0, size = 0;
  if (status == DIST_OK) status = dist_comm_world(context, &world);
  if (status == DIST_OK) status = dist_comm_rank(world, &rank);
  if (status == DIST_OK) status = dist_comm_size(world, &size);
  dist_comm_options_t comm_options = DIST_COMM_OPTIONS_INIT;
  comm_options.field_mask = DIST_COMM_OPT_TIMEOUT_MS;
  comm_options.timeout_ms = timeout_ms;
  if (status == DIST_OK) status = dist_comm_configure(world, &comm_options);
  if (status != DIST_OK) {
    report("join-failed", status, 0);
    if (context) dist_context_destroy(context);
    return 3;
  }

  const uint64_t count = (uint64_t)bytes / sizeof(float);
  float* send = malloc(count * sizeof(float));
  float* recv = malloc(count * sizeof(float));
  if (!send || !recv) {
    fprintf(stderr, "fault_worker: out of memory for %lld bytes\n", (long long)bytes);
    return 2;
  }
  /* Small integers: every sum is exact in float32. */
  for (uint64_t i = 0; i < count; ++i) send[i] = (float)(rank + 1 + (int)(i % 7));
  dist_buffer_t in = floats(send, count), out = floats(recv, count);

  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const double end = now() + (double)max_seconds;
  long calls = 0;
  for (;;) {
    recv[0] = recv[count - 1] = -7.0f;
    status = dist_all_reduce(world, &in, &out, DIST_OP_SUM, NULL);
    if (status != DIST_OK) break;
    for (uint64_t i = 0; i < count; i += 4093) {
      const double expected = (double)size * (size + 1) / 2 + (double)size * (double)(i % 7);
      if ((double)recv[i] != expected) {
        printf("wrong %.6f element %llu is %g, expected %g\n", now(), (unsigned long long)i, recv[i], expected);
        return 4;
      }
    }
    if (++calls == 1) printf("ready %d %s %.6f\n", rank, host, now());
    if (now() > end) {
      printf("no-error %ld\n", calls);
      dist_context_destroy(context);
      return 0;
    }
  }
  report("error", status, calls);
  status = dist_all_reduce(world, &in, &out, DIST_OP_SUM, NULL);
  report("later", status, -1);
  dist_context_destroy(context);
  printf("destroyed %.6f\n", now());
  free(send);
  free(recv);
  return 0;
}
