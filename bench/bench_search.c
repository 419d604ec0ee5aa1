/* bench_search: search quality of BOSCH and its baselines at equal
 * evaluation budgets on synthetic testbed landscapes, plus the library's own
 * overhead per evaluation.
 *
 * Everything here uses the public API only (<bosch/bosch.h>, <bosch/testbed.h>).
 * The quality tables are machine-independent: every run is seeded and the
 * library is deterministic, so the same flags print the same numbers on any
 * machine and with any --threads value. Only the overhead section (wall time)
 * depends on the machine.
 *
 *   bench_search [--quick] [--budget N] [--seeds K] [--threads T]
 *                [--noise SD] [--ent LIST] [--overhead-evals N] [--overhead-batch N]
 *                [--no-overhead] [--no-quality]
 *
 * For each landscape shape (Qwen3-1.7B: 28 layers x 8 KV groups, Qwen3-8B:
 * 36 x 8), target ratio rho, entanglement and landscape seed, every method
 * below picks a mask; its quality is the noise-free normalised score
 *   S^ = (S(z) - S(all SWA)) / (S(all full) - S(all SWA))
 * computed with bosch_testbed_score_clean(). Methods see the (possibly noisy)
 * bosch_testbed_score() only.
 */
#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

struct shape {
    const char *name;
    uint32_t layers, groups, heads_per_group;
};

static const struct shape shapes[] = {
    {"Qwen3-1.7B (28x8)", 28, 8, 2},
    {"Qwen3-8B (36x8)", 36, 8, 4},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static const double rhos[] = {0.25, 0.5, 0.75, 0.875};
#define N_RHOS (sizeof rhos / sizeof rhos[0])

#define MAX_ENTS 8

struct config {
    uint64_t budget;
    unsigned seeds;
    unsigned threads;
    double noise;
    double ents[MAX_ENTS];
    unsigned nents;
    uint64_t overhead_evals;
    unsigned overhead_batch; /* 0: the library's default batch size */
    int overhead, quality, quick;
};

/* ------------------------------------------------------------------------ */
/* Methods                                                                   */
/* ------------------------------------------------------------------------ */

enum kind { K_BOSCH, K_RANDOM_SEARCH, K_ABLATION, K_LAYERS };

/* A method. K_BOSCH methods set up to three options by name (everything
 * else default). `sweep` methods are settings variations of BOSCH auto:
 * they appear in the overall and sweep tables, not in the per-shape tables. */
struct method {
    const char *name;
    enum kind kind;
    const char *opt[3][2];
    int pattern; /* K_LAYERS */
    int sweep;
};

static const struct method methods[] = {
    {"BOSCH auto (default)", K_BOSCH, {{0}}, 0, 0},
    {"BOSCH strategy=random", K_BOSCH, {{"strategy", "random"}}, 0, 0},
    {"BOSCH strategy=swap", K_BOSCH, {{"strategy", "swap"}}, 0, 0},
    {"BOSCH strategy=ea", K_BOSCH, {{"strategy", "ea"}}, 0, 0},
    {"BOSCH strategy=mads", K_BOSCH, {{"strategy", "mads"}}, 0, 0},
    {"BOSCH variant=probe-only", K_BOSCH, {{"variant", "probe-only"}}, 0, 0},
    {"BOSCH variant=group-only", K_BOSCH, {{"variant", "group-only"}}, 0, 0},
    {"BOSCH variant=layer-level", K_BOSCH, {{"variant", "layer-level"}}, 0, 0},
    {"random search (global)", K_RANDOM_SEARCH, {{0}}, 0, 0},
    {"single-unit ablation ranking", K_ABLATION, {{0}}, 0, 0},
    {"layers RAND", K_LAYERS, {{0}}, BOSCH_LAYERS_RAND, 0},
    {"layers INTR", K_LAYERS, {{0}}, BOSCH_LAYERS_INTR, 0},
    {"layers BME", K_LAYERS, {{0}}, BOSCH_LAYERS_BME, 0},
    /* Settings sweep: one option changed from the library's defaults
     * (printed at run time from bosch_get_option), plus the defaults the
     * library had before this benchmark, for comparison. */
    {"auto, ratio_spread=0", K_BOSCH, {{"ratio_spread", "0"}}, 0, 1},
    {"auto, ratio_spread=0.25", K_BOSCH, {{"ratio_spread", "0.25"}}, 0, 1},
    {"auto, ratio_spread=0.75", K_BOSCH, {{"ratio_spread", "0.75"}}, 0, 1},
    {"auto, ratio_spread=1", K_BOSCH, {{"ratio_spread", "1"}}, 0, 1},
    {"auto, probe_fraction=0.1", K_BOSCH, {{"probe_fraction", "0.1"}}, 0, 1},
    {"auto, probe_fraction=0.3", K_BOSCH, {{"probe_fraction", "0.3"}}, 0, 1},
    {"auto, probe_fraction=0.7", K_BOSCH, {{"probe_fraction", "0.7"}}, 0, 1},
    {"auto, polish_fraction=0", K_BOSCH, {{"polish_fraction", "0"}}, 0, 1},
    {"auto, polish_fraction=0.1", K_BOSCH, {{"polish_fraction", "0.1"}}, 0, 1},
    {"auto, polish_fraction=0.25", K_BOSCH, {{"polish_fraction", "0.25"}}, 0, 1},
    {"auto, polish_fraction=0.75", K_BOSCH, {{"polish_fraction", "0.75"}}, 0, 1},
    {"auto, polish_fraction=1", K_BOSCH, {{"polish_fraction", "1"}}, 0, 1},
    {"auto, group_cap=24", K_BOSCH, {{"group_cap", "24"}}, 0, 1},
    {"auto, group_cap=96", K_BOSCH, {{"group_cap", "96"}}, 0, 1},
    {"group_strategy=ea", K_BOSCH, {{"group_strategy", "ea"}}, 0, 1},
    {"earlier defaults: ea, probe 0.3, polish 0.1", K_BOSCH,
     {{"strategy", "ea"}, {"probe_fraction", "0.3"}, {"polish_fraction", "0.1"}}, 0, 1},
    {"paper's stage 3 (polish 0), ea, probe 0.3", K_BOSCH,
     {{"strategy", "ea"}, {"probe_fraction", "0.3"}, {"polish_fraction", "0"}}, 0, 1},
};
#define N_METHODS (sizeof methods / sizeof methods[0])
_Static_assert(N_METHODS <= 64, "off_target_reported is too small");
enum { M_AUTO = 0, M_RANDOM_SEARCH = 8, M_ABLATION = 9 };

/* One measured cell: (shape, rho, entanglement, seed, method). */
struct cell {
    double shat;    /* noise-free normalised score of the returned mask */
    uint64_t evals; /* evaluations spent */
    int ok;         /* a mask was produced */
    int off_target; /* the mask breaks the problem's constraints (wrong SWA count) */
    uint32_t swa;   /* SWA units in the mask */
};

static struct config cfg;
static struct cell *cells; /* [shape][rho][ent][seed][method] */
static int bugs_seen;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int off_target_reported[64];

/* 1 the first time method m returns an off-target mask it called feasible. */
static int first_off_target(size_t m)
{
    pthread_mutex_lock(&lock);
    int first = !off_target_reported[m];
    off_target_reported[m] = 1;
    pthread_mutex_unlock(&lock);
    return first;
}

static size_t cell_index(size_t s, size_t r, size_t e, size_t k, size_t m)
{
    return ((((s * N_RHOS + r) * cfg.nents + e) * cfg.seeds + k) * N_METHODS) + m;
}

/* Something the library's contract rules out: counted, printed to stderr. */
static void report_bug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&lock);
    bugs_seen++;
    fprintf(stderr, "\nBUG? ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    pthread_mutex_unlock(&lock);
    va_end(ap);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* One landscape instance                                                    */
/* ------------------------------------------------------------------------ */

struct instance {
    const struct shape *sh;
    double rho, ent;
    uint64_t seed;
    bosch_testbed *tb;
    bosch_problem *prob;
    size_t units;
    double s_full, s_swa; /* clean anchors */
};

static double clean_shat(const struct instance *in, const uint8_t *mask)
{
    double s = NAN;
    if (bosch_testbed_score_clean(in->tb, mask, &s) != BOSCH_OK)
        return NAN;
    return (s - in->s_swa) / (in->s_full - in->s_swa);
}

static int set_opt(bosch_optimizer *opt, const char *name, const char *value)
{
    int rc = bosch_set_option(opt, name, value);
    if (rc != BOSCH_OK)
        fprintf(stderr, "bench: option %s=%s: %s (%s)\n", name, value, bosch_strerror(rc),
                bosch_optimizer_last_error(opt));
    return rc;
}

static struct cell run_bosch(const struct instance *in, const struct method *m, uint8_t *mask)
{
    struct cell c = {NAN, 0, 0, 0, 0};
    bosch_optimizer *opt = bosch_optimizer_create(in->prob);
    if (!opt)
        return c;
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)cfg.budget);
    int rc = set_opt(opt, "budget", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)in->seed);
    rc |= set_opt(opt, "seed", buf);
    for (int i = 0; i < 3 && m->opt[i][0]; i++)
        rc |= set_opt(opt, m->opt[i][0], m->opt[i][1]);
    rc |= bosch_set_batch_evaluator(opt, bosch_testbed_batch_eval, in->tb);
    if (rc != BOSCH_OK) {
        bosch_optimizer_free(opt);
        return c;
    }
    int st = bosch_optimize(opt);
    if (bosch_is_error(st)) {
        report_bug("bosch_optimize (%s, %s rho=%g ent=%g seed=%llu): %s: %s", m->name,
                   in->sh->name, in->rho, in->ent, (unsigned long long)in->seed,
                   bosch_err_name(st), bosch_optimizer_last_error(opt));
    }
    bosch_result *res = NULL;
    if (bosch_get_result(opt, &res) == BOSCH_OK) {
        c.evals = bosch_result_evaluations(res, -1);
        if (bosch_result_feasible(res) && bosch_result_mask(res, mask, in->units) == BOSCH_OK) {
            c.ok = 1;
            c.shat = clean_shat(in, mask);
            /* Without noise the optimizer's own S^ (its anchors are evaluated
             * by the same testbed) must equal ours. */
            if (cfg.noise == 0.0 && fabs(bosch_result_normalized_score(res) - c.shat) > 1e-9)
                report_bug("%s: result S^ %.12g differs from the clean S^ %.12g", m->name,
                           bosch_result_normalized_score(res), c.shat);
        } else {
            report_bug("%s: no feasible result mask (feasible flag %d, %llu evaluations)",
                       m->name, bosch_result_feasible(res), (unsigned long long)c.evals);
        }
        if (c.evals > cfg.budget)
            report_bug("%s: %llu evaluations exceed the budget %llu", m->name,
                       (unsigned long long)c.evals, (unsigned long long)cfg.budget);
        bosch_result_free(res);
    }
    bosch_optimizer_free(opt);
    return c;
}

static int tb_objective(const uint8_t *x, size_t n, double *value, void *user)
{
    (void)n;
    return bosch_testbed_score(user, x, value);
}

/* Plain random search: uniform feasible masks (exact target count, one block
 * of all units), best kept, through the library's own "random" strategy. */
static struct cell run_random_search(const struct instance *in, uint8_t *mask)
{
    struct cell c = {NAN, 0, 0, 0, 0};
    size_t n = in->units;
    uint32_t *block_of = calloc(n, sizeof *block_of);
    uint32_t count = (uint32_t)bosch_problem_target_units(in->prob);
    bosch_strategy *s = bosch_strategy_builtin("random");
    bosch_subproblem *sp = block_of ? bosch_subproblem_create(n, 1, block_of, &count, in->seed)
                                    : NULL;
    if (s && sp) {
        double best = NAN;
        uint64_t used = 0;
        int rc = bosch_strategy_solve(s, sp, tb_objective, in->tb, cfg.budget, 8, mask, &best,
                                      &used);
        if (bosch_is_error(rc)) {
            report_bug("random search: bosch_strategy_solve failed (%s)", bosch_err_name(rc));
        } else {
            c.evals = used;
            c.ok = 1;
            c.shat = clean_shat(in, mask);
        }
    }
    bosch_subproblem_free(sp);
    bosch_strategy_free(s);
    free(block_of);
    return c;
}

/* Single-unit ablation: importance(u) = S(full) - S(only u SWA), lowest
 * importance goes SWA first (bosch_baseline_static). N + 1 evaluations. */
static struct cell run_ablation(const struct instance *in, uint8_t *mask)
{
    struct cell c = {NAN, 0, 0, 0, 0};
    size_t n = in->units;
    double *imp = malloc(n * sizeof *imp);
    uint8_t *z = calloc(n, 1);
    double s_full = NAN;
    if (imp && z && bosch_testbed_score(in->tb, z, &s_full) == BOSCH_OK) {
        c.evals = 1;
        for (size_t u = 0; u < n; u++) {
            double s = NAN;
            z[u] = 1;
            bosch_testbed_score(in->tb, z, &s);
            z[u] = 0;
            imp[u] = s_full - s;
            c.evals++;
        }
        int rc = bosch_baseline_static(in->prob, imp, mask);
        if (rc == BOSCH_OK) {
            c.ok = 1;
            c.shat = clean_shat(in, mask);
        } else {
            report_bug("bosch_baseline_static: %s", bosch_err_name(rc));
        }
    }
    free(imp);
    free(z);
    return c;
}

static struct cell run_layers(const struct instance *in, int pattern, uint8_t *mask)
{
    struct cell c = {NAN, 0, 0, 0, 0};
    int rc = bosch_baseline_layers(in->prob, pattern, in->seed, mask);
    if (rc == BOSCH_OK) {
        c.ok = 1;
        c.shat = clean_shat(in, mask);
    } else {
        report_bug("bosch_baseline_layers: %s", bosch_err_name(rc));
    }
    return c;
}

static int setup_instance(struct instance *in)
{
    in->tb = bosch_testbed_create(in->sh->layers, in->sh->groups, in->seed);
    in->prob = bosch_problem_create(in->sh->layers, in->sh->groups, in->sh->heads_per_group);
    if (!in->tb || !in->prob)
        return -1;
    if (bosch_testbed_set(in->tb, "entanglement", in->ent) != BOSCH_OK ||
        bosch_testbed_set(in->tb, "noise", cfg.noise) != BOSCH_OK ||
        bosch_problem_set_target_ratio(in->prob, in->rho) != BOSCH_OK)
        return -1;
    in->units = bosch_testbed_units(in->tb);
    uint8_t *z = calloc(in->units, 1);
    if (!z)
        return -1;
    bosch_testbed_score_clean(in->tb, z, &in->s_full);
    memset(z, 1, in->units);
    bosch_testbed_score_clean(in->tb, z, &in->s_swa);
    free(z);
    return in->s_full > in->s_swa ? 0 : -1;
}

static void run_instance(size_t s, size_t r, size_t e, size_t k)
{
    struct instance in = {&shapes[s], rhos[r], cfg.ents[e], (uint64_t)k + 1, NULL, NULL, 0, 0, 0};
    if (setup_instance(&in) != 0) {
        fprintf(stderr, "bench: cannot set up instance %s rho=%g ent=%g seed=%zu\n",
                in.sh->name, in.rho, in.ent, k + 1);
        exit(1);
    }
    uint8_t *mask = malloc(in.units);
    if (!mask)
        exit(1);
    for (size_t m = 0; m < N_METHODS; m++) {
        const struct method *me = &methods[m];
        struct cell c;
        memset(mask, 0, in.units);
        switch (me->kind) {
        case K_BOSCH:
            c = run_bosch(&in, me, mask);
            break;
        case K_RANDOM_SEARCH:
            c = run_random_search(&in, mask);
            break;
        case K_ABLATION:
            c = run_ablation(&in, mask);
            break;
        default:
            c = run_layers(&in, me->pattern, mask);
            break;
        }
        if (!c.ok && me->kind != K_BOSCH)
            report_bug("%s: no mask", me->name);
        if (c.ok) {
            /* Off-target masks are scored anyway and flagged in the tables. */
            c.off_target = !bosch_mask_is_feasible(in.prob, mask);
            for (size_t u = 0; u < in.units; u++)
                c.swa += mask[u] != 0;
            /* BOSCH said feasible (run_bosch only keeps such masks). */
            if (c.off_target && me->kind == K_BOSCH && first_off_target(m)) {
                report_bug("%s (%s, rho %g): bosch_result_feasible() = 1 but the mask has %u "
                           "SWA units, target %zu (bosch_mask_is_feasible() = 0)",
                           me->name, in.sh->name, in.rho, c.swa,
                           bosch_problem_target_units(in.prob));
            }
        }
        cells[cell_index(s, r, e, k, m)] = c;
    }
    free(mask);
    bosch_problem_free(in.prob);
    bosch_testbed_free(in.tb);
}

/* ------------------------------------------------------------------------ */
/* Work distribution (results do not depend on the thread count)             */
/* ------------------------------------------------------------------------ */

static size_t next_job, n_jobs, jobs_done;

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        size_t j = next_job++;
        pthread_mutex_unlock(&lock);
        if (j >= n_jobs)
            return NULL;
        size_t k = j % cfg.seeds, e = (j / cfg.seeds) % cfg.nents,
               r = (j / cfg.seeds / cfg.nents) % N_RHOS, s = j / cfg.seeds / cfg.nents / N_RHOS;
        run_instance(s, r, e, k);
        pthread_mutex_lock(&lock);
        jobs_done++;
        if (jobs_done % 10 == 0 || jobs_done == n_jobs)
            fprintf(stderr, "\rbench: %zu / %zu landscape instances", jobs_done, n_jobs);
        if (jobs_done == n_jobs)
            fputc('\n', stderr);
        pthread_mutex_unlock(&lock);
    }
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */
/* ------------------------------------------------------------------------ */

struct stats {
    double mean, min, max;
    uint64_t emin, emax;
    unsigned off_target; /* seeds whose mask missed the problem's constraints */
    uint32_t swa_min, swa_max;
};

static struct stats cell_stats(size_t s, size_t r, size_t e, size_t m)
{
    struct stats st = {0.0, INFINITY, -INFINITY, UINT64_MAX, 0, 0, UINT32_MAX, 0};
    for (size_t k = 0; k < cfg.seeds; k++) {
        const struct cell *c = &cells[cell_index(s, r, e, k, m)];
        double v = c->shat;
        st.mean += v;
        st.min = v < st.min ? v : st.min;
        st.max = v > st.max ? v : st.max;
        st.emin = c->evals < st.emin ? c->evals : st.emin;
        st.emax = c->evals > st.emax ? c->evals : st.emax;
        st.off_target += c->off_target != 0;
        st.swa_min = c->swa < st.swa_min ? c->swa : st.swa_min;
        st.swa_max = c->swa > st.swa_max ? c->swa : st.swa_max;
    }
    st.mean /= cfg.seeds;
    return st;
}

static void print_evals(uint64_t lo, uint64_t hi)
{
    if (lo == hi)
        printf("%llu", (unsigned long long)lo);
    else
        printf("%llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
}

static void print_header(void)
{
    bosch_testbed *tb = bosch_testbed_create(2, 2, 1);
    printf("# libbosch search benchmark (bench_search)\n\n");
    printf("libbosch %s. Quality numbers are deterministic: seeded runs, independent of the "
           "machine's speed and of --threads; only the overhead section is machine-dependent."
           "\n\n",
           bosch_version_string());
    printf("- Landscapes: bosch_testbed, shapes Qwen3-1.7B (28 layers x 8 KV groups = 224 units) "
           "and Qwen3-8B (36 x 8 = 288 units); landscape seeds 1..%u (the optimizer seed "
           "equals the landscape seed).\n",
           cfg.seeds);
    printf("- Testbed parameters: defaults (total_cost %g, heavy_fraction %g, layer_sensitivity "
           "%g, backup_strength %g, synergy_fraction %g, cross_layer %g) with entanglement in {",
           bosch_testbed_get(tb, "total_cost"), bosch_testbed_get(tb, "heavy_fraction"),
           bosch_testbed_get(tb, "layer_sensitivity"), bosch_testbed_get(tb, "backup_strength"),
           bosch_testbed_get(tb, "synergy_fraction"), bosch_testbed_get(tb, "cross_layer"));
    for (unsigned e = 0; e < cfg.nents; e++)
        printf("%s%g", e ? ", " : "", cfg.ents[e]);
    printf("} (0 = not entangled) and noise sd %g (methods see the noisy score).\n", cfg.noise);
    printf("- Target ratios rho in {0.25, 0.5, 0.75, 0.875}; exact SWA count round(rho*units).\n");
    printf("- Budget: %llu evaluations for every searching method (BOSCH counts its two anchor "
           "evaluations inside it; the library's default batch size and all other options "
           "default unless the method name says otherwise). Random search: uniform feasible "
           "masks through bosch_strategy_solve(\"random\") on one block of all units, best "
           "kept. Single-unit ablation: units + 1 evaluations (S(full) and each unit alone "
           "SWA), importance = "
           "S(full) - S(unit alone SWA), then bosch_baseline_static. Layer patterns: "
           "bosch_baseline_layers, 0 evaluations (RAND seeded with the landscape seed).\n",
           (unsigned long long)cfg.budget);
    if (cfg.noise == 0.0)
        printf("- Reference: with entanglement 0 and no noise the energy is additive, so the "
               "single-unit ablation ranking is the exact optimum there (ceiling of that "
               "table).\n");
    printf("- Reported: S^ = (S(z) - S(all SWA)) / (S(all full) - S(all SWA)) of the returned "
           "mask z, with the noise-free score bosch_testbed_score_clean; mean [min, max] over "
           "the %u seeds; evals = evaluations spent (range over rho and seeds).\n\n",
           cfg.seeds);
    bosch_testbed_free(tb);
}

static void print_quality_tables(void)
{
    for (size_t s = 0; s < N_SHAPES; s++)
        for (size_t e = 0; e < cfg.nents; e++) {
            printf("## %s, entanglement %g%s\n\n", shapes[s].name, cfg.ents[e],
                   cfg.ents[e] > 0 ? " (entangled)" : " (not entangled)");
            printf("| method |");
            for (size_t r = 0; r < N_RHOS; r++)
                printf(" rho=%g |", rhos[r]);
            printf(" evals |\n|---|");
            for (size_t r = 0; r < N_RHOS; r++)
                printf("---|");
            printf("---|\n");
            for (size_t m = 0; m < N_METHODS; m++) {
                if (methods[m].sweep)
                    continue;
                printf("| %s |", methods[m].name);
                uint64_t lo = UINT64_MAX, hi = 0;
                for (size_t r = 0; r < N_RHOS; r++) {
                    struct stats st = cell_stats(s, r, e, m);
                    printf(" %.3f [%.3f, %.3f]%s |", st.mean, st.min, st.max,
                           st.off_target ? " (off-target)" : "");
                    lo = st.emin < lo ? st.emin : lo;
                    hi = st.emax > hi ? st.emax : hi;
                }
                printf(" ");
                print_evals(lo, hi);
                printf(" |\n");
            }
            printf("\n");
        }
    /* Masks that missed the exact SWA count (or other constraints). */
    int any = 0;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (size_t e = 0; e < cfg.nents; e++)
            for (size_t r = 0; r < N_RHOS; r++)
                for (size_t m = 0; m < N_METHODS; m++) {
                    struct stats st = cell_stats(s, r, e, m);
                    if (!st.off_target)
                        continue;
                    if (!any)
                        printf("Off-target masks (scored as returned, but they break the "
                               "problem's constraints although bosch_result_feasible() "
                               "said feasible where the method is BOSCH):\n\n");
                    any = 1;
                    size_t units = (size_t)shapes[s].layers * shapes[s].groups;
                    printf("- %s, %s, entanglement %g, rho %g: %u/%u seeds, %u-%u SWA units "
                           "instead of %zu\n",
                           methods[m].name, shapes[s].name, cfg.ents[e], rhos[r], st.off_target,
                           cfg.seeds, st.swa_min, st.swa_max,
                           (size_t)floor(rhos[r] * (double)units + 0.5));
                }
    if (any)
        printf("\n");
}

/* Mean S^ of each method over groups of cells, and a paired comparison with
 * BOSCH auto over every (shape, rho, entanglement, seed). */
static void print_overall_rows(int sweep)
{
    printf("| method | all | not entangled | entangled | hard | hard - auto | "
           "vs auto: better/equal/worse |\n|---|---|---|---|---|---|---|\n");
    for (size_t m = 0; m < N_METHODS; m++) {
        if (methods[m].sweep != sweep && !(sweep && m == M_AUTO))
            continue;
        double sum[5] = {0}, cnt[4] = {0};
        unsigned better = 0, equal = 0, worse = 0;
        for (size_t s = 0; s < N_SHAPES; s++)
            for (size_t r = 0; r < N_RHOS; r++)
                for (size_t e = 0; e < cfg.nents; e++)
                    for (size_t k = 0; k < cfg.seeds; k++) {
                        double v = cells[cell_index(s, r, e, k, m)].shat;
                        double a = cells[cell_index(s, r, e, k, M_AUTO)].shat;
                        int ent = cfg.ents[e] > 0;
                        int hard = ent && rhos[r] >= 0.75;
                        sum[0] += v, cnt[0]++;
                        sum[ent ? 2 : 1] += v, cnt[ent ? 2 : 1]++;
                        if (hard)
                            sum[3] += v, sum[4] += v - a, cnt[3]++;
                        /* equal = within 1e-9 (same mask, or same score) */
                        if (v > a + 1e-9)
                            better++;
                        else if (v < a - 1e-9)
                            worse++;
                        else
                            equal++;
                    }
        printf("| %s |", methods[m].name);
        for (int i = 0; i < 4; i++) {
            if (cnt[i] > 0)
                printf(" %.4f |", sum[i] / cnt[i]);
            else
                printf(" - |");
        }
        if (cnt[3] > 0)
            printf(" %+.4f |", sum[4] / cnt[3]);
        else
            printf(" - |");
        printf(" %u/%u/%u |\n", better, equal, worse);
    }
    printf("\n");
}

static void print_overall(void)
{
    printf("## Overall mean S^ per method\n\n");
    printf("Mean over both shapes, the four rho values and all seeds. 'entangled' = "
           "entanglement > 0; 'hard' = entangled and rho in {0.75, 0.875}; 'hard - auto' = "
           "paired mean difference to BOSCH auto on the hard cells; last column: number of "
           "(shape, rho, entanglement, seed) cells where the method's S^ is above / equal to "
           "(1e-9) / below BOSCH auto's.\n\n");
    print_overall_rows(0);
    printf("## Settings sweep (BOSCH auto with options changed)\n\n");
    printf("Library defaults (bosch_get_option on a fresh optimizer):");
    bosch_problem *p = bosch_problem_create(2, 2, 1);
    bosch_optimizer *opt = p ? bosch_optimizer_create(p) : NULL;
    static const char *names[] = {"strategy", "probe_fraction", "polish_fraction",
                                  "ratio_spread", "group_cap", "batch_size", "alpha"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char buf[64] = "?";
        if (opt)
            bosch_get_option(opt, names[i], buf, sizeof buf);
        printf("%s %s %s", i ? "," : "", names[i], buf);
    }
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    printf(". \"auto\" = exhaustive when a subproblem fits its budget, else the library's "
           "default strategy (DEFAULT_STRATEGY in lib/strategies/builtin.h). Same columns as above.\n\n");
    print_overall_rows(1);
}

/* The acceptance criterion: BOSCH default vs random search and the
 * single-unit-ablation ranking on entangled landscapes at rho 0.75, 0.875. */
static void print_acceptance(void)
{
    printf("## Acceptance: BOSCH default vs random search and single-unit ablation\n\n");
    printf("Entangled landscapes, rho in {0.75, 0.875}; paired per seed. delta = mean over seeds "
           "of S^(BOSCH auto) - S^(baseline); wins = seeds where BOSCH auto is strictly "
           "better.\n\n");
    printf("| shape | entanglement | rho | BOSCH auto | random search | delta (wins) | "
           "ablation ranking | delta (wins) |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < N_SHAPES; s++)
        for (size_t e = 0; e < cfg.nents; e++) {
            if (cfg.ents[e] <= 0)
                continue;
            for (size_t r = 0; r < N_RHOS; r++) {
                if (rhos[r] < 0.75)
                    continue;
                struct stats a = cell_stats(s, r, e, M_AUTO);
                struct stats b = cell_stats(s, r, e, M_RANDOM_SEARCH);
                struct stats c = cell_stats(s, r, e, M_ABLATION);
                unsigned wb = 0, wc = 0;
                for (size_t k = 0; k < cfg.seeds; k++) {
                    double va = cells[cell_index(s, r, e, k, M_AUTO)].shat;
                    wb += va > cells[cell_index(s, r, e, k, M_RANDOM_SEARCH)].shat;
                    wc += va > cells[cell_index(s, r, e, k, M_ABLATION)].shat;
                }
                printf("| %s | %g | %g | %.3f | %.3f | %+.3f (%u/%u) | %.3f | %+.3f (%u/%u) |\n",
                       shapes[s].name, cfg.ents[e], rhos[r], a.mean, b.mean, a.mean - b.mean, wb,
                       cfg.seeds, c.mean, a.mean - c.mean, wc, cfg.seeds);
            }
        }
    printf("\n");
}

/* ------------------------------------------------------------------------ */
/* Overhead per evaluation                                                   */
/* ------------------------------------------------------------------------ */

/* Near-zero-cost evaluator: 0.5 plus a tiny mask-dependent value (a fixed
 * pseudo-random weight per full unit), so S(all full) > S(all SWA) = 0.5. */
static int null_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores,
                           void *user)
{
    (void)user;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *m = masks + i * units;
        uint64_t acc = 0;
        for (size_t u = 0; u < units; u++)
            if (!m[u])
                acc += (u * 0x9E3779B97F4A7C15ull) >> 54; /* 0..1023 */
        scores[i] = 0.5 + 1e-9 * (double)acc;
    }
    return 0;
}

struct overhead {
    double us_per_eval;
    uint64_t evals;
    int status;
};

static struct overhead time_bosch(uint32_t layers, const char *strategy, double rho,
                                  bosch_batch_eval_fn fn, void *user)
{
    struct overhead o = {NAN, 0, 0};
    bosch_problem *p = bosch_problem_create(layers, 8, 2);
    bosch_problem_set_target_ratio(p, rho);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)cfg.overhead_evals);
    bosch_set_option(opt, "budget", buf);
    bosch_set_option(opt, "seed", "1");
    if (strategy)
        bosch_set_option(opt, "strategy", strategy);
    if (cfg.overhead_batch)
        bosch_set_batch_size(opt, cfg.overhead_batch);
    bosch_set_batch_evaluator(opt, fn, user);
    double t0 = now_seconds();
    o.status = bosch_optimize(opt);
    double t1 = now_seconds();
    bosch_result *res = NULL;
    if (bosch_get_result(opt, &res) == BOSCH_OK) {
        o.evals = bosch_result_evaluations(res, -1);
        bosch_result_free(res);
    }
    o.us_per_eval = o.evals ? 1e6 * (t1 - t0) / (double)o.evals : NAN;
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    return o;
}

static void print_overhead(void)
{
    bosch_testbed *tb = bosch_testbed_create(28, 8, 1);
    bosch_testbed_set(tb, "entanglement", 0.1);
    bosch_testbed_set(tb, "noise", cfg.noise);
    /* Cost of the testbed scoring alone, on random masks generated beforehand. */
    size_t units = 224, nm = 4096;
    uint8_t *masks = malloc(nm * units);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < nm * units; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        masks[i] = (uint8_t)(x >> 63);
    }
    double sink = 0.0, score;
    uint64_t reps = cfg.overhead_evals;
    double t0 = now_seconds();
    for (uint64_t i = 0; i < reps; i++) {
        bosch_testbed_score(tb, masks + (i % nm) * units, &score);
        sink += score;
    }
    double tb_us = 1e6 * (now_seconds() - t0) / (double)reps;
    free(masks);

    char batch[48];
    if (cfg.overhead_batch)
        snprintf(batch, sizeof batch, "batch size %u", cfg.overhead_batch);
    else
        snprintf(batch, sizeof batch, "the library's default batch size");
    printf("## Library overhead per evaluation (machine-dependent)\n\n");
    printf("Qwen3-1.7B shape (28x8, 224 units) and Qwen3-8B shape (36x8, 288 units), budget "
           "%llu evaluations, seed 1, %s, one "
           "thread, wall clock (CLOCK_MONOTONIC) of bosch_optimize divided by the evaluations "
           "done. 'null evaluator' = a batch callback writing 0.5 + a tiny mask-dependent value "
           "(cost of the callback itself included, ~0.1 us); 'testbed' = bosch_testbed_batch_eval "
           "(entanglement 0.1), which includes the testbed's own scoring cost (%.3f us per "
           "mask measured alone, 224 units). The last column is that cost as a share of a "
           "100 ms evaluation (a small model's forward pass).\n\n",
           (unsigned long long)cfg.overhead_evals, batch, tb_us);
    printf("| strategy | shape | rho | evaluator | evaluations | us / evaluation | of 100 ms |\n"
           "|---|---|---|---|---|---|---|\n");
    static const char *strats[] = {NULL, "model", "random", "swap", "ea", "mads"};
    static const double orhos[] = {0.5, 0.875};
    for (size_t i = 0; i < sizeof strats / sizeof strats[0]; i++)
        for (int big = 0; big < 2; big++)
            for (size_t r = 0; r < 2; r++)
                for (int which = 0; which < 2; which++) {
                    /* the testbed evaluator and the 288-unit shape: default only */
                    if ((which == 1 || big) && i != 0)
                        continue;
                    if (which == 1 && big)
                        continue; /* the testbed above is 28x8 */
                    uint32_t L = big ? 36 : 28;
                    struct overhead o =
                        which == 0 ? time_bosch(L, strats[i], orhos[r], null_batch_eval, NULL)
                                   : time_bosch(L, strats[i], orhos[r], bosch_testbed_batch_eval, tb);
                    printf("| %s | %ux8 | %g | %s | %llu | %.2f | %.3f%% |\n",
                           strats[i] ? strats[i] : "auto (default)", L, orhos[r],
                           which ? "testbed" : "null", (unsigned long long)o.evals, o.us_per_eval,
                           o.us_per_eval / 1e5 * 100.0);
                if (bosch_is_error(o.status))
                    report_bug("overhead run failed: %s", bosch_err_name(o.status));
            }
    printf("\n");
    if (sink == 42.0) /* keep the timing loop */
        putchar(' ');
    bosch_testbed_free(tb);
}

/* ------------------------------------------------------------------------ */
/* main                                                                      */
/* ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_search [--quick] [--budget N] [--seeds K] [--threads T] [--noise SD]\n"
            "                    [--ent E1,E2,...] [--overhead-evals N] [--overhead-batch N]\n"
            "                    [--no-overhead] [--no-quality]\n"
            "  defaults: budget 1500, seeds 10, threads 2, noise 0, ent 0,0.1,0.2,\n"
            "            overhead-evals 20000. --quick: budget 500, seeds 2, ent 0,0.1,\n"
            "            overhead-evals 5000 (flags after --quick override it).\n");
}

static int parse_ents(const char *s)
{
    cfg.nents = 0;
    char *end;
    while (*s && cfg.nents < MAX_ENTS) {
        double v = strtod(s, &end);
        if (end == s || !(v >= 0.0))
            return -1;
        cfg.ents[cfg.nents++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return cfg.nents ? 0 : -1;
}

int main(int argc, char **argv)
{
    cfg.budget = 1500;
    cfg.seeds = 10;
    cfg.threads = 2;
    cfg.noise = 0.0;
    cfg.overhead_evals = 20000;
    cfg.overhead = cfg.quality = 1;
    parse_ents("0,0.1,0.2");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            cfg.quick = 1;
            cfg.budget = 500;
            cfg.seeds = 2;
            cfg.overhead_evals = 5000;
            parse_ents("0,0.1");
        } else if (strcmp(a, "--budget") == 0 && v) {
            cfg.budget = strtoull(v, NULL, 10), i++;
        } else if (strcmp(a, "--seeds") == 0 && v) {
            cfg.seeds = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            cfg.threads = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (strcmp(a, "--noise") == 0 && v) {
            cfg.noise = strtod(v, NULL), i++;
        } else if (strcmp(a, "--ent") == 0 && v) {
            if (parse_ents(v) != 0) {
                usage();
                return 2;
            }
            i++;
        } else if (strcmp(a, "--overhead-evals") == 0 && v) {
            cfg.overhead_evals = strtoull(v, NULL, 10), i++;
        } else if (strcmp(a, "--overhead-batch") == 0 && v) {
            cfg.overhead_batch = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (strcmp(a, "--no-overhead") == 0) {
            cfg.overhead = 0;
        } else if (strcmp(a, "--no-quality") == 0) {
            cfg.quality = 0;
        } else {
            usage();
            return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ? 0 : 2;
        }
    }
    if (cfg.budget < 3 || cfg.seeds == 0 || cfg.threads == 0 || cfg.threads > 256 ||
        !(cfg.noise >= 0.0) || cfg.overhead_evals < 3 || cfg.overhead_batch > 4096) {
        usage();
        return 2;
    }

    double t0 = now_seconds();
    print_header();
    if (cfg.overhead) /* first, while no other thread of ours runs */
        print_overhead();
    if (cfg.quality) {
        n_jobs = N_SHAPES * N_RHOS * cfg.nents * cfg.seeds;
        cells = calloc(n_jobs * N_METHODS, sizeof *cells);
        if (!cells)
            return 1;
        pthread_t th[256];
        for (unsigned t = 0; t < cfg.threads; t++)
            pthread_create(&th[t], NULL, worker, NULL);
        for (unsigned t = 0; t < cfg.threads; t++)
            pthread_join(th[t], NULL);
        print_acceptance();
        print_overall();
        print_quality_tables();
        free(cells);
    }
    fprintf(stderr, "bench: %.1f s wall, %d suspected library bug report(s)\n",
            now_seconds() - t0, bugs_seen);
    return 0;
}
