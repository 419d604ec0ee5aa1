/* A search spread over the ranks of an MPI job (libbosch-mpi): rank 0 runs
 * the search, every rank evaluates. The objective is the testbed (a
 * synthetic landscape of Qwen3-1.7B's shape), slowed by --sleep-ms per
 * evaluation to stand in for a model's forward.
 *
 *   mpirun -np N bosch-mpi-testbed-search [--budget B] [--seed S] [--rho R]
 *       [--batch-size K] [--sleep-ms M] [--samples S] [--whole] [--whole-on RANK]
 *       [--parts-only] [--root-idle] [--not-ready RANK] [--journal PATH]
 *       [--no-identity RANK] [--waive-identity]
 *
 * Prints, on rank 0: the selected mask, its score, the evaluations and
 * their rate, the pieces each rank scored, and rank 0's CPU time per
 * evaluation (the search and the hand-out; with --root-idle nothing else).
 * Requests are scored in parts over the ranks (--samples S per request,
 * 16; a batch of fewer requests than ranks is cut), or only whole with
 * --whole (--whole-on RANK: that rank alone offers only whole requests;
 * --parts-only: the others offer only parts). --not-ready RANK makes that rank report that it could not open
 * its evaluator (the job is refused before any evaluation). Every rank
 * says what it evaluates (the landscape's seed and shape, the samples of a
 * request): ranks started with another --seed refuse the job, naming the
 * rank and the field; --no-identity RANK makes that rank say nothing, which
 * refuses the job unless rank 0 waives the check (--waive-identity).
 * Exit 0, or 1 on an error. */
#define _POSIX_C_SOURCE 200809L
#define BOSCH_EXPERIMENTAL_API 1 /* the testbed is libbosch's experimental tier */
#include <bosch/bosch.h>
#include <bosch/mpi.h>
#include <bosch/testbed.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* The testbed slowed down: a request costs --sleep-ms, spread over its
 * --samples samples (each costs sleep-ms / samples), so that a request can
 * be scored in parts on several ranks. A sample's value is the request's
 * testbed score; the request's score is their mean. */
struct slow {
    bosch_testbed *tb;
    unsigned sleep_ms;
    size_t samples;
    char identity[128]; /* what this rank evaluates */
};

static const char *slow_identity(void *user)
{
    return ((const struct slow *)user)->identity;
}

static void sleep_for(const struct slow *s, size_t samples)
{
    const uint64_t ns = (uint64_t)s->sleep_ms * 1000000u * samples / s->samples;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    if (ns)
        nanosleep(&ts, NULL);
}

/* k = max(1, ceil(f x samples)), as libbosch-torch's requests. */
static size_t slow_samples(double fidelity, void *user)
{
    const struct slow *s = user;
    if (!(fidelity > 0.0 && fidelity <= 1.0))
        return 0;
    const double x = fidelity * (double)s->samples * (1.0 - 1e-12);
    size_t k = (size_t)x;
    k += (double)k < x;
    return k < 1 ? 1 : k > s->samples ? s->samples : k;
}

static int slow_sample_eval(const uint8_t *mask, double fidelity, uint32_t draw, size_t first,
                            size_t count, size_t units, double *values, void *user)
{
    struct slow *s = user;
    double score = 0.0;
    (void)first;
    sleep_for(s, count);
    int rc = bosch_testbed_request_batch_eval(mask, &fidelity, &draw, 1, units, &score, s->tb);
    for (size_t j = 0; j < count; j++)
        values[j] = score;
    return rc;
}

/* A whole request: its samples' values added in order over their count,
 * the contract of a request that may also be scored in parts. */
static int slow_eval(const uint8_t *masks, const double *fidelity, const uint32_t *draws,
                     size_t n, size_t units, double *scores, void *user)
{
    struct slow *s = user;
    double v[1024];
    for (size_t i = 0; i < n; i++) {
        const size_t k = slow_samples(fidelity ? fidelity[i] : 1.0, s);
        if (!k || k > sizeof v / sizeof v[0])
            return BOSCH_E_INVALID;
        int rc = slow_sample_eval(masks + i * units, fidelity ? fidelity[i] : 1.0,
                                  draws ? draws[i] : 0, 0, k, units, v, s);
        if (rc != BOSCH_OK)
            return rc;
        double sum = 0.0;
        for (size_t j = 0; j < k; j++)
            sum += v[j];
        scores[i] = sum / (double)k;
    }
    return BOSCH_OK;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank 0: the search, with the job's ranks as its evaluator. */
static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static int search(bosch_mpi_coordinator *c, uint64_t budget, uint64_t seed, double rho,
                  unsigned batch, const char *journal)
{
    const uint32_t L = 28, G = 8;
    int rc = 1;
    bosch_problem *p = bosch_problem_create(L, G, 2);
    bosch_optimizer *opt = p ? bosch_optimizer_create(p) : NULL;
    bosch_result *res = NULL;
    uint8_t mask[28 * 8];
    if (!opt || bosch_problem_set_target_ratio(p, rho) || bosch_set_budget(opt, budget) ||
        bosch_set_seed(opt, seed) || bosch_set_batch_size(opt, batch) ||
        bosch_set_request_batch_evaluator(opt, bosch_mpi_request_batch_eval, c) ||
        (journal && bosch_set_journal(opt, journal, BOSCH_JOURNAL_AUTO))) {
        fprintf(stderr, "setup: %s\n", opt ? bosch_optimizer_last_error(opt) : "out of memory");
        goto out;
    }
    double t0 = now(), c0 = cpu_seconds();
    int st = bosch_optimize(opt);
    double wall = now() - t0, cpu = cpu_seconds() - c0;
    if (st < 0) {
        fprintf(stderr, "search: %s: %s (%s)\n", bosch_err_name(st),
                bosch_optimizer_last_error(opt), bosch_mpi_coordinator_last_error(c));
        goto out;
    }
    if (bosch_get_result(opt, &res) || bosch_result_mask(res, mask, sizeof mask))
        goto out;
    printf("mask ");
    for (size_t u = 0; u < sizeof mask; u++)
        putchar(mask[u] ? '1' : '0');
    uint64_t evals = bosch_result_evaluations(res, -1);
    printf("\nscore %.17g\nevaluations %llu in %.3f s: %.1f per second; rank 0 CPU %.3f ms per "
           "evaluation\n", bosch_result_score(res), (unsigned long long)evals, wall,
           (double)evals / wall, 1e3 * cpu / (double)(evals ? evals : 1));
    int ranks = 0;
    uint64_t counts[256] = {0};
    bosch_mpi_coordinator_stats(c, &ranks, counts, 256);
    printf("ranks %d:", ranks);
    for (int r = 0; r < ranks && r < 256; r++)
        printf(" %llu", (unsigned long long)counts[r]);
    printf("\n");
    rc = 0;
out:
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    return rc;
}

int main(int argc, char **argv)
{
    uint64_t budget = 300, seed = 1;
    double rho = 0.75;
    unsigned sleep_ms = 0, flags = 0, batch = 4;
    size_t samples = 16; /* at most 1024 */
    int not_ready = -1, whole = 0, whole_on = -1, parts_only = 0, no_identity = -1;
    const char *journal = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--root-idle") || !strcmp(argv[i], "--waive-identity")) {
            flags |= argv[i][2] == 'r' ? BOSCH_MPI_ROOT_IDLE : BOSCH_MPI_NO_IDENTITY;
            continue;
        }
        if (!strcmp(argv[i], "--whole") || !strcmp(argv[i], "--parts-only")) {
            *(argv[i][2] == 'w' ? &whole : &parts_only) = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "usage: see the comment at the top of mpi_testbed_search.c\n");
            return 1;
        }
        if (!strcmp(argv[i], "--budget"))
            budget = strtoull(v, NULL, 10);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(argv[i], "--rho"))
            rho = atof(v);
        else if (!strcmp(argv[i], "--batch-size"))
            batch = (unsigned)atoi(v);
        else if (!strcmp(argv[i], "--sleep-ms"))
            sleep_ms = (unsigned)atoi(v);
        else if (!strcmp(argv[i], "--samples"))
            samples = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(argv[i], "--whole-on"))
            whole_on = atoi(v);
        else if (!strcmp(argv[i], "--not-ready"))
            not_ready = atoi(v);
        else if (!strcmp(argv[i], "--no-identity"))
            no_identity = atoi(v);
        else if (!strcmp(argv[i], "--journal"))
            journal = v;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 1;
        }
        i++;
    }
    if (samples > 1024) {
        fprintf(stderr, "--samples: at most 1024\n");
        return 1;
    }
    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Every rank opens its evaluator (here: the same landscape). */
    struct slow sl = {bosch_testbed_create(28, 8, seed), sleep_ms, samples ? samples : 1, ""};
    snprintf(sl.identity, sizeof sl.identity, "testbed.shape=28x8\ntestbed.seed=%llu\nsamples=%zu\n",
             (unsigned long long)seed, sl.samples);
    int ready = sl.tb ? BOSCH_OK : BOSCH_E_NOMEM;
    const char *why = sl.tb ? NULL : "out of memory";
    if (rank == not_ready) {
        ready = BOSCH_E_IO;
        why = "cannot open the model (--not-ready)";
    }
    struct bosch_mpi_evaluator ev;
    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    ev.eval = slow_eval;
    ev.user = &sl;
    ev.identity = rank == no_identity ? NULL : slow_identity;
    if (!whole && rank != whole_on) {
        ev.samples = slow_samples;
        ev.sample_eval = slow_sample_eval;
        if (parts_only)
            ev.eval = NULL;
    }
    int rc = 0;
    if (rank == 0) {
        bosch_mpi_coordinator *c = bosch_mpi_coordinator_open(
            MPI_COMM_WORLD, 28 * 8, ready == BOSCH_OK ? &ev : NULL, ready, why, flags);
        if (!c) {
            fprintf(stderr, "%s\n", bosch_mpi_create_error());
            rc = 1;
        } else {
            rc = search(c, budget, seed, rho, batch, journal);
            bosch_mpi_coordinator_free(c);
        }
    } else {
        rc = bosch_mpi_worker_serve(MPI_COMM_WORLD, 28 * 8, ready == BOSCH_OK ? &ev : NULL,
                                    ready, why) ? 1 : 0;
    }
    bosch_testbed_free(sl.tb);
    MPI_Finalize();
    return rc;
}
