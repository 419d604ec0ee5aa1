/*
 * The cut of a batch into pieces for the ranks (lib/mpi/plan.c): parts
 * cover each request's samples exactly once, in order; a batch with as
 * many equal requests as ranks is not cut; a lone request is cut across
 * the ranks; and with requests of equal size every plan finishes within
 * one piece of the ideal (simulated: pieces in order to the first free
 * rank, a sample's cost 1). No MPI needed.
 */
#include <check.h>
#include <stdlib.h>

#include "mpi/plan.h"

/* Makespan of the pieces in hand-out order over `ranks` ranks. */
static size_t simulate(const size_t *k, size_t n, size_t ranks, size_t s, size_t *longest)
{
    size_t busy[64] = {0}, span = 0;
    *longest = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t parts = s < k[i] ? s : k[i];
        for (size_t p = 0; p < parts; p++) {
            size_t first, count, r = 0;
            mpi_part(k[i], parts, p, &first, &count);
            for (size_t q = 1; q < ranks; q++)
                if (busy[q] < busy[r])
                    r = q;
            busy[r] += count;
            span = busy[r] > span ? busy[r] : span;
            *longest = count > *longest ? count : *longest;
        }
    }
    return span;
}

START_TEST(parts_cover_each_request)
{
    for (size_t k = 1; k <= 40; k++)
        for (size_t parts = 1; parts <= k; parts++) {
            size_t next = 0;
            for (size_t p = 0; p < parts; p++) {
                size_t first, count;
                mpi_part(k, parts, p, &first, &count);
                ck_assert_uint_eq(first, next);
                ck_assert_uint_ge(count, k / parts);
                ck_assert_uint_le(count, (k + parts - 1) / parts);
                next = first + count;
            }
            ck_assert_uint_eq(next, k);
        }
}
END_TEST

START_TEST(cases)
{
    size_t k16[40];
    for (size_t i = 0; i < 40; i++)
        k16[i] = 16;
    ck_assert_uint_eq(mpi_parts(k16, 0, 16), 1);
    ck_assert_uint_eq(mpi_parts(k16, 3, 1), 1);
    ck_assert_uint_eq(mpi_parts(k16, 16, 16), 1); /* one request per rank */
    ck_assert_uint_eq(mpi_parts(k16, 32, 16), 1);
    ck_assert_uint_eq(mpi_parts(k16, 1, 16), 16); /* one sample per rank */
    ck_assert_uint_eq(mpi_parts(k16, 1, 15), 8);  /* 2 samples each: as fast, fewer pieces */
    ck_assert_uint_eq(mpi_parts(k16, 4, 16), 4);
    const size_t one[3] = {1, 1, 1};
    ck_assert_uint_eq(mpi_parts(one, 3, 16), 1); /* nothing to cut */
    const size_t mixed[3] = {16, 2, 1};          /* a screened request beside whole ones */
    ck_assert_uint_ge(mpi_parts(mixed, 3, 8), 2);
}
END_TEST

START_TEST(equal_requests_near_ideal)
{
    size_t k[40];
    for (size_t samples = 1; samples <= 24; samples++)
        for (size_t ranks = 2; ranks <= 17; ranks++)
            for (size_t n = 1; n <= 40; n++) {
                for (size_t i = 0; i < n; i++)
                    k[i] = samples;
                const size_t s = mpi_parts(k, n, ranks);
                ck_assert_uint_ge(s, 1);
                ck_assert_uint_le(s, samples);
                size_t longest;
                const size_t span = simulate(k, n, ranks, s, &longest);
                const size_t ideal = (n * samples + ranks - 1) / ranks;
                ck_assert_msg(span <= ideal + longest - 1 || span <= ideal,
                              "%zu requests of %zu samples on %zu ranks: %zu parts, span %zu, "
                              "ideal %zu", n, samples, ranks, s, span, ideal);
                /* Never slower than whole requests. */
                size_t whole_longest;
                ck_assert_uint_le(span, simulate(k, n, ranks, 1, &whole_longest));
            }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpi-plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, parts_cover_each_request);
    tcase_add_test(tc, cases);
    tcase_add_test(tc, equal_requests_near_ideal);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
