/* Emulated hosts for a test program (tests/multihost/emulated-hosts, named by
 * DIST_EMULATED_HOSTS): made by a test, and always removed again: by
 * hosts_down in its teardown, at exit, and on a signal that ends the program.
 * Before removing them, the hook given to hosts_on_cleanup SIGKILLs and reaps
 * by PID the processes the test started there. A program killed outright
 * (ctest's timeout) leaves a run whose owner is gone: `emulated-hosts sweep`,
 * a ctest fixture of the suites, removes it by name. Every command this runs
 * is bounded in time. */
#ifndef DIST_TEST_MULTIHOST_HOSTS_H
#define DIST_TEST_MULTIHOST_HOSTS_H

#include <stddef.h>

struct CMUnitTest;

/* main of a multi-host suite: runs the cmocka group, or exits 77 saying why
 * (hosts_unavailable) where emulated hosts cannot be made. */
int hosts_run_group(const char* name, const struct CMUnitTest* tests, size_t count);
#define hosts_run_suite(name, tests) hosts_run_group(name, tests, sizeof(tests) / sizeof((tests)[0]))

/* NULL when hosts can be made here; else why not (from `emulated-hosts
 * check`: not root, no namespaces, a tool missing). */
const char* hosts_unavailable(void);

/* Makes `count` hosts owned by this process, and removes them at exit or on a
 * fatal signal if hosts_down has not. Fails the running test when it cannot. */
void hosts_up(int count);

/* The next hosts_up's hosts buffer at most `bytes` per TCP socket and
 * direction (hosts short of memory); later ones take the kernel's default. */
void hosts_limit_socket_buffers(int bytes);

/* Kills what runs on the hosts (the cleanup hook first) and removes them; a
 * no-op when none are up. */
void hosts_down(void);

/* Called before the hosts are removed, also from a signal handler: it may
 * only use async-signal-safe calls (kill, waitpid). */
void hosts_on_cleanup(void (*hook)(void));

/* The name of the current run (dhXXXXXX), for `emulated-hosts exec`. */
const char* hosts_run(void);

/* The address of host i inside the hosts (198.18.0.i+1) and its hostname. */
void hosts_address(int host, char* address, size_t size);
void hosts_hostname(int host, char* hostname, size_t size);

/* Cuts host i's link (up = 0) or connects it again (up = 1). */
void hosts_link(int host, int up);

/* SIGKILLs every process on host i. */
void hosts_kill(int host);

/* The path of the emulated-hosts script (fails the test when unset). */
const char* hosts_script(void);

#endif /* DIST_TEST_MULTIHOST_HOSTS_H */
