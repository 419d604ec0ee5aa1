/*
 * The libbosch unit tests' support library (test/support, built once as
 * bosch-test-support): the public API, Check, and the generic helpers.
 * Tests of the optimizer add "support/recorder.h"; tests that read or craft
 * journals add "support/journal_files.h" (and "support/journal_runs.h").
 */
#ifndef BOSCH_TEST_SUPPORT_H
#define BOSCH_TEST_SUPPORT_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include "masks.h"
#include "mset.h"
#include "results.h"
#include "suite.h"
#include "testbeds.h"
#include "timing.h"
#include "trng.h"

#endif /* BOSCH_TEST_SUPPORT_H */
