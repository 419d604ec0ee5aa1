#include "testbeds.h"

#include <check.h>
#include <math.h>

bosch_testbed *make_testbed(uint32_t L, uint32_t G, uint64_t seed, double entanglement,
                            double noise)
{
    bosch_testbed *tb = bosch_testbed_create(L, G, seed);
    ck_assert_ptr_nonnull(tb);
    ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", entanglement), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "noise", noise), BOSCH_OK);
    return tb;
}

double tb_score(const bosch_testbed *tb, const uint8_t *m)
{
    double s = NAN;
    ck_assert_int_eq(bosch_testbed_score(tb, m, &s), BOSCH_OK);
    return s;
}
