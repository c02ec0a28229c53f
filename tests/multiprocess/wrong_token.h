/* A task started with another cluster token than its peers', for the suites on
 * loopback (test_wrong_token) and across emulated hosts
 * (test_multihost_wrong_token). Whichever side holds the wrong token, the side
 * that connects fails with DIST_ERR_AUTH at once (within 2 s, its connect
 * deadline a minute away); the listener is left as it was: it keeps waiting,
 * a task with its token still joins, and if none comes its connect-deadline
 * error names the address that failed authentication. Every rank runs
 * collective_worker quick and is reaped by PID (launch_wait). */
#ifndef DIST_TEST_WRONG_TOKEN_H
#define DIST_TEST_WRONG_TOKEN_H

#include "multiprocess/launch.h"

/* Starts rank r of `launch` where it runs (its address is launch->addresses[r]):
 * collective_worker quick, with the "NAME=value" entries of env (NULL-terminated),
 * which set its token and connect deadline. */
typedef void (*start_rank_fn)(struct launch* launch, int rank, const char* const* env);

/* Things that are not libdistribute tasks, sent at a listening rank (NULL: none). */
typedef void (*strangers_fn)(const struct launch* launch, int rank);

/* 2 ranks. Rank 0 listens with the cluster's token; `strangers` visit it; rank 1
 * with a wrong token is refused at once, naming rank 0; then rank 1 with the
 * right token joins and the collectives give exact results. */
void expect_wrong_connector_refused(struct launch* launch, start_rank_fn start, strangers_fn strangers);

/* launch->n ranks. Rank 0 listens with a wrong token; every other rank, holding
 * the cluster's, is refused at once; rank 0 fails with DIST_ERR_TIMEOUT at its
 * connect deadline (+2 s), naming each of them and the address it connected
 * from as having failed authentication. */
void expect_wrong_listener_named(struct launch* launch, start_rank_fn start);

#endif /* DIST_TEST_WRONG_TOKEN_H */
