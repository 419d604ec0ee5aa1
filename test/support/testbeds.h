/*
 * Testbed shortcuts (bosch/testbed.h) that fail the running test on error.
 */
#ifndef BOSCH_TEST_TESTBEDS_H
#define BOSCH_TEST_TESTBEDS_H

#include <stdint.h>

#include <bosch/testbed.h>

/* An L x G testbed with the given seed, entanglement and noise. */
bosch_testbed *make_testbed(uint32_t L, uint32_t G, uint64_t seed, double entanglement,
                            double noise);

/* The testbed's score of m. */
double tb_score(const bosch_testbed *tb, const uint8_t *m);

#endif /* BOSCH_TEST_TESTBEDS_H */
