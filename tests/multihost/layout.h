/* Ranks laid out on emulated hosts: rank r runs on host host_of[r] through
 * `emulated-hosts exec RUN h -- program args`, with TF_CONFIG listing every
 * rank at its host's address (198.18.0.h+1) and the cluster token. One layout
 * runs at a time; its ranks are SIGKILLed and reaped by PID before its hosts
 * are removed, on every path (layout_teardown, exit, fatal signals). */
#ifndef DIST_TEST_MULTIHOST_LAYOUT_H
#define DIST_TEST_MULTIHOST_LAYOUT_H

#include <stddef.h>

#include <distribute/c_api.h>

#include "multiprocess/launch.h"

struct layout {
  const char* name; /* "2x2", "3+1": for messages */
  int ranks;
  int host_of[kMaxRanks];
};

/* How many hosts the layout uses (hosts are numbered from 0). */
int layout_hosts(const struct layout* layout);

/* How many ranks run on host h. */
int layout_local_size(const struct layout* layout, int host);

/* The path the world communicator must take: shared memory on one host,
 * point to point with one rank per host, hierarchical otherwise (point to
 * point where the library does not have that path yet). */
dist_comm_path_t layout_expected_path(const struct layout* layout);

/* "0,0,1,1": the host of each rank, for a worker's command line. */
void layout_hosts_text(const struct layout* layout, char* text, size_t size);

/* Ends the previous layout (as layout_teardown), makes this one's hosts and
 * starts `program args...` (args NULL-terminated, may be empty) on every
 * rank, each with the "NAME=value" entries of extra_env (NULL-terminated, may
 * be NULL). */
struct launch* layout_start(const struct layout* layout, const char* program, const char* const* args,
                            const char* const* extra_env);

/* layout_start in two steps, for a test that starts its ranks one by one: ends
 * the previous layout and makes this one's hosts (launch->addresses set), then
 * starts rank r (again, once it has exited) on its host. */
struct launch* layout_prepare(const struct layout* layout);
void layout_start_rank(int rank, const char* program, const char* const* args, const char* const* extra_env);

/* As layout_start, and rank r also gets the entries of rank_env[r] (each
 * NULL-terminated; rank_env may be NULL): what a launcher tells each task
 * (RANK, OMPI_COMM_WORLD_RANK, ...). */
struct launch* layout_start_ranks(const struct layout* layout, const char* program, const char* const* args,
                                  const char* const* extra_env, const char* const* const* rank_env);

/* Waits until every rank has printed `text`; otherwise (time out, a rank
 * exited first) kills them all and fails the test with their output. */
void layout_wait_for(const char* text, double seconds);

/* Waits up to `seconds` for every rank to exit; fails the test with their
 * output when any had to be killed. */
void layout_finish(double seconds);

/* Fails the test unless every rank exited 0, with the output of those that did not. */
void layout_expect_success(const char* what);

/* Rank r's output, copied into text (so that two can be compared). */
void layout_output(int rank, char* text, size_t size);

/* A cmocka teardown: kills and reaps the ranks, removes their output files and the hosts. */
int layout_teardown(void** state);

#endif /* DIST_TEST_MULTIHOST_LAYOUT_H */
