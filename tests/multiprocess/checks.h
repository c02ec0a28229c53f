/* Checks for the rank programs of the multi-process suites: a failed check
 * is printed and counted, and the program goes on (so that one run reports
 * every failure) and exits non-zero at the end when `failures` is not 0. One
 * program, one translation unit. */
#ifndef DIST_TEST_CHECKS_H
#define DIST_TEST_CHECKS_H

#include <stdio.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                        \
  do {                                          \
    ++checks;                                   \
    if (!(cond)) {                              \
      ++failures;                               \
      fprintf(stderr, "check failed: " __VA_ARGS__); \
      fputc('\n', stderr);                      \
    }                                           \
  } while (0)

#endif /* DIST_TEST_CHECKS_H */
