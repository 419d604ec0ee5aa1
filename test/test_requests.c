/*
 * Evaluation requests (issue 12, deliverables 3 and 4): the fidelity and
 * draw every evaluator is asked for, confirmation draws that report an
 * honest score under noise, and multi-fidelity screening whose budget is
 * counted in full-evaluation equivalents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "support/recorder.h"
#include "support/support.h"

/* The testbed's request scores: draw 0 at fidelity 1 is the plain score,
 * other draws are independent, a fidelity f adds noise of sd
 * fidelity_noise * sqrt(1/f - 1). */
START_TEST(testbed_requests)
{
    bosch_testbed *tb = make_testbed(6, 4, 9, 0.3, 0.01);
    ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_noise", 0.02), BOSCH_OK);
    uint8_t m[24];
    double plain, s, clean;
    int differ = 0;
    double sq = 0.0;
    size_t n = 400;
    trng rng = {4};
    for (size_t k = 0; k < n; k++) {
        for (size_t u = 0; u < 24; u++)
            m[u] = (uint8_t)trng_below(&rng, 2);
        ck_assert_int_eq(bosch_testbed_score(tb, m, &plain), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score_request(tb, m, 1.0, 0, &s), BOSCH_OK);
        ck_assert(s == plain);
        ck_assert_int_eq(bosch_testbed_score_request(tb, m, 1.0, 2, &s), BOSCH_OK);
        differ += s != plain;
        double s2;
        ck_assert_int_eq(bosch_testbed_score_request(tb, m, 1.0, 2, &s2), BOSCH_OK);
        ck_assert(s2 == s); /* a request always scores the same */
        double lo;
        ck_assert_int_eq(bosch_testbed_score_request(tb, m, 0.2, 0, &lo), BOSCH_OK);
        sq += (lo - plain) * (lo - plain);
    }
    ck_assert_int_eq(differ, (int)n);
    /* sd of the fidelity-0.2 error: 0.02 * sqrt(4) = 0.04 (400 samples: within 15%). */
    double sd = sqrt(sq / n);
    ck_assert_msg(fabs(sd - 0.04) < 0.006, "screened error sd %g", sd);
    /* Fresh draws average to the clean score. */
    ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &clean), BOSCH_OK);
    double sum = 0.0;
    for (uint32_t d = 1; d <= 400; d++) {
        ck_assert_int_eq(bosch_testbed_score_request(tb, m, 1.0, d, &s), BOSCH_OK);
        sum += s;
    }
    ck_assert_msg(fabs(sum / 400 - clean) < 0.002, "mean of draws %g, clean %g", sum / 400,
                  clean);
    /* fidelity_correlation 0.9: masks one swap apart share most of their
     * screened error; the error's sd is unchanged. */
    ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_correlation", 0.9), BOSCH_OK);
    double sq_sd = 0.0, sq_nb = 0.0;
    for (size_t k = 0; k < n; k++) {
        uint8_t a[24];
        for (size_t u = 0; u < 24; u++)
            a[u] = (uint8_t)(u % 2);
        for (size_t t = 0; t < 24; t++) { /* a random permutation keeps 12 SWA */
            size_t j = t + trng_below(&rng, 24 - t);
            uint8_t x = a[t];
            a[t] = a[j];
            a[j] = x;
        }
        uint8_t b[24];
        memcpy(b, a, 24);
        size_t on = 0, off = 0;
        while (!b[on])
            on++;
        while (b[off])
            off++;
        b[on] = 0, b[off] = 1; /* one swap */
        double fa, fb, ca, cb;
        ck_assert_int_eq(bosch_testbed_score_request(tb, a, 0.2, 0, &fa), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score_request(tb, b, 0.2, 0, &fb), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score(tb, a, &ca), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score(tb, b, &cb), BOSCH_OK);
        sq_sd += (fa - ca) * (fa - ca);
        sq_nb += ((fa - ca) - (fb - cb)) * ((fa - ca) - (fb - cb));
    }
    double sd_c = sqrt(sq_sd / n), sd_nb = sqrt(sq_nb / n);
    ck_assert_msg(fabs(sd_c - 0.04) < 0.008, "correlated error sd %g", sd_c);
    /* Independent errors would give a ratio of 1; measured ~0.63 at 24 units. */
    ck_assert_msg(sd_nb < 0.75 * sqrt(2.0) * sd_c, "neighbours' error difference sd %g vs %g",
                  sd_nb, sd_c);
    ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_correlation", 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_score_request(tb, m, 0.0, 0, &s), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_score_request(tb, m, 1.5, 0, &s), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_score_request(tb, m, NAN, 0, &s), BOSCH_E_INVALID);
    bosch_testbed_free(tb);
}
END_TEST

/* Records every request the optimizer makes. */
struct req_log {
    const bosch_testbed *tb;
    size_t n, full, screened, draws;
};

static int request_eval(const uint8_t *mask, size_t units, double fidelity, uint32_t draw,
                        double *score, void *user)
{
    struct req_log *lg = user;
    lg->n++;
    lg->full += fidelity == 1.0;
    lg->screened += fidelity < 1.0;
    lg->draws += draw > 0;
    return bosch_testbed_request_eval(mask, units, fidelity, draw, score, (void *)lg->tb);
}

static bosch_optimizer *noisy_run(const bosch_problem *p, struct req_log *lg, uint64_t seed,
                                  uint64_t budget, uint32_t confirm, uint32_t top,
                                  double screen)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_seed(opt, seed), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, budget), BOSCH_OK);
    ck_assert_int_eq(bosch_set_confirm(opt, confirm), BOSCH_OK);
    ck_assert_int_eq(bosch_set_confirm_top(opt, top), BOSCH_OK);
    ck_assert_int_eq(bosch_set_screen_fidelity(opt, screen), BOSCH_OK);
    ck_assert_int_eq(bosch_set_request_evaluator(opt, request_eval, lg), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(st > 0, "%s: %s", bosch_err_name(st), bosch_optimizer_last_error(opt));
    return opt;
}

/* confirm = 24: the result's score is the mean of 24 fresh draws of its
 * mask (read back from the history), the search's own draw is kept apart,
 * the budget holds them, and over seeds the confirmed score is honest
 * while the search's is biased upwards. */
START_TEST(confirmation_draws)
{
    bosch_testbed *tb = make_testbed(8, 4, 3, 0.3, 0.02);
    bosch_problem *p = make_problem(8, 4, 16);
    double bias_search = 0.0, bias_conf = 0.0;
    int seeds = 6;
    for (int seed = 1; seed <= seeds; seed++) {
        struct req_log lg = {tb, 0, 0, 0, 0};
        bosch_optimizer *opt = noisy_run(p, &lg, (uint64_t)seed, 300, 24, 1, 1.0);
        bosch_result *r = NULL;
        ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
        ck_assert(bosch_result_feasible(r));
        ck_assert_uint_eq(bosch_result_confirmations(r), 24);
        ck_assert_uint_eq(lg.draws, 24);
        ck_assert_uint_le(bosch_result_evaluations(r, -1), 300);
        ck_assert(fabs(bosch_result_cost(r) - (double)bosch_result_evaluations(r, -1)) < 1e-9);
        uint8_t best[32], h[32];
        ck_assert_int_eq(bosch_result_mask(r, best, 32), BOSCH_OK);
        double sum = 0.0, first = NAN;
        uint32_t nd = 0;
        for (size_t i = 0; i < bosch_result_history_size(r); i++) {
            double s, fid;
            uint32_t draw;
            int stage;
            ck_assert_int_eq(bosch_result_history_entry(r, i, h, &s, &stage), BOSCH_OK);
            ck_assert_int_eq(bosch_result_history_request(r, i, &fid, &draw), BOSCH_OK);
            ck_assert(fid == 1.0);
            if (memcmp(h, best, 32) != 0)
                continue;
            if (draw == 0) {
                first = s;
            } else {
                ck_assert_int_eq(stage, BOSCH_STAGE_GROUP);
                sum += s;
                nd++;
            }
        }
        ck_assert_uint_eq(nd, 24);
        ck_assert(fabs(bosch_result_score(r) - sum / 24) < 1e-12);
        ck_assert(bosch_result_search_score(r) == first);
        ck_assert(isfinite(bosch_result_score_stderr(r)) && bosch_result_score_stderr(r) > 0);
        double clean;
        ck_assert_int_eq(bosch_testbed_score_clean(tb, best, &clean), BOSCH_OK);
        bias_search += first - clean;
        bias_conf += bosch_result_score(r) - clean;
        bosch_result_free(r);
        bosch_optimizer_free(opt);
    }
    bias_search /= seeds;
    bias_conf /= seeds;
    /* sd 0.02, 24 draws: the confirmed mean's error has sd 0.004 per seed. */
    ck_assert_msg(fabs(bias_conf) < 0.006, "confirmed bias %g", bias_conf);
    ck_assert_msg(bias_search > bias_conf + 0.01, "search bias %g vs confirmed %g", bias_search,
                  bias_conf);
    /* The minimum budget grows by the draws. */
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_budget(opt, 12), BOSCH_OK);
    ck_assert_int_eq(bosch_set_confirm(opt, 5), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_optimizer_last_error(opt), "confirmation"));
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* confirm_top = 3: the draws are shared by the three best masks and the
 * reported one has the best mean of its draws. */
START_TEST(confirmation_top)
{
    bosch_testbed *tb = make_testbed(8, 4, 5, 0.3, 0.02);
    bosch_problem *p = make_problem(8, 4, 16);
    struct req_log lg = {tb, 0, 0, 0, 0};
    bosch_optimizer *opt = noisy_run(p, &lg, 7, 300, 30, 3, 1.0);
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_uint_eq(bosch_result_confirmations(r), 10);
    size_t hn = bosch_result_history_size(r);
    /* Group the draws by mask; at most 3 masks, 10 draws each. */
    uint8_t masks[3][32], h[32];
    double sums[3] = {0};
    int counts[3] = {0}, nm = 0;
    for (size_t i = 0; i < hn; i++) {
        double s;
        uint32_t draw;
        ck_assert_int_eq(bosch_result_history_entry(r, i, h, &s, NULL), BOSCH_OK);
        ck_assert_int_eq(bosch_result_history_request(r, i, NULL, &draw), BOSCH_OK);
        if (draw == 0)
            continue;
        int j;
        for (j = 0; j < nm; j++)
            if (memcmp(masks[j], h, 32) == 0)
                break;
        ck_assert_int_lt(j, 3);
        if (j == nm)
            memcpy(masks[nm++], h, 32);
        sums[j] += s;
        counts[j]++;
    }
    ck_assert_int_eq(nm, 3);
    uint8_t best[32];
    ck_assert_int_eq(bosch_result_mask(r, best, 32), BOSCH_OK);
    int bj = -1;
    for (int j = 0; j < 3; j++) {
        ck_assert_int_eq(counts[j], 10);
        if (bj < 0 || sums[j] > sums[bj])
            bj = j;
    }
    ck_assert(memcmp(masks[bj], best, 32) == 0);
    ck_assert(fabs(bosch_result_score(r) - sums[bj] / 10) < 1e-12);
    bosch_result_free(r);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* screen_fidelity = 0.25: stage 3 screens, the cost counts a screened
 * score as 0.25 and stays within the budget, the result is a
 * full-fidelity score, a plain evaluator is refused, and the thread count
 * does not change the result. */
START_TEST(screening)
{
    bosch_testbed *tb = make_testbed(8, 4, 11, 0.3, 0.005);
    ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_noise", 0.005), BOSCH_OK);
    bosch_problem *p = make_problem(8, 4, 16);
    struct req_log lg = {tb, 0, 0, 0, 0};
    bosch_optimizer *opt = noisy_run(p, &lg, 3, 200, 0, 1, 0.25);
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert(bosch_result_feasible(r));
    ck_assert_uint_gt(lg.screened, 0);
    ck_assert_uint_eq(lg.n, bosch_result_evaluations(r, -1));
    double cost = 0.0;
    size_t hn = bosch_result_history_size(r), promoted = 0;
    uint8_t best[32], h[32];
    ck_assert_int_eq(bosch_result_mask(r, best, 32), BOSCH_OK);
    int best_full = 0;
    for (size_t i = 0; i < hn; i++) {
        double fid, s;
        int stage;
        ck_assert_int_eq(bosch_result_history_entry(r, i, h, &s, &stage), BOSCH_OK);
        ck_assert_int_eq(bosch_result_history_request(r, i, &fid, NULL), BOSCH_OK);
        ck_assert(fid == 1.0 || fid == 0.25);
        if (fid < 1.0)
            ck_assert_int_eq(stage, BOSCH_STAGE_GROUP);
        if (fid == 1.0 && stage == BOSCH_STAGE_GROUP)
            promoted++;
        if (fid == 1.0 && memcmp(h, best, 32) == 0 && s == bosch_result_score(r))
            best_full = 1;
        cost += fid;
    }
    ck_assert(best_full);
    ck_assert_uint_gt(promoted, 0);
    ck_assert(fabs(cost - bosch_result_cost(r)) < 1e-9);
    ck_assert(bosch_result_cost(r) <= 200.0 + 1e-9);
    ck_assert(bosch_result_cost(r) > 190.0); /* the budget is used */
    ck_assert_uint_gt(bosch_result_evaluations(r, -1), 200); /* more evaluations than budget */
    /* Same run on 4 threads (thread-safe evaluator): same history. */
    bosch_optimizer *o4 = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_seed(o4, 3), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(o4, 200), BOSCH_OK);
    ck_assert_int_eq(bosch_set_screen_fidelity(o4, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_set_threads(o4, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_set_request_batch_evaluator(o4, bosch_testbed_request_batch_eval, tb),
                     BOSCH_OK);
    ck_assert(bosch_optimize(o4) > 0);
    bosch_result *r4 = NULL;
    ck_assert_int_eq(bosch_get_result(o4, &r4), BOSCH_OK);
    ck_assert_uint_eq(bosch_result_history_size(r4), hn);
    for (size_t i = 0; i < hn; i++) {
        uint8_t a[32], b[32];
        double sa, sb;
        ck_assert_int_eq(bosch_result_history_entry(r, i, a, &sa, NULL), BOSCH_OK);
        ck_assert_int_eq(bosch_result_history_entry(r4, i, b, &sb, NULL), BOSCH_OK);
        ck_assert(memcmp(a, b, 32) == 0 && sa == sb);
    }
    bosch_result_free(r4);
    bosch_optimizer_free(o4);
    bosch_result_free(r);
    bosch_optimizer_free(opt);
    /* A plain evaluator cannot read the fidelity: refused before any evaluation. */
    opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_screen_fidelity(opt, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_optimizer_last_error(opt), "fidelity"));
    ck_assert_int_eq(bosch_set_screen_fidelity(opt, 0.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_screen_fidelity(opt, 1.5), BOSCH_E_INVALID);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Ask/tell hands out each candidate's request; telling request scores by
 * hand gives the callback run's result. */
START_TEST(asktell_requests)
{
    bosch_testbed *tb = make_testbed(8, 4, 13, 0.3, 0.01);
    ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_noise", 0.01), BOSCH_OK);
    bosch_problem *p = make_problem(8, 4, 16);
    struct req_log lg = {tb, 0, 0, 0, 0};
    bosch_optimizer *ref = noisy_run(p, &lg, 5, 150, 8, 2, 0.5);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_seed(opt, 5), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, 150), BOSCH_OK);
    ck_assert_int_eq(bosch_set_option(opt, "confirm", "8"), BOSCH_OK);
    ck_assert_int_eq(bosch_set_option(opt, "confirm_top", "2"), BOSCH_OK);
    ck_assert_int_eq(bosch_set_option(opt, "screen_fidelity", "0.5"), BOSCH_OK);
    size_t n, seen_draw = 0, seen_screen = 0;
    int st;
    while ((st = bosch_ask(opt, &n)) == BOSCH_OK) {
        for (size_t i = n; i-- > 0;) {
            uint8_t m[32];
            double fid, s;
            uint32_t draw;
            ck_assert_int_eq(bosch_candidate(opt, i, m), BOSCH_OK);
            ck_assert_int_eq(bosch_candidate_request(opt, i, &fid, &draw), BOSCH_OK);
            seen_draw += draw > 0;
            seen_screen += fid < 1.0;
            ck_assert_int_eq(bosch_testbed_score_request(tb, m, fid, draw, &s), BOSCH_OK);
            ck_assert_int_eq(bosch_tell(opt, i, s), BOSCH_OK);
        }
    }
    ck_assert_int_gt(st, 0);
    ck_assert_uint_eq(seen_draw, 8);
    ck_assert_uint_gt(seen_screen, 0);
    ck_assert_int_eq(bosch_candidate_request(opt, 0, NULL, NULL), BOSCH_E_INVALID);
    bosch_result *a = NULL, *b = NULL;
    ck_assert_int_eq(bosch_get_result(ref, &a), BOSCH_OK);
    ck_assert_int_eq(bosch_get_result(opt, &b), BOSCH_OK);
    ck_assert(bosch_result_score(a) == bosch_result_score(b));
    ck_assert(bosch_result_cost(a) == bosch_result_cost(b));
    ck_assert_uint_eq(bosch_result_history_size(a), bosch_result_history_size(b));
    bosch_result_free(a);
    bosch_result_free(b);
    bosch_optimizer_free(ref);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Stops its optimizer after `stop_after` requests. */
struct stopper {
    const bosch_testbed *tb;
    bosch_optimizer *opt;
    size_t calls, stop_after;
};

static int stopping_eval(const uint8_t *mask, size_t units, double fidelity, uint32_t draw,
                         double *score, void *user)
{
    struct stopper *st = user;
    if (++st->calls == st->stop_after)
        bosch_force_stop(st->opt);
    return bosch_testbed_request_eval(mask, units, fidelity, draw, score, (void *)st->tb);
}

static bosch_optimizer *journal_opt(const bosch_problem *p, const char *path, int mode)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_seed(opt, 9), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, 160), BOSCH_OK);
    ck_assert_int_eq(bosch_set_confirm(opt, 10), BOSCH_OK);
    ck_assert_int_eq(bosch_set_confirm_top(opt, 2), BOSCH_OK);
    ck_assert_int_eq(bosch_set_screen_fidelity(opt, 0.25), BOSCH_OK);
    if (path)
        ck_assert_int_eq(bosch_set_journal(opt, path, mode), BOSCH_OK);
    return opt;
}

/* A run cut twice (once in the screening, once in the confirmation draws)
 * and resumed from its journal ends with the uninterrupted run's history
 * and result, and no request is evaluated twice. */
START_TEST(journal_resume_requests)
{
    bosch_testbed *tb = make_testbed(8, 4, 17, 0.3, 0.01);
    ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_noise", 0.01), BOSCH_OK);
    bosch_problem *p = make_problem(8, 4, 16);
    struct stopper ref_st = {tb, NULL, 0, 0};
    bosch_optimizer *ref = journal_opt(p, NULL, 0);
    ref_st.opt = ref;
    ck_assert_int_eq(bosch_set_request_evaluator(ref, stopping_eval, &ref_st), BOSCH_OK);
    ck_assert(bosch_optimize(ref) > 0);
    bosch_result *a = NULL;
    ck_assert_int_eq(bosch_get_result(ref, &a), BOSCH_OK);
    size_t total = bosch_result_history_size(a);
    ck_assert_uint_eq(ref_st.calls, total);

    char path[] = "/tmp/bosch-requests-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    size_t cuts[2] = {total / 2, total - 4}, fresh = 0;
    for (int k = 0; k < 3; k++) {
        bosch_optimizer *opt = journal_opt(p, path, k == 0 ? BOSCH_JOURNAL_CREATE
                                                           : BOSCH_JOURNAL_RESUME);
        struct stopper st = {tb, opt, 0, k < 2 ? cuts[k] - fresh : 0};
        ck_assert_int_eq(bosch_set_request_evaluator(opt, stopping_eval, &st), BOSCH_OK);
        int rc = bosch_optimize(opt);
        fresh += st.calls;
        if (k < 2) {
            ck_assert_int_eq(rc, BOSCH_FORCED_STOP);
            bosch_optimizer_free(opt);
            continue;
        }
        ck_assert_int_eq(rc, bosch_result_status(a));
        bosch_result *b = NULL;
        ck_assert_int_eq(bosch_get_result(opt, &b), BOSCH_OK);
        ck_assert_uint_eq(bosch_result_history_size(b), total);
        for (size_t i = 0; i < total; i++) {
            uint8_t ma[32], mb[32];
            double sa, sb, fa, fb;
            uint32_t da, db;
            ck_assert_int_eq(bosch_result_history_entry(a, i, ma, &sa, NULL), BOSCH_OK);
            ck_assert_int_eq(bosch_result_history_entry(b, i, mb, &sb, NULL), BOSCH_OK);
            ck_assert_int_eq(bosch_result_history_request(a, i, &fa, &da), BOSCH_OK);
            ck_assert_int_eq(bosch_result_history_request(b, i, &fb, &db), BOSCH_OK);
            ck_assert(memcmp(ma, mb, 32) == 0 && sa == sb && fa == fb && da == db);
        }
        ck_assert(bosch_result_score(a) == bosch_result_score(b));
        ck_assert_uint_eq(bosch_result_confirmations(b), 5);
        ck_assert_uint_eq(bosch_result_replayed(b), total - st.calls);
        bosch_result_free(b);
        bosch_optimizer_free(opt);
    }
    ck_assert_uint_eq(fresh, total); /* nothing evaluated twice */
    unlink(path);
    bosch_result_free(a);
    bosch_optimizer_free(ref);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Screening stays on when screened scores are exact, and switches itself
 * off (logged; every later stage-3 request at full fidelity) when their
 * error swamps the differences between candidates. */
START_TEST(screening_switches_off_when_blind)
{
    bosch_problem *p = make_problem(8, 4, 16);
    for (int blind = 0; blind < 2; blind++) {
        bosch_testbed *tb = make_testbed(8, 4, 21, 0.3, 0.0);
        ck_assert_int_eq(bosch_testbed_set(tb, "fidelity_noise", blind ? 0.5 : 0.0), BOSCH_OK);
        bosch_optimizer *opt = bosch_optimizer_create(p);
        logtext lb = {{0}, 0};
        ck_assert_int_eq(bosch_set_seed(opt, 2), BOSCH_OK);
        ck_assert_int_eq(bosch_set_budget(opt, 300), BOSCH_OK);
        ck_assert_int_eq(bosch_set_screen_fidelity(opt, 0.25), BOSCH_OK);
        ck_assert_int_eq(bosch_set_log(opt, logtext_cb, &lb, BOSCH_LOG_INFO), BOSCH_OK);
        ck_assert_int_eq(bosch_set_request_batch_evaluator(opt, bosch_testbed_request_batch_eval,
                                                           tb),
                         BOSCH_OK);
        ck_assert(bosch_optimize(opt) > 0);
        bosch_result *r = NULL;
        ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
        size_t hn = bosch_result_history_size(r), screened = 0, last_screened = 0;
        for (size_t i = 0; i < hn; i++) {
            double fid;
            ck_assert_int_eq(bosch_result_history_request(r, i, &fid, NULL), BOSCH_OK);
            if (fid < 1.0)
                screened++, last_screened = i;
        }
        const char *off = strstr(lb.text, "screening off");
        if (blind) {
            ck_assert_msg(off != NULL, "no switch-off line:\n%s", lb.text);
            ck_assert_uint_lt(screened, 40);          /* the judging period only */
            ck_assert_uint_lt(last_screened, hn / 2); /* nothing screened afterwards */
        } else {
            ck_assert_msg(off == NULL, "switched off on exact screens:\n%s", lb.text);
            ck_assert_uint_gt(screened, hn / 3);
        }
        bosch_result_free(r);
        bosch_optimizer_free(opt);
        bosch_testbed_free(tb);
    }
    bosch_problem_free(p);
}
END_TEST

static Suite *requests_suite(void)
{
    Suite *s = suite_create("requests");
    TCase *tc = tcase_create("requests");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, testbed_requests);
    tcase_add_test(tc, confirmation_draws);
    tcase_add_test(tc, confirmation_top);
    tcase_add_test(tc, screening);
    tcase_add_test(tc, asktell_requests);
    tcase_add_test(tc, journal_resume_requests);
    tcase_add_test(tc, screening_switches_off_when_blind);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(requests_suite());
}
