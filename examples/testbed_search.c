/* Runs BOSCH on a synthetic landscape shaped like Qwen3-1.7B (28 layers x 8
 * KV groups) and prints the selected heads.
 *
 *   bosch-testbed-search [options] [rho] [budget] [seed] [strategy] [entanglement]
 *
 * Options (positional arguments, kept for compatibility, give the first five):
 *   --rho R            target SWA ratio (default 0.75)
 *   --budget N         evaluations, anchors included (default 1500)
 *   --seed S           seed of the landscape and of the search (default 1)
 *   --strategy NAME    built-in search strategy (default auto)
 *   --entanglement E   share of entangled unit pairs of the landscape (default 0.1)
 *   --threads N        evaluate up to N candidates of a batch at once (default 1)
 *   --sleep-ms M       artificial delay per evaluation in milliseconds (default 0),
 *                      to mimic a real model and make a run long enough to interrupt
 *   --journal PATH     journal every evaluation to PATH; an existing journal is
 *                      resumed (the run must use the same settings, threads and
 *                      time limit excepted)
 *   --time-limit S     stop after S seconds (default 0 = none)
 *   -h, --help
 *
 * The search runs on its own thread; the main thread waits in a libuv loop.
 * SIGINT or SIGTERM stops the search: evaluations in flight finish (and are
 * journaled), the best mask so far is printed, and the exit code is 3. A
 * second signal exits at once. Rerun with the same --journal to resume.
 *
 * Exit codes: 0 the search ended (done or budget reached), 3 stopped (signal
 * or time limit), 1 error, 2 bad command line.
 */
/* The testbed is libbosch's experimental tier (docs/abi.md): not covered by
 * the ABI promise, visible with this define. */
#define BOSCH_EXPERIMENTAL_API 1
#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console.h"
#include "numbers.h"

enum { EXIT_DONE = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_STOPPED = 3 };

struct settings {
    double rho;
    unsigned long long budget, seed;
    const char *strategy;
    double entanglement;
    unsigned threads;
    double sleep_ms;
    const char *journal;
    double time_limit;
};

/* ------------------------------------------------------------------------ */
/* Evaluator: the testbed score, after an optional delay. Thread-safe: the   */
/* testbed's scoring functions only read the landscape.                      */
/* ------------------------------------------------------------------------ */
struct evaluator {
    const bosch_testbed *tb;
    struct timespec delay;
    int sleep;
};

static int evaluate(const uint8_t *mask, size_t units, double *score, void *user)
{
    const struct evaluator *ev = user;
    if (ev->sleep) {
        struct timespec left = ev->delay;
        while (nanosleep(&left, &left) != 0 && errno == EINTR)
            ;
    }
    (void)units;
    return bosch_testbed_score(ev->tb, mask, score);
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */
/* ------------------------------------------------------------------------ */
static void usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [options] [rho] [budget] [seed] [strategy] [entanglement]\n"
            "  --rho R           target SWA ratio (0.75)\n"
            "  --budget N        evaluations, anchors included (1500)\n"
            "  --seed S          landscape and search seed (1)\n"
            "  --strategy NAME   search strategy (auto)\n"
            "  --entanglement E  entanglement of the landscape (0.1)\n"
            "  --threads N       concurrent evaluations (1)\n"
            "  --sleep-ms M      artificial delay per evaluation, ms (0)\n"
            "  --journal PATH    journal evaluations; resume PATH if it exists\n"
            "  --time-limit S    stop after S seconds (0 = none)\n"
            "exit codes: 0 done, 3 stopped (signal or time limit), 1 error, 2 usage\n",
            argv0);
}

static int parse_args(int argc, char **argv, struct settings *s)
{
    enum { O_RHO = 256, O_BUDGET, O_SEED, O_STRATEGY, O_ENT, O_THREADS, O_SLEEP, O_JOURNAL,
           O_TIME };
    static const struct option longopts[] = {
        {"rho", required_argument, NULL, O_RHO},
        {"budget", required_argument, NULL, O_BUDGET},
        {"seed", required_argument, NULL, O_SEED},
        {"strategy", required_argument, NULL, O_STRATEGY},
        {"entanglement", required_argument, NULL, O_ENT},
        {"threads", required_argument, NULL, O_THREADS},
        {"sleep-ms", required_argument, NULL, O_SLEEP},
        {"journal", required_argument, NULL, O_JOURNAL},
        {"time-limit", required_argument, NULL, O_TIME},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long u;
    int c;
    /* Positional arguments fill the fields not given as options, in order. */
    int given[5] = {0};
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case O_RHO: bad = parse_double(optarg, &s->rho) ? "--rho" : NULL; given[0] = 1; break;
        case O_BUDGET: bad = parse_ull(optarg, &s->budget) ? "--budget" : NULL; given[1] = 1; break;
        case O_SEED: bad = parse_ull(optarg, &s->seed) ? "--seed" : NULL; given[2] = 1; break;
        case O_STRATEGY: s->strategy = optarg; given[3] = 1; break;
        case O_ENT:
            bad = parse_double(optarg, &s->entanglement) ? "--entanglement" : NULL;
            given[4] = 1;
            break;
        case O_THREADS:
            if (parse_ull(optarg, &u) || u < 1 || u > 256)
                bad = "--threads (1..256)";
            else
                s->threads = (unsigned)u;
            break;
        case O_SLEEP:
            if (parse_double(optarg, &s->sleep_ms) || s->sleep_ms < 0)
                bad = "--sleep-ms";
            break;
        case O_JOURNAL: s->journal = optarg; break;
        case O_TIME:
            if (parse_double(optarg, &s->time_limit) || s->time_limit < 0)
                bad = "--time-limit";
            break;
        case 'h': usage(stdout, argv[0]); exit(EXIT_DONE);
        default: usage(stderr, argv[0]); return -1;
        }
        if (bad) {
            fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], optarg, bad);
            return -1;
        }
    }
    static const char *names[5] = {"rho", "budget", "seed", "strategy", "entanglement"};
    for (int i = 0; optind < argc; i++, optind++) {
        const char *a = argv[optind];
        if (i >= 5) {
            fprintf(stderr, "%s: too many arguments ('%s')\n", argv[0], a);
            return -1;
        }
        if (given[i]) {
            fprintf(stderr, "%s: %s given twice ('%s')\n", argv[0], names[i], a);
            return -1;
        }
        int err = 0;
        switch (i) {
        case 0: err = parse_double(a, &s->rho); break;
        case 1: err = parse_ull(a, &s->budget); break;
        case 2: err = parse_ull(a, &s->seed); break;
        case 3: s->strategy = a; break;
        case 4: err = parse_double(a, &s->entanglement); break;
        }
        if (err) {
            fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], a, names[i]);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */

static int fail(int rc, const char *what, const bosch_optimizer *opt)
{
    fprintf(stderr, "%s: %s: %s%s%s\n", what, bosch_err_name(rc), bosch_strerror(rc),
            opt && *bosch_optimizer_last_error(opt) ? " - " : "", opt ? bosch_optimizer_last_error(opt) : "");
    return EXIT_ERROR;
}

#define TRY(call, what, opt)                                                                   \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (bosch_is_error(rc_)) {                                                             \
            status = fail(rc_, what, opt);                                                     \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

static void print_result(const bosch_result *res, int rc, const struct settings *s, uint32_t L,
                         uint32_t G)
{
    uint8_t *mask = malloc((size_t)L * G);
    if (!mask)
        return;
    bosch_result_mask(res, mask, (size_t)L * G);
    printf("BOSCH (%s) on a Qwen3-1.7B-shaped entangled landscape, rho = %.3f, seed %llu\n",
           bosch_err_name(rc), s->rho, s->seed);
    printf("layer  SWA units (# = sliding window, . = full)\n");
    for (uint32_t l = 0; l < L; l++) {
        printf("%5u  ", l);
        for (uint32_t g = 0; g < G; g++)
            putchar(mask[l * G + g] ? '#' : '.');
        putchar('\n');
    }
    printf("normalised score %.4f, raw %.4f, ratio %.4f, evaluations %llu "
           "(probe %llu, alloc %llu, group %llu), KV saving at 32k/w1024/sink4: %.1f%%\n",
           bosch_result_normalized_score(res), bosch_result_score(res), bosch_result_ratio(res),
           (unsigned long long)bosch_result_evaluations(res, -1),
           (unsigned long long)bosch_result_evaluations(res, BOSCH_STAGE_PROBE),
           (unsigned long long)bosch_result_evaluations(res, BOSCH_STAGE_ALLOC),
           (unsigned long long)bosch_result_evaluations(res, BOSCH_STAGE_GROUP),
           100.0 * bosch_result_kv_saving(res, 32768, 1024, 4));
    printf("replayed from the journal: %llu evaluations\n",
           (unsigned long long)bosch_result_replayed(res));
    if (!bosch_result_feasible(res))
        printf("(no mask with the exact target count was evaluated yet: the mask above is the "
               "best evaluated of any kind, hence no score)\n");
    free(mask);
}

int main(int argc, char **argv)
{
    struct settings s = {.rho = 0.75, .budget = 1500, .seed = 1, .strategy = "auto",
                         .entanglement = 0.1, .threads = 1, .sleep_ms = 0, .journal = NULL,
                         .time_limit = 0};
    if (parse_args(argc, argv, &s))
        return EXIT_USAGE;

    const uint32_t L = 28, G = 8, H = 2;
    int status = EXIT_ERROR;
    bosch_testbed *tb = bosch_testbed_create(L, G, s.seed);
    bosch_problem *prob = bosch_problem_create(L, G, H);
    bosch_optimizer *opt = NULL;
    bosch_result *res = NULL;
    if (!tb || !prob) {
        fprintf(stderr, "out of memory\n");
        goto out;
    }
    TRY(bosch_testbed_set(tb, "entanglement", s.entanglement), "entanglement", NULL);
    TRY(bosch_problem_set_target_ratio(prob, s.rho), "rho", NULL);

    opt = bosch_optimizer_create(prob);
    if (!opt) {
        fprintf(stderr, "out of memory\n");
        goto out;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%llu", s.budget);
    TRY(bosch_set_option(opt, "budget", buf), "budget", opt);
    snprintf(buf, sizeof buf, "%llu", s.seed);
    TRY(bosch_set_option(opt, "seed", buf), "seed", opt);
    TRY(bosch_set_option(opt, "strategy", s.strategy), "strategy", opt);
    TRY(bosch_set_threads(opt, s.threads), "threads", opt);
    if (s.time_limit > 0)
        TRY(bosch_set_time_limit(opt, s.time_limit), "time limit", opt);
    if (s.journal)
        TRY(bosch_set_journal(opt, s.journal, BOSCH_JOURNAL_AUTO), "journal", opt);

    struct evaluator ev = {.tb = tb, .sleep = s.sleep_ms > 0};
    if (ev.sleep) {
        double ns = s.sleep_ms * 1e6;
        ev.delay.tv_sec = (time_t)(ns / 1e9);
        ev.delay.tv_nsec = (long)fmod(ns, 1e9);
    }
    TRY(bosch_set_evaluator(opt, evaluate, &ev), "evaluator", opt);
    TRY(bosch_set_evaluator_thread_safe(opt, 1), "evaluator", opt);
    struct console_progress pr;
    console_progress_init(&pr);
    TRY(bosch_set_progress(opt, console_on_progress, &pr), "progress", opt);

    /* The search runs on its own thread; this one waits for SIGINT/SIGTERM. */
    int rc = console_run(opt, &pr, EXIT_STOPPED);
    if (rc == INT32_MIN) {
        fprintf(stderr, "cannot start the search thread or its event loop\n");
        goto out;
    }
    if (bosch_is_error(rc)) {
        status = fail(rc, "search", opt);
        if (bosch_get_result(opt, &res) == BOSCH_OK && bosch_result_evaluations(res, -1) > 0)
            fprintf(stderr, "(%llu evaluations were done before the error)\n",
                    (unsigned long long)bosch_result_evaluations(res, -1));
        goto out;
    }
    TRY(bosch_get_result(opt, &res), "result", opt);
    print_result(res, rc, &s, L, G);
    if (rc == BOSCH_FORCED_STOP || rc == BOSCH_TIME_REACHED) {
        if (s.journal)
            fprintf(stderr, "stopped (%s); rerun with --journal %s to resume\n",
                    rc == BOSCH_TIME_REACHED ? "time limit" : "signal", s.journal);
        status = EXIT_STOPPED;
    } else {
        status = EXIT_DONE;
    }

out:
    fflush(stdout);
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    bosch_problem_free(prob);
    bosch_testbed_free(tb);
    return status;
}
