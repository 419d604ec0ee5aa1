/* bench_neighbourhood: what the default search leaves undone. Runs
 * bosch_optimize (options budget, seed and raw_scores=1, as bench_peers) on
 * testbed landscapes, then scores the whole single-swap neighbourhood of the
 * returned mask on the clean score: how many swaps still improve it, how
 * many of those turn SWA a unit whose removal alone costs more than five
 * times the swap's gain and more than 0.002 q (a "critical" unit: on the
 * circuits family, the last full unit of a circuit, i.e. an in-circuit
 * exchange), the largest gain, and how many units differ from the proven
 * optimum where the family has one. Public API only; deterministic.
 *
 * --flip-sweep K instead compares, at the same total budget B, the default
 * with the default run on B - N - K evaluations (N units) followed by a
 * sweep of exact single-unit flips: the N masks one unit off its mask
 * (infeasible, each unit's exact local effect), then the units of largest
 * gain (SWA -> full) paired in order with those of least cost (full ->
 * SWA), each pair applied and evaluated, undone when it does not gain (its
 * full unit then tried with the next SWA unit), at most K of them. A
 * prototype of a stage the library does not have (docs/benchmarks-history.md).
 *
 *   bench_neighbourhood [--family circuits] [--shape 28x8|36x8] [--rho 0.5]
 *                       [--budgets 500,1500] [--seed-base 1001] [--seeds 5]
 *                       [--flip-sweep K]
 */
#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double clean(const bosch_testbed *tb, const uint8_t *m)
{
    double s = 0.0;
    if (bosch_testbed_score_clean(tb, m, &s) != BOSCH_OK) {
        fprintf(stderr, "bench_neighbourhood: scoring failed\n");
        exit(1);
    }
    return s;
}

static int family_by_name(const char *name)
{
    for (int f = 0; f < BOSCH_TESTBED_FAMILY_LAST_; f++)
        if (strcmp(bosch_testbed_family_name(f), name) == 0)
            return f;
    fprintf(stderr, "bench_neighbourhood: unknown family '%s'\n", name);
    exit(2);
}

/* The default's mask on one instance (1 on success). */
static int run_default(bosch_testbed *tb, const bosch_problem *p, uint64_t budget, uint64_t seed,
                       uint8_t *mask)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    char buf[32];
    int rc = opt ? BOSCH_OK : BOSCH_E_NOMEM;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)budget);
    rc |= bosch_set_option(opt, "budget", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    rc |= bosch_set_option(opt, "seed", buf);
    rc |= bosch_set_option(opt, "raw_scores", "1");
    rc |= bosch_set_request_batch_evaluator(opt, bosch_testbed_request_batch_eval, tb);
    bosch_result *res = NULL;
    int ok = rc == BOSCH_OK && !bosch_is_error(bosch_optimize(opt)) &&
             bosch_get_result(opt, &res) == BOSCH_OK && bosch_result_feasible(res) &&
             bosch_result_mask(res, mask, bosch_problem_units(p)) == BOSCH_OK;
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    return ok;
}

static const double *sort_key;

static int by_key_desc(const void *a, const void *b)
{
    double x = sort_key[*(const size_t *)a], y = sort_key[*(const size_t *)b];
    return (x < y) - (x > y);
}

/* The flip sweep of --flip-sweep on mask m (score f), in place: returns the
 * evaluations it spent (n + at most max_pairs). */
static uint64_t flip_sweep(const bosch_testbed *tb, uint8_t *m, size_t n, double *f,
                           uint64_t max_pairs)
{
    double *gain = malloc(n * sizeof *gain);
    size_t *swa = malloc(n * sizeof *swa), *full = malloc(n * sizeof *full);
    if (!gain || !swa || !full) {
        fprintf(stderr, "bench_neighbourhood: out of memory\n");
        exit(1);
    }
    size_t ns = 0, nf = 0;
    for (size_t u = 0; u < n; u++) {
        m[u] ^= 1;
        gain[u] = clean(tb, m) - *f; /* the change of flipping u alone */
        m[u] ^= 1;
        if (m[u])
            swa[ns++] = u;
        else
            full[nf++] = u;
    }
    sort_key = gain;
    qsort(swa, ns, sizeof *swa, by_key_desc);  /* largest gain when made full first */
    qsort(full, nf, sizeof *full, by_key_desc); /* least loss when made SWA first */
    uint64_t used = n;
    for (size_t i = 0, j = 0; i < ns && j < nf && used < n + max_pairs &&
                              gain[swa[i]] + gain[full[j]] > 0.0;) {
        m[swa[i]] = 0, m[full[j]] = 1;
        double g = clean(tb, m);
        used++;
        if (g > *f) {
            *f = g;
            i++, j++;
        } else {
            m[swa[i]] = 1, m[full[j]] = 0;
            j++;
        }
    }
    free(gain);
    free(swa);
    free(full);
    return used;
}

/* One row of the --flip-sweep table: the default's mask m (score f) at this
 * budget against the default on budget - n - sweep evaluations plus the
 * sweep (m is reused for that run). */
static void print_sweep_row(bosch_testbed *tb, const bosch_problem *p, uint8_t *m,
                            uint64_t budget, uint64_t seed, uint64_t sweep, double f,
                            double f_swa, double range)
{
    size_t n = bosch_testbed_units(tb);
    uint64_t pre = budget > n + sweep ? budget - n - sweep : 0, used = 0;
    double q_sweep = NAN, rel = NAN; /* no sweep run: too small a budget */
    if (pre > 0 && run_default(tb, p, pre, seed, m)) {
        double fs = clean(tb, m);
        used = pre + flip_sweep(tb, m, n, &fs, sweep);
        q_sweep = (fs - f_swa) / range;
        rel = (fs - f) / (f - f_swa);
    }
    printf("| %llu | %llu | %.5f | %.5f | %+.5f | %llu |\n", (unsigned long long)budget,
           (unsigned long long)seed, (f - f_swa) / range, q_sweep, rel, (unsigned long long)used);
}

/* One row of the neighbourhood table: every single swap of the default's
 * mask m (score f), on the clean score. */
static void print_neighbourhood_row(const bosch_testbed *tb, uint8_t *m, const uint8_t *opt,
                                    int exact, uint64_t budget, uint64_t seed, double f,
                                    double f_swa, double range)
{
    size_t n = bosch_testbed_units(tb);
    unsigned improving = 0, critical = 0, differ = 0;
    double best_gain = 0.0;
    for (size_t i = 0; i < n; i++) /* i full -> SWA, j SWA -> full */
        for (size_t j = 0; !m[i] && j < n; j++) {
            if (!m[j])
                continue;
            m[i] = 1, m[j] = 0;
            double g = clean(tb, m) - f;
            m[j] = 1;
            double alone = g > 1e-12 ? clean(tb, m) - f : 0.0; /* i SWA alone */
            m[i] = 0;
            if (!(g > 1e-12))
                continue;
            improving++;
            best_gain = g > best_gain ? g : best_gain;
            critical += -alone > 5.0 * g && -alone > 0.002 * range;
        }
    for (size_t u = 0; exact && u < n; u++)
        differ += m[u] != opt[u];
    printf("| %llu | %llu | %.5f | %u | %u | %.5f | ", (unsigned long long)budget,
           (unsigned long long)seed, (f - f_swa) / range, improving, critical,
           best_gain / range);
    if (exact)
        printf("%u |\n", differ);
    else
        printf("no proven optimum |\n");
}

int main(int argc, char **argv)
{
    const char *family = "circuits", *shape = "28x8", *budgets = "500,1500";
    double rho = 0.5;
    uint64_t seed_base = 1001, seeds = 5, sweep = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_neighbourhood: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--family"))
            family = v;
        else if (!strcmp(a, "--shape"))
            shape = v;
        else if (!strcmp(a, "--rho"))
            rho = atof(v);
        else if (!strcmp(a, "--budgets"))
            budgets = v;
        else if (!strcmp(a, "--seed-base"))
            seed_base = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--seeds"))
            seeds = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--flip-sweep"))
            sweep = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "bench_neighbourhood: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    unsigned layers = 0, groups = 0;
    if (sscanf(shape, "%ux%u", &layers, &groups) != 2 || !layers || !groups) {
        fprintf(stderr, "bench_neighbourhood: --shape wants LAYERSxGROUPS\n");
        return 2;
    }
    int fam = family_by_name(family);
    if (sweep)
        printf("# The default against the default plus a flip sweep, at equal budgets\n\n%s, %s, "
               "rho %g, raw_scores=1, seeds %llu..%llu; the sweep variant runs the default on "
               "B - N - %llu evaluations (N units), then the flip sweep (bench_neighbourhood.c); "
               "q = (f - f(all SWA)) / (f_best - f(all SWA)), f_best the proven optimum where "
               "there is one (else the default's score); rel = (f_sweep - f_default) / "
               "(f_default - f(all SWA)).\n\n"
               "| budget | seed | q default | q default + sweep | rel | evaluations |\n"
               "|---|---|---|---|---|---|\n",
               family, shape, rho, (unsigned long long)seed_base,
               (unsigned long long)(seed_base + seeds - 1), (unsigned long long)sweep);
    else
        printf("# Single-swap neighbourhood of the default's mask\n\n%s, %s, rho %g, "
               "raw_scores=1, seeds %llu..%llu; q = (f - f(all SWA)) / (f_best - f(all SWA)), "
               "f_best the proven optimum where there is one (else the default's own score: "
               "q = 1).\n\n| budget | seed | q | improving swaps | of them removing a critical "
               "unit | largest gain (q) | units differing from the optimum |\n"
               "|---|---|---|---|---|---|---|\n",
               family, shape, rho, (unsigned long long)seed_base,
               (unsigned long long)(seed_base + seeds - 1));
    char *list = strdup(budgets);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t budget = strtoull(tok, NULL, 10);
        for (uint64_t seed = seed_base; seed < seed_base + seeds; seed++) {
            bosch_testbed *tb = bosch_testbed_create_family(fam, layers, groups, seed);
            bosch_problem *p = bosch_problem_create(layers, groups, 2);
            if (!tb || !p || bosch_problem_set_target_ratio(p, rho) != BOSCH_OK) {
                fprintf(stderr, "bench_neighbourhood: cannot build the instance\n");
                return 1;
            }
            size_t n = bosch_testbed_units(tb);
            uint8_t *m = malloc(n), *opt = malloc(n);
            memset(m, 1, n);
            double f_swa = clean(tb, m), f_opt = 0.0;
            int exact = bosch_testbed_exact_optimum(tb, p, opt, &f_opt) == BOSCH_OK;
            if (!run_default(tb, p, budget, seed, m)) {
                fprintf(stderr, "bench_neighbourhood: the default returned no mask\n");
                return 1;
            }
            double f = clean(tb, m);
            if (!exact)
                f_opt = f;
            double range = f_opt - f_swa;
            if (sweep)
                print_sweep_row(tb, p, m, budget, seed, sweep, f, f_swa, range);
            else
                print_neighbourhood_row(tb, m, opt, exact, budget, seed, f, f_swa, range);
            free(m);
            free(opt);
            bosch_problem_free(p);
            bosch_testbed_free(tb);
        }
    }
    free(list);
    return 0;
}
