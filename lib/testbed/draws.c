/* Random draws the landscape families share. */
#include "testbed/testbed_impl.h"

void testbed_shuffle(prng *rng, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)prng_below(rng, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

size_t testbed_near_unit(const bosch_testbed *tb, prng *rng, size_t u)
{
    uint32_t G = tb->groups, L = tb->layers, lu = (uint32_t)(u / G);
    for (;;) {
        double r = prng_uniform(rng);
        uint32_t l;
        if (r < 0.5 || L == 1)
            l = lu;
        else if (r < 0.85) {
            int up = prng_below(rng, 2) != 0;
            if (lu == 0)
                up = 1;
            if (lu + 1 == L)
                up = 0;
            l = up ? lu + 1 : lu - 1;
        } else {
            l = (uint32_t)prng_below(rng, L);
        }
        size_t v = (size_t)l * G + (size_t)prng_below(rng, G);
        if (v != u)
            return v;
    }
}
