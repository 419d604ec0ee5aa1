/*
 * Check plumbing shared by the libbosch unit tests: the per-test-case
 * timeout, adding a test case, running a suite.
 */
#ifndef BOSCH_TEST_SUITE_H
#define BOSCH_TEST_SUITE_H

#include <check.h>

/* Per-test-case timeout (seconds); generous because of sanitizer builds. */
#define TEST_TIMEOUT 120

/* Adds a test case with the common timeout. */
TCase *tcase_new(Suite *s, const char *name);

/* Runs every test of `s`, frees it; EXIT_SUCCESS when none failed. */
int run_suite(Suite *s);

#endif /* BOSCH_TEST_SUITE_H */
