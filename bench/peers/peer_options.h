/* Command line shared by the peer benchmark programs:
 *   --collective C[,C...]  allreduce allgather reduce_scatter broadcast alltoall
 *   --variant NAME         the program's variant (Gloo: algorithm; MPI: a label
 *                          naming the mpirun settings it was started with)
 *   --mode default|busypoll  Gloo's transport mode (Gloo only)
 *   --sizes LIST           bytes, comma-separated, K/M/G = KiB/MiB/GiB
 *   --budget SECONDS       time spent timing each size (about)
 *   --max-call SECONDS     a call slower than this stops the variant: larger
 *                          sizes are skipped (default 1)
 *   --header               print the CSV header line first */
#ifndef PEER_OPTIONS_H
#define PEER_OPTIONS_H

#include <stddef.h>

#include "peer_collective.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PEER_MAX_SIZES = 64, PEER_MAX_COLLECTIVES = 8 };

typedef struct {
  peer_collective_t collectives[PEER_MAX_COLLECTIVES];
  int num_collectives;
  const char* variant;
  const char* mode;
  size_t sizes[PEER_MAX_SIZES];
  int num_sizes;
  double budget_s;
  double max_call_s;
  int header;
} peer_options_t;

/* Parses argv; on a bad argument prints why and usage to stderr, returns 0. */
int peer_options_parse(int argc, char** argv, const char* default_variant, peer_options_t* opts);

/* One of a program's own options, taken out of argv before the shared ones
 * are parsed: `NAME VALUE`, or the flag `NAME` alone (its value is then "1").
 * The value is left as text for the program to check; untouched when absent. */
typedef struct {
  const char* name;
  int takes_value;
  const char** value;
} peer_own_option_t;

/* peer_options_parse of what is left after taking out `own` (ended by an
 * entry whose name is NULL). Returns 0 as peer_options_parse does. */
int peer_options_parse_own(int argc, char** argv, const char* default_variant, const peer_own_option_t* own,
                           peer_options_t* opts);

#ifdef __cplusplus
}
#endif

#endif
