/* bench_peers: the libbosch default search against plain peers a user could
 * write (swap-move simulated annealing, forward and backward greedy with
 * sampled candidates, EvoPress-style (1+lambda) evolution) and random search,
 * at equal evaluation budgets, on the testbed's landscape families (issue 12).
 *
 * Public API only (<bosch/bosch.h>, <bosch/testbed.h>). Deterministic: every
 * run is seeded, so the same flags print the same tables on any machine and
 * with any --threads value (only the run time at the end differs).
 *
 *   bench_peers [--quick] [--seeds K] [--seed-base S] [--threads T] [--noise SD]
 *               [--priors SD]  (the default gets ablation priors with noise SD x their sd)
 *               [--fidelity-noise SD] [--fidelity-correlation C]  (testbed fidelity_noise and
 *               fidelity_correlation: the extra error of screened scores)
 *               [--families circuits,qubo,...] [--budgets 500,1500] [--tune]
 *               [--bosch-option NAME=VALUE ...]  (extra options of the default, e.g.
 *                                                 raw_scores=1; printed in the header)
 *
 * Quality of a returned mask z on one instance (family, shape, rho, seed):
 *   q = (f(z) - f(all SWA)) / (f_best - f(all SWA)),
 * f the noise-free score (bosch_testbed_score_clean); methods see
 * bosch_testbed_score (noisy with --noise). f_best is the proven optimum
 * (bosch_testbed_exact_optimum) where the family has one at this size, else
 * the best mask found by any method at any budget on that instance or by a
 * long reference annealing run (3 x 5000 evaluations), whichever is best.
 */
#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct shape {
    const char *name;
    uint32_t layers, groups, hpg;
};
static const struct shape shapes[] = {{"28x8", 28, 8, 2}, {"36x8", 36, 8, 4}};
static const double rhos[] = {0.5, 0.75, 0.875};
#define N_RHOS 3

enum { M_BOSCH, M_SA, M_FWD, M_BWD, M_EVO, M_RS, N_METHODS };
static const char *const mnames[N_METHODS] = {"libbosch default", "annealing (swap)",
                                              "greedy forward", "greedy backward",
                                              "EvoPress (1+lambda)", "random search"};
#define FIRST_PEER M_SA
#define LAST_PEER M_EVO

/* Peer settings (tuned with --tune on seeds 1001..1003, see docs/benchmarks-history.md). */
static double sa_tau0 = 0.3, sa_tau1 = 0.003;
static unsigned evo_lambda = 8;

#define REF_RESTARTS 3
#define REF_EVALS 5000

static struct {
    unsigned seeds, threads, nshapes, quick, tune;
    uint64_t seed_base; /* --seed-base: first landscape seed (default 1; --tune 1001) */
    int fam[BOSCH_TESTBED_FAMILY_LAST_];
    unsigned nfam;
    uint64_t budgets[8];
    unsigned nbud;
    double noise, fidelity_noise, fidelity_corr;
    double prior_noise; /* --priors SD: the default gets noisy ablation priors (< 0 = none) */
    const char *bopt[8][2]; /* --bosch-option NAME=VALUE: extra options of the default */
    char bopt_buf[8][128];
    unsigned nbopt;
} cfg;

/* ---- small deterministic RNG (splitmix64) ---------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static uint64_t rnext(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix(*s);
}
static double runif(uint64_t *s)
{
    return (double)(rnext(s) >> 11) * 0x1.0p-53;
}
static size_t rbelow(uint64_t *s, size_t n)
{
    return (size_t)(runif(s) * (double)n); /* < n: runif < 1 */
}

/* ---- evaluation with a hard budget ------------------------------------------ */

struct ev {
    const bosch_testbed *tb;
    uint64_t used, budget;
};
static double score(struct ev *e, const uint8_t *m)
{
    double s = NAN;
    e->used++;
    if (bosch_testbed_score(e->tb, m, &s) != BOSCH_OK) {
        fprintf(stderr, "bench_peers: scoring failed\n");
        exit(1);
    }
    return s;
}

/* Feasible-mask state with O(1) swap moves: lists of SWA and full units. */
struct st {
    size_t n, k; /* units, SWA count */
    uint8_t *x;
    size_t *swa, *full, *pos;
};
static void st_init(struct st *s, size_t n, size_t k)
{
    s->n = n, s->k = k;
    s->x = calloc(n, 1);
    s->swa = malloc((n + 1) * sizeof(size_t));
    s->full = malloc((n + 1) * sizeof(size_t));
    s->pos = malloc(n * sizeof(size_t));
    if (!s->x || !s->swa || !s->full || !s->pos)
        exit(1);
}
static void st_free(struct st *s)
{
    free(s->x), free(s->swa), free(s->full), free(s->pos);
}
static void st_index(struct st *s)
{
    size_t a = 0, b = 0;
    for (size_t u = 0; u < s->n; u++) {
        if (s->x[u])
            s->pos[u] = a, s->swa[a++] = u;
        else
            s->pos[u] = b, s->full[b++] = u;
    }
}
static void st_random(struct st *s, uint64_t *r)
{
    size_t *perm = malloc(s->n * sizeof *perm);
    for (size_t u = 0; u < s->n; u++)
        perm[u] = u;
    for (size_t i = 0; i < s->k; i++) {
        size_t j = i + rbelow(r, s->n - i), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    memset(s->x, 0, s->n);
    for (size_t i = 0; i < s->k; i++)
        s->x[perm[i]] = 1;
    free(perm);
    st_index(s);
}
/* swap SWA-list entry i with full-list entry j */
static void st_swap(struct st *s, size_t i, size_t j)
{
    size_t a = s->swa[i], b = s->full[j];
    s->x[a] = 0, s->x[b] = 1;
    s->swa[i] = b, s->full[j] = a;
    s->pos[b] = i, s->pos[a] = j;
}

/* ---- peers -------------------------------------------------------------------- */

/* Swap-move simulated annealing from a random feasible mask. Temperature
 * T_t = dbar * tau0 * (tau1 / tau0)^(t / B), dbar the running mean |delta| of
 * the moves so far (scale-free); Metropolis acceptance; best kept. */
static void run_sa(struct ev *e, size_t n, size_t k, uint64_t seed, double tau0, double tau1,
                   uint8_t *out)
{
    uint64_t r = seed;
    struct st s;
    st_init(&s, n, k);
    st_random(&s, &r);
    double fx = score(e, s.x), best = fx, dsum = 0.0;
    memcpy(out, s.x, n);
    uint64_t moves = 0;
    while (k > 0 && k < n && e->used < e->budget) {
        size_t i = rbelow(&r, k), j = rbelow(&r, n - k);
        st_swap(&s, i, j);
        double fy = score(e, s.x), d = fy - fx;
        dsum += fabs(d);
        moves++;
        double frac = (double)e->used / (double)e->budget;
        double T = (dsum / (double)moves) * tau0 * pow(tau1 / tau0, frac);
        if (d >= 0.0 || (T > 0.0 && runif(&r) < exp(d / T))) {
            fx = fy;
            if (fx > best) {
                best = fx;
                memcpy(out, s.x, n);
            }
        } else {
            st_swap(&s, i, j); /* back: the units are again at list slots i, j */
        }
    }
    st_free(&s);
}

/* Greedy with S sampled candidates per step. Forward: from all SWA, turn
 * units full until n - k are full; backward: from all full, turn units SWA
 * until k are. S = remaining budget / remaining steps (so the run spends the
 * budget), capped at the candidates; S <= 1 picks a random one unevaluated. */
static void run_greedy(struct ev *e, size_t n, size_t k, uint64_t seed, int forward,
                       uint8_t *out)
{
    uint64_t r = seed;
    uint8_t *x = malloc(n);
    size_t *cand = malloc(n * sizeof *cand);
    memset(x, forward ? 1 : 0, n);
    size_t steps = forward ? n - k : k;
    for (size_t step = 0; step < steps; step++) {
        size_t nc = 0;
        for (size_t u = 0; u < n; u++)
            if (x[u] == (forward ? 1 : 0))
                cand[nc++] = u;
        uint64_t left = e->budget > e->used ? e->budget - e->used : 0;
        size_t S = (size_t)(left / (steps - step));
        if (S > nc)
            S = nc;
        if (S <= 1) {
            x[cand[rbelow(&r, nc)]] = forward ? 0 : 1;
            continue;
        }
        size_t bu = 0;
        double bf = -INFINITY;
        for (size_t c = 0; c < S; c++) {
            size_t j = c + rbelow(&r, nc - c), t = cand[c];
            cand[c] = cand[j], cand[j] = t;
            size_t u = cand[c];
            x[u] ^= 1;
            double f = score(e, x);
            x[u] ^= 1;
            if (f > bf)
                bf = f, bu = u;
        }
        x[bu] ^= 1;
    }
    memcpy(out, x, n);
    free(x);
    free(cand);
}

/* EvoPress-style (1+lambda) evolution: a random feasible parent; each
 * generation lambda offspring, each with m = min(U{1..3}, U{1..3}) swap
 * mutations (as EvoPress draws them); the best offspring replaces the parent
 * when at least as good (elitist). The last generation is smaller when the
 * budget does not divide. */
static void run_evo(struct ev *e, size_t n, size_t k, uint64_t seed, unsigned lambda,
                    uint8_t *out)
{
    uint64_t r = seed;
    struct st s;
    st_init(&s, n, k);
    st_random(&s, &r);
    double fp = score(e, s.x);
    uint8_t *kids = malloc((size_t)lambda * n), *parent = malloc(n);
    memcpy(parent, s.x, n);
    while (k > 0 && k < n && e->used < e->budget) {
        uint64_t lam = e->budget - e->used < lambda ? e->budget - e->used : lambda;
        double bf = -INFINITY;
        size_t bi = 0;
        for (size_t c = 0; c < lam; c++) {
            memcpy(s.x, parent, n);
            st_index(&s);
            size_t m1 = 1 + rbelow(&r, 3), m2 = 1 + rbelow(&r, 3), m = m1 < m2 ? m1 : m2;
            for (size_t t = 0; t < m; t++)
                st_swap(&s, rbelow(&r, k), rbelow(&r, n - k));
            memcpy(kids + c * n, s.x, n);
            double f = score(e, s.x);
            if (f > bf)
                bf = f, bi = c;
        }
        if (bf >= fp) {
            fp = bf;
            memcpy(parent, kids + bi * n, n);
        }
    }
    memcpy(out, parent, n);
    free(kids);
    free(parent);
    st_free(&s);
}

static void run_random(struct ev *e, size_t n, size_t k, uint64_t seed, uint8_t *out)
{
    uint64_t r = seed;
    struct st s;
    st_init(&s, n, k);
    double best = -INFINITY;
    while (e->used < e->budget) {
        st_random(&s, &r);
        double f = score(e, s.x);
        if (f > best)
            best = f, memcpy(out, s.x, n);
    }
    st_free(&s);
}

/* What the default reported: its score of the result, the search's own
 * draw of it, and the budget spent in full-evaluation equivalents. */
struct reported {
    double score, search, cost;
};

/* The library's default: bosch_optimize with the budget and seed options,
 * everything else default, the testbed as request batch evaluator (the
 * plain batch evaluator's scores for plain requests); with --priors, the
 * instance's priors (bosch_set_priors). */
static uint64_t run_bosch(const bosch_testbed *tb, const bosch_problem *p, uint64_t budget,
                          uint64_t seed, const double *priors, uint8_t *out, int *failed,
                          struct reported *rep)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    char buf[32];
    uint64_t used = 0;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)budget);
    int rc = bosch_set_option(opt, "budget", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    rc |= bosch_set_option(opt, "seed", buf);
    rc |= bosch_set_request_batch_evaluator(opt, bosch_testbed_request_batch_eval, (void *)tb);
    if (priors)
        rc |= bosch_set_priors(opt, priors, bosch_problem_units(p));
    for (unsigned i = 0; i < cfg.nbopt && rc == BOSCH_OK; i++)
        if ((rc = bosch_set_option(opt, cfg.bopt[i][0], cfg.bopt[i][1])) != BOSCH_OK)
            fprintf(stderr, "bench_peers: --bosch-option %s=%s: %s\n", cfg.bopt[i][0],
                    cfg.bopt[i][1], bosch_optimizer_last_error(opt));
    if (rc != BOSCH_OK) {
        fprintf(stderr, "bench_peers: optimizer setup failed\n");
        exit(1);
    }
    int st = bosch_optimize(opt);
    bosch_result *res = NULL;
    if (bosch_is_error(st) || bosch_get_result(opt, &res) != BOSCH_OK ||
        !bosch_result_feasible(res) ||
        bosch_result_mask(res, out, bosch_problem_units(p)) != BOSCH_OK) {
        /* No mask: the run scores as the all-SWA mask (q = 0) and is
         * counted as failed. Expected: BOSCH_E_ANCHORS where S(all full) <=
         * S(all SWA) (qubo, nk). Anything else is reported. */
        if (st != BOSCH_E_ANCHORS)
            fprintf(stderr, "\nbench_peers: bosch_optimize: %s (%s)\n", bosch_err_name(st),
                    bosch_optimizer_last_error(opt));
        memset(out, 1, bosch_problem_units(p));
        *failed = 1;
    }
    rep->score = rep->search = NAN;
    rep->cost = 0;
    if (res) {
        used = bosch_result_evaluations(res, -1);
        rep->score = bosch_result_score(res);
        rep->search = bosch_result_search_score(res);
        rep->cost = bosch_result_cost(res);
    }
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    return used;
}

/* ---- instances ------------------------------------------------------------- */

struct run {
    double f;      /* clean score of the returned mask */
    uint64_t used; /* evaluations */
    int failed;    /* no mask (the default's BOSCH_E_ANCHORS); scored as all SWA */
    struct reported rep; /* the default only */
};
struct inst {
    double f_swa, f_best;
    double f_prior; /* --priors: clean score of the priors' static mask */
    int exact;
    struct run runs[8][N_METHODS]; /* [budget][method] */
};
static struct inst *insts;
static size_t n_inst;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t next_job, done_jobs;
static int bugs;

static size_t inst_index(size_t f, size_t s, size_t r, size_t k)
{
    return ((f * cfg.nshapes + s) * N_RHOS + r) * cfg.seeds + k;
}

static double clean(const bosch_testbed *tb, const uint8_t *m)
{
    double s = NAN;
    bosch_testbed_score_clean(tb, m, &s);
    return s;
}

static void print_reported(void);

static uint64_t method_seed(uint64_t seed, size_t f, size_t s, size_t r, size_t b, size_t m)
{
    return mix(mix(mix(seed * 1000003u + f) ^ (s * 131 + r)) ^ (b * 7919 + m * 104729));
}

/* Priors a host could have without spending its budget (what FISHER
 * approximates): each unit's single-unit ablation loss on the clean score,
 * f(all full) - f(unit alone SWA), plus Gaussian noise of --priors times
 * their sd. Also writes the clean score of their static mask
 * (bosch_baseline_static: the units of lowest prior SWA). Deterministic in
 * the instance seed. */
static double *make_priors(const bosch_testbed *tb, const bosch_problem *p, size_t n,
                           uint64_t seed, double *f_static)
{
    double *pr = malloc(n * sizeof *pr);
    uint8_t *m = malloc(n);
    if (!pr || !m)
        exit(1);
    memset(m, 0, n);
    double full = clean(tb, m), mean = 0.0, var = 0.0;
    for (size_t u = 0; u < n; u++) {
        m[u] = 1;
        pr[u] = full - clean(tb, m);
        m[u] = 0;
        mean += pr[u];
    }
    mean /= (double)n;
    for (size_t u = 0; u < n; u++)
        var += (pr[u] - mean) * (pr[u] - mean);
    double sd = sqrt(var / (double)n);
    uint64_t r = mix(seed ^ 0x5052494f52530000ull);
    for (size_t u = 0; u < n; u++) {
        double a = runif(&r), b = runif(&r);
        if (a < 1e-300)
            a = 1e-300;
        pr[u] += cfg.prior_noise * sd * sqrt(-2.0 * log(a)) * cos(6.283185307179586 * b);
    }
    if (bosch_baseline_static(p, pr, m) != BOSCH_OK) /* k lowest priors SWA */
        exit(1);
    *f_static = clean(tb, m);
    free(m);
    return pr;
}

static void run_instance(size_t fi, size_t si, size_t ri, uint64_t seed, struct inst *in)
{
    const struct shape *sh = &shapes[si];
    int fam = cfg.fam[fi];
    bosch_testbed *tb = bosch_testbed_create_family(fam, sh->layers, sh->groups, seed);
    bosch_problem *p = bosch_problem_create(sh->layers, sh->groups, sh->hpg);
    if (!tb || !p || bosch_problem_set_target_ratio(p, rhos[ri]) != BOSCH_OK ||
        bosch_testbed_set(tb, "noise", cfg.noise) != BOSCH_OK ||
        bosch_testbed_set(tb, "fidelity_noise", cfg.fidelity_noise) != BOSCH_OK ||
        bosch_testbed_set(tb, "fidelity_correlation", cfg.fidelity_corr) != BOSCH_OK)
        exit(1);
    size_t n = bosch_testbed_units(tb), k = bosch_problem_target_units(p);
    uint8_t *m = malloc(n);
    memset(m, 1, n);
    in->f_swa = clean(tb, m);
    double fopt = NAN;
    in->exact = bosch_testbed_exact_optimum(tb, p, m, &fopt) == BOSCH_OK;
    double *priors = cfg.prior_noise >= 0 ? make_priors(tb, p, n, seed, &in->f_prior) : NULL;
    double found = priors ? in->f_prior : -INFINITY;
    for (unsigned b = 0; b < cfg.nbud; b++)
        for (int me = 0; me < N_METHODS; me++) {
            struct ev e = {tb, 0, cfg.budgets[b]};
            int failed = 0;
            uint64_t ms = method_seed(seed, (size_t)fam, si, ri, b, (size_t)me);
            switch (me) {
            case M_BOSCH:
                e.used = run_bosch(tb, p, e.budget, seed, priors, m, &failed,
                                   &in->runs[b][me].rep);
                break;
            case M_SA:
                run_sa(&e, n, k, ms, sa_tau0, sa_tau1, m);
                break;
            case M_FWD:
                run_greedy(&e, n, k, ms, 1, m);
                break;
            case M_BWD:
                run_greedy(&e, n, k, ms, 0, m);
                break;
            case M_EVO:
                run_evo(&e, n, k, ms, evo_lambda, m);
                break;
            default:
                run_random(&e, n, k, ms, m);
                break;
            }
            in->runs[b][me].failed = failed;
            /* The default may make more evaluations than its budget when it
             * screens: its budget is in full-evaluation equivalents. */
            double spent = me == M_BOSCH ? in->runs[b][me].rep.cost : (double)e.used;
            if ((!failed && !bosch_mask_is_feasible(p, m)) || spent > (double)e.budget + 1e-9) {
                pthread_mutex_lock(&lock);
                bugs++;
                fprintf(stderr, "BUG? %s: infeasible mask or %g > %llu evaluations\n",
                        mnames[me], spent, (unsigned long long)e.budget);
                pthread_mutex_unlock(&lock);
            }
            in->runs[b][me].f = clean(tb, m);
            in->runs[b][me].used = e.used;
            if (in->runs[b][me].f > found)
                found = in->runs[b][me].f;
        }
    if (in->exact) {
        in->f_best = fopt;
        if (found > fopt + 1e-9) {
            pthread_mutex_lock(&lock);
            bugs++;
            fprintf(stderr, "BUG? a method beat the proven optimum (%g > %g)\n", found, fopt);
            pthread_mutex_unlock(&lock);
        }
    } else {
        for (unsigned t = 0; t < REF_RESTARTS && !cfg.tune; t++) {
            struct ev e = {tb, 0, REF_EVALS};
            run_sa(&e, n, k, mix(seed ^ 0x5245465245460000ull) + t, sa_tau0, sa_tau1, m);
            double f = clean(tb, m);
            if (f > found)
                found = f;
        }
        in->f_best = found;
    }
    free(priors);
    free(m);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        size_t j = next_job++;
        pthread_mutex_unlock(&lock);
        if (j >= n_inst)
            return NULL;
        size_t k = j % cfg.seeds, r = (j / cfg.seeds) % N_RHOS,
               s = (j / cfg.seeds / N_RHOS) % cfg.nshapes, f = j / cfg.seeds / N_RHOS / cfg.nshapes;
        run_instance(f, s, r, cfg.seed_base + (uint64_t)k, &insts[j]);
        pthread_mutex_lock(&lock);
        done_jobs++;
        if (!cfg.tune)
            fprintf(stderr, "\rbench_peers: %zu / %zu instances", done_jobs, n_inst);
        pthread_mutex_unlock(&lock);
    }
}

static void run_all(void)
{
    n_inst = (size_t)cfg.nfam * cfg.nshapes * N_RHOS * cfg.seeds;
    free(insts);
    insts = calloc(n_inst, sizeof *insts);
    next_job = done_jobs = 0;
    pthread_t th[64];
    unsigned T = cfg.threads ? cfg.threads : 1;
    for (unsigned t = 0; t < T; t++)
        pthread_create(&th[t], NULL, worker, NULL);
    for (unsigned t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    if (!cfg.tune)
        fputc('\n', stderr);
}

static double qual(const struct inst *in, double f)
{
    double den = in->f_best - in->f_swa;
    if (!(den > 1e-15))
        return f >= in->f_best - 1e-15 ? 1.0 : 0.0;
    return (f - in->f_swa) / den;
}

/* ---- reporting ---------------------------------------------------------- */

struct agg {
    double q[N_METHODS];
    double n;
};

static double run_q(const struct inst *in, unsigned b, int m)
{
    return qual(in, in->runs[b][m].f);
}

/* Mean q of method m over one cell (family, shape, rho, budget). */
static double cell_mean(size_t f, size_t s, size_t r, unsigned b, int m)
{
    double sum = 0.0;
    for (size_t k = 0; k < cfg.seeds; k++)
        sum += run_q(&insts[inst_index(f, s, r, k)], b, m);
    return sum / cfg.seeds;
}

static int best_peer(size_t f, size_t s, size_t r, unsigned b)
{
    int bp = FIRST_PEER;
    for (int m = FIRST_PEER; m <= LAST_PEER; m++)
        if (cell_mean(f, s, r, b, m) > cell_mean(f, s, r, b, bp) + 1e-12)
            bp = m;
    return bp;
}

static const char *short_name(int m)
{
    static const char *const s[N_METHODS] = {"default", "SA", "fwd", "bwd", "evo", "RS"};
    return s[m];
}

static void print_header(void)
{
    printf("# libbosch against peers on independent landscapes (bench_peers)\n\n");
    printf("libbosch %s; deterministic (seeded; independent of machine and --threads).\n\n",
           bosch_version_string());
    printf("- Families (bosch_testbed_create_family):");
    for (unsigned f = 0; f < cfg.nfam; f++)
        printf("%s %s", f ? "," : "", bosch_testbed_family_name(cfg.fam[f]));
    printf("; shapes");
    for (unsigned s = 0; s < cfg.nshapes; s++)
        printf(" %s", shapes[s].name);
    printf("; rho 0.5, 0.75, 0.875 (exact SWA count round(rho*units)); landscape seeds %llu..%llu; "
           "noise sd %g, fidelity_noise %g, fidelity_correlation %g; budgets",
           (unsigned long long)cfg.seed_base,
           (unsigned long long)(cfg.seed_base + cfg.seeds - 1), cfg.noise,
           cfg.fidelity_noise, cfg.fidelity_corr);
    for (unsigned b = 0; b < cfg.nbud; b++)
        printf(" %llu", (unsigned long long)cfg.budgets[b]);
    printf(" evaluations.\n");
    printf("- libbosch default: bosch_optimize, options budget and seed only (seed = landscape "
           "seed), bosch_testbed_request_batch_eval; its two anchor evaluations count in the budget.\n");
    if (cfg.prior_noise >= 0)
        printf("- --priors %g: the default (only) is given per-unit priors with bosch_set_priors: "
               "each unit's single-unit ablation loss on the clean score, f(all full) - f(unit "
               "alone SWA), plus Gaussian noise of %g x their sd; computing them is not counted "
               "in its budget (a host has such scores, e.g. FISHER, for about one pass).\n",
               cfg.prior_noise, cfg.prior_noise);
    if (cfg.nbopt) {
        printf("- options given to the default with --bosch-option:");
        for (unsigned i = 0; i < cfg.nbopt; i++)
            printf("%s %s=%s", i ? "," : "", cfg.bopt[i][0], cfg.bopt[i][1]);
        printf(".\n");
    }
    printf("- annealing (swap): random feasible start, move = swap one SWA and one full unit, "
           "Metropolis, T = mean|delta| * %g * (%g/%g)^(evals/budget), best kept, whole "
           "budget.\n",
           sa_tau0, sa_tau1, sa_tau0);
    printf("- greedy forward / backward: from all SWA turn units full (forward) or from all "
           "full turn units SWA (backward) one per step until the exact count; each step "
           "evaluates S = remaining budget / remaining steps sampled candidates (S <= 1: a "
           "random unit, unevaluated).\n");
    printf("- EvoPress (1+lambda): lambda = %u offspring per generation, each with min(U{1..3}, "
           "U{1..3}) swap mutations; best offspring replaces the parent when >= (elitist).\n",
           evo_lambda);
    printf("- random search: uniform feasible masks, best kept.\n");
    printf("- q = (f - f(all SWA)) / (f_best - f(all SWA)) with the noise-free score f; f_best "
           "= proven optimum (bosch_testbed_exact_optimum: circuits, layer-concave) where "
           "marked 'exact', else the best mask found by any method, any budget, or a "
           "reference annealing run (%d x %d evaluations) on that instance ('found'). q can "
           "only be <= 1.\n",
           REF_RESTARTS, REF_EVALS);
    printf("- W/T/L: seeds where the default's q is above / within 1e-9 / below the best peer's "
           "(the peer with the highest mean q in that cell).\n\n");
}

static void print_cells(void)
{
    for (size_t f = 0; f < cfg.nfam; f++) {
        printf("## %s\n\n| shape | rho | budget | f_best |", bosch_testbed_family_name(cfg.fam[f]));
        for (int m = 0; m < N_METHODS; m++)
            printf(" %s |", short_name(m));
        printf(" best peer | default - best peer | W/T/L |\n|---|---|---|---|");
        for (int m = 0; m < N_METHODS; m++)
            printf("---|");
        printf("---|---|---|\n");
        for (size_t s = 0; s < cfg.nshapes; s++)
            for (size_t r = 0; r < N_RHOS; r++)
                for (unsigned b = 0; b < cfg.nbud; b++) {
                    int ex = 1;
                    for (size_t k = 0; k < cfg.seeds; k++)
                        ex &= insts[inst_index(f, s, r, k)].exact;
                    printf("| %s | %g | %llu | %s |", shapes[s].name, rhos[r],
                           (unsigned long long)cfg.budgets[b], ex ? "exact" : "found");
                    for (int m = 0; m < N_METHODS; m++)
                        printf(" %.4f |", cell_mean(f, s, r, b, m));
                    int bp = best_peer(f, s, r, b);
                    unsigned w = 0, t = 0, l = 0;
                    for (size_t k = 0; k < cfg.seeds; k++) {
                        const struct inst *in = &insts[inst_index(f, s, r, k)];
                        double d = run_q(in, b, M_BOSCH) - run_q(in, b, bp);
                        w += d > 1e-9, l += d < -1e-9, t += fabs(d) <= 1e-9;
                    }
                    printf(" %s | %+.4f | %u/%u/%u |\n", short_name(bp),
                           cell_mean(f, s, r, b, M_BOSCH) - cell_mean(f, s, r, b, bp), w, t, l);
                }
        printf("\n");
    }
}

static void print_overall(void)
{
    printf("## Overall\n\nMean q over every family, shape, rho and seed (columns: all budgets, "
           "then each budget, then each family over all budgets); evals = evaluations really "
           "used, mean [min, max] over all runs.\n\n| method | all |");
    for (unsigned b = 0; b < cfg.nbud; b++)
        printf(" B=%llu |", (unsigned long long)cfg.budgets[b]);
    for (unsigned f = 0; f < cfg.nfam; f++)
        printf(" %s |", bosch_testbed_family_name(cfg.fam[f]));
    printf(" evals |\n|---|---|");
    for (unsigned i = 0; i < cfg.nbud + cfg.nfam; i++)
        printf("---|");
    printf("---|\n");
    for (int m = 0; m < N_METHODS; m++) {
        double all = 0, nall = 0, bq[8] = {0}, bn[8] = {0}, fq[8] = {0}, fn[8] = {0};
        double esum = 0;
        uint64_t emin = UINT64_MAX, emax = 0;
        for (size_t j = 0; j < n_inst; j++) {
            size_t f = j / cfg.seeds / N_RHOS / cfg.nshapes;
            for (unsigned b = 0; b < cfg.nbud; b++) {
                double q = run_q(&insts[j], b, m);
                uint64_t u = insts[j].runs[b][m].used;
                all += q, nall++, bq[b] += q, bn[b]++, fq[f] += q, fn[f]++;
                esum += (double)u;
                emin = u < emin ? u : emin;
                emax = u > emax ? u : emax;
            }
        }
        printf("| %s | %.4f |", mnames[m], all / nall);
        for (unsigned b = 0; b < cfg.nbud; b++)
            printf(" %.4f |", bq[b] / bn[b]);
        for (unsigned f = 0; f < cfg.nfam; f++)
            printf(" %.4f |", fq[f] / fn[f]);
        printf(" %.0f [%llu, %llu] |\n", esum / nall, (unsigned long long)emin,
               (unsigned long long)emax);
    }
    if (cfg.prior_noise >= 0) { /* the priors alone, as a static ranking */
        double all = 0, nall = 0, fq[8] = {0}, fn[8] = {0};
        for (size_t j = 0; j < n_inst; j++) {
            size_t f = j / cfg.seeds / N_RHOS / cfg.nshapes;
            double q = qual(&insts[j], insts[j].f_prior);
            all += q, nall++, fq[f] += q, fn[f]++;
        }
        printf("| the priors' static mask | %.4f |", all / nall);
        for (unsigned b = 0; b < cfg.nbud; b++)
            printf(" %.4f |", all / nall);
        for (unsigned f = 0; f < cfg.nfam; f++)
            printf(" %.4f |", fq[f] / fn[f]);
        printf(" 0 |\n");
    }
    printf("\n## The default against each peer\n\nPaired over every (family, shape, rho, "
           "budget, seed) run: mean q(default) - q(peer), and runs where the default is above / "
           "level (1e-9) / below.\n\n| peer | default - peer | W/T/L |\n|---|---|---|\n");
    for (int m = 1; m < N_METHODS; m++) {
        double d = 0, n = 0;
        unsigned w = 0, t = 0, l = 0;
        for (size_t j = 0; j < n_inst; j++)
            for (unsigned b = 0; b < cfg.nbud; b++) {
                double x = run_q(&insts[j], b, M_BOSCH) - run_q(&insts[j], b, m);
                d += x, n++;
                w += x > 1e-9, l += x < -1e-9, t += fabs(x) <= 1e-9;
            }
        printf("| %s | %+.4f | %u/%u/%u |\n", mnames[m], d / n, w, t, l);
    }
    /* runs where the default gave no mask */
    unsigned nf = 0, nr = 0;
    double dq[N_METHODS] = {0}, cnt = 0;
    for (size_t j = 0; j < n_inst; j++)
        for (unsigned b = 0; b < cfg.nbud; b++) {
            nr++;
            if (insts[j].runs[b][M_BOSCH].failed) {
                nf++;
                continue;
            }
            cnt++;
            for (int m = 0; m < N_METHODS; m++)
                dq[m] += run_q(&insts[j], b, m);
        }
    printf("\nThe default returned no mask (BOSCH_E_ANCHORS: S(all full) <= S(all SWA), "
           "which qubo and nk landscapes often have; scored q = 0 above) in %u of %u runs:",
           nf, nr);
    for (unsigned f = 0; f < cfg.nfam; f++) {
        unsigned c = 0, t = 0;
        for (size_t j = 0; j < n_inst; j++)
            if (j / cfg.seeds / N_RHOS / cfg.nshapes == f)
                for (unsigned b = 0; b < cfg.nbud; b++)
                    c += insts[j].runs[b][M_BOSCH].failed, t++;
        printf("%s %s %u/%u", f ? "," : "", bosch_testbed_family_name(cfg.fam[f]), c, t);
    }
    printf(".\n\nMean q on the %.0f runs where the default did return a mask:", cnt);
    for (int m = 0; m < N_METHODS && cnt > 0; m++)
        printf("%s %s %.4f", m ? "," : "", mnames[m], dq[m] / cnt);
    printf(".\n");
    /* cells where the default is at or above the best peer */
    unsigned cells = 0, ahead = 0;
    double margin = 0;
    for (size_t f = 0; f < cfg.nfam; f++)
        for (size_t s = 0; s < cfg.nshapes; s++)
            for (size_t r = 0; r < N_RHOS; r++)
                for (unsigned b = 0; b < cfg.nbud; b++) {
                    int bp = best_peer(f, s, r, b);
                    double x = cell_mean(f, s, r, b, M_BOSCH) - cell_mean(f, s, r, b, bp);
                    cells++, ahead += x >= -1e-9, margin += x;
                }
    printf("\nCells (family x shape x rho x budget, mean over seeds) where the default is at or "
           "above the best peer of that cell: %u of %u; mean margin to the best peer %+.4f q.\n\n",
           ahead, cells, margin / cells);
    print_reported();
}

/* What the default reported against the clean score of its mask, per
 * budget: the overstatement of the reported score, of the search's own
 * draw, and the budget spent (full-evaluation equivalents) and evaluations. */
static void print_reported(void)
{
    printf("## The default's reported score and spending\n\nOver the runs where the default "
           "returned a mask: mean (reported score - clean score of the mask) for "
           "bosch_result_score and bosch_result_search_score (the search's own draw), in raw "
           "score units (noise sd %g), the mean budget spent (bosch_result_cost, full-evaluation "
           "equivalents) and the mean number of evaluations.\n\n| budget | runs | reported - "
           "clean | search draw - clean | cost | evaluations |\n|---|---|---|---|---|---|\n",
           cfg.noise);
    for (unsigned b = 0; b < cfg.nbud; b++) {
        double d = 0, ds = 0, c = 0, e = 0, n = 0;
        for (size_t j = 0; j < n_inst; j++) {
            const struct run *r = &insts[j].runs[b][M_BOSCH];
            if (r->failed)
                continue;
            d += r->rep.score - r->f, ds += r->rep.search - r->f;
            c += r->rep.cost, e += (double)r->used, n++;
        }
        printf("| %llu | %.0f | %+.5f | %+.5f | %.1f | %.1f |\n",
               (unsigned long long)cfg.budgets[b], n, d / n, ds / n, c / n, e / n);
    }
    printf("\n");
}

/* --tune: the peers' settings on separate landscape seeds (1001..1003). */
static void tune(void)
{
    static const double t0s[] = {0.1, 0.3, 1.0, 3.0}, t1s[] = {0.003, 0.01, 0.03, 0.1};
    static const unsigned lams[] = {4, 8, 16};
    printf("# bench_peers --tune (seeds %llu..%llu, shape %s)\n\n",
           (unsigned long long)cfg.seed_base, (unsigned long long)(cfg.seed_base + cfg.seeds - 1),
           shapes[0].name);
    printf("| setting | mean q (vs best found in this run) |\n|---|---|\n");
    for (size_t a = 0; a < 4; a++)
        for (size_t c = 0; c < 4; c++) {
            sa_tau0 = t0s[a], sa_tau1 = t1s[c];
            run_all();
            double sum = 0, n = 0;
            for (size_t j = 0; j < n_inst; j++)
                for (unsigned b = 0; b < cfg.nbud; b++)
                    sum += run_q(&insts[j], b, M_SA), n++;
            printf("| SA tau0=%g tau1=%g | %.4f |\n", t0s[a], t1s[c], sum / n);
        }
    sa_tau0 = 0.3, sa_tau1 = 0.003;
    for (size_t a = 0; a < 3; a++) {
        evo_lambda = lams[a];
        run_all();
        double sum = 0, n = 0;
        for (size_t j = 0; j < n_inst; j++)
            for (unsigned b = 0; b < cfg.nbud; b++)
                sum += run_q(&insts[j], b, M_EVO), n++;
        printf("| EvoPress lambda=%u | %.4f |\n", lams[a], sum / n);
    }
    printf("\n(q here is relative to the best any method found in the same setting's run, so "
           "rows compare only roughly; exact-optimum families are exact.)\n");
}

static int parse_list(const char *s, uint64_t *out, unsigned max)
{
    unsigned n = 0;
    while (*s && n < max) {
        char *end;
        out[n++] = strtoull(s, &end, 10);
        if (end == s)
            return -1;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return (int)n;
}

static int parse_families(const char *s)
{
    cfg.nfam = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int f;
        for (f = 1; f < BOSCH_TESTBED_FAMILY_LAST_; f++)
            if (strcmp(t, bosch_testbed_family_name(f)) == 0)
                break;
        if (f == BOSCH_TESTBED_FAMILY_LAST_ || cfg.nfam >= BOSCH_TESTBED_FAMILY_LAST_)
            return -1;
        cfg.fam[cfg.nfam++] = f;
    }
    return cfg.nfam ? 0 : -1;
}

int main(int argc, char **argv)
{
    cfg.seeds = 5, cfg.threads = 2, cfg.nshapes = 2, cfg.nbud = 2;
    cfg.prior_noise = -1.0;
    cfg.budgets[0] = 500, cfg.budgets[1] = 1500;
    for (int f = 1; f < BOSCH_TESTBED_FAMILY_LAST_; f++)
        cfg.fam[cfg.nfam++] = f;
    int seeds_set = 0, budgets_set = 0, base_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick"))
            cfg.quick = 1;
        else if (!strcmp(a, "--tune"))
            cfg.tune = 1;
        else if (!strcmp(a, "--seed-base") && v)
            cfg.seed_base = strtoull(v, NULL, 10), base_set = 1, i++;
        else if (!strcmp(a, "--seeds") && v)
            cfg.seeds = (unsigned)atoi(v), seeds_set = 1, i++;
        else if (!strcmp(a, "--threads") && v)
            cfg.threads = (unsigned)atoi(v), i++;
        else if (!strcmp(a, "--noise") && v)
            cfg.noise = atof(v), i++;
        else if (!strcmp(a, "--fidelity-noise") && v)
            cfg.fidelity_noise = atof(v), i++;
        else if (!strcmp(a, "--priors") && v)
            cfg.prior_noise = atof(v), i++;
        else if (!strcmp(a, "--fidelity-correlation") && v)
            cfg.fidelity_corr = atof(v), i++;
        else if (!strcmp(a, "--budgets") && v) {
            int n = parse_list(v, cfg.budgets, 8);
            if (n <= 0)
                goto usage;
            cfg.nbud = (unsigned)n, budgets_set = 1, i++;
        } else if (!strcmp(a, "--bosch-option") && v && strchr(v, '=') && cfg.nbopt < 8 &&
                   strlen(v) < sizeof cfg.bopt_buf[0]) {
            char *b = cfg.bopt_buf[cfg.nbopt];
            strcpy(b, v);
            char *eq = strchr(b, '=');
            *eq = '\0';
            cfg.bopt[cfg.nbopt][0] = b, cfg.bopt[cfg.nbopt][1] = eq + 1, cfg.nbopt++, i++;
        } else if (!strcmp(a, "--families") && v) {
            if (parse_families(v) != 0)
                goto usage;
            i++;
        } else
            goto usage;
    }
    if (cfg.quick) {
        cfg.nshapes = 1;
        if (!seeds_set)
            cfg.seeds = 2;
        if (!budgets_set)
            cfg.budgets[0] = 200, cfg.nbud = 1;
    }
    if (cfg.tune) {
        cfg.nshapes = 1;
        if (!seeds_set)
            cfg.seeds = 3;
    }
    if (!base_set)
        cfg.seed_base = cfg.tune ? 1001 : 1;
    if (!cfg.seeds || !cfg.threads || cfg.threads > 64 || !(cfg.noise >= 0.0))
        goto usage;
    for (unsigned b = 0; b < cfg.nbud; b++)
        if (cfg.budgets[b] < 1)
            goto usage;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (cfg.tune) {
        tune();
    } else {
        run_all();
        print_header();
        print_overall();
        print_cells();
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "bench_peers: %.1f s wall, %u threads%s\n",
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
            cfg.threads, bugs ? ", BUGS SEEN (see above)" : "");
    return bugs ? 1 : 0;
usage:
    fprintf(stderr, "usage: bench_peers [--quick] [--tune] [--seeds K] [--seed-base S] [--threads T] [--noise SD] [--fidelity-noise SD] [--fidelity-correlation C] [--priors SD] "
                    "[--families circuits,qubo,nk2,nk4,coverage,layer-concave] "
                    "[--budgets 500,1500] [--bosch-option NAME=VALUE ...]\n");
    return 2;
}
