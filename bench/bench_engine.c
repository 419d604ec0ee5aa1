/* bench_engine: the evaluation engine of issue 3 (concurrent evaluation,
 * journal, resume), measured through the public API only.
 *
 *   bench_engine [--quick] [--sleep-ms M] [--thread-budget LIST] [--threads LIST]
 *                [--journal-evals N] [--sync-evals N] [--repeats R] [--dir PATH]
 *                [--no-threads] [--no-journal]
 *
 * (a) Concurrent evaluation. A thread-safe single-candidate evaluator that
 *     sleeps M ms (default 20) and then returns the testbed score; wall time
 *     of bosch_optimize on the Qwen3-1.7B shape (28 x 8) for each budget of
 *     the --thread-budget list (default 200,1000) with the default batch
 *     size 8, for each thread count of LIST (default 1,2,4,8). Reports the
 *     speed-up over 1 thread, the efficiency (speed-up / threads), the
 *     largest number of evaluations observed in flight at once, the batch
 *     sizes the search proposed and the wall time perfect workers would
 *     need for them, and whether the result (mask, scores, whole history)
 *     is identical to the 1-thread run.
 * (b) Journal cost. A near-zero-cost batch evaluator (as in bench_search's
 *     overhead section), one thread, budget N (default 20000): wall time per
 *     evaluation with the journal off, on, and on with journal_sync 1 (that
 *     one at --sync-evals evaluations, default 2000, since every evaluation
 *     waits for fdatasync), the median of R runs (default 5); journal bytes
 *     per evaluation (file size / evaluations) and the header frame's size.
 * (c) Resume. The journal of (b) replayed by a new optimizer in RESUME mode:
 *     evaluations replayed per second, evaluator calls (must be 0) and
 *     identity with the original run; then a run stopped by bosch_force_stop
 *     half way and resumed: identity with the uninterrupted run and the
 *     number of evaluations redone.
 *
 * The Markdown report goes to stdout; progress and any "BUG?" line (a broken
 * library contract) to stderr. Journals are written under --dir (default
 * the current directory) and removed at the end.
 */
#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define L_SHAPE 28
#define G_SHAPE 8
#define H_SHAPE 2
#define UNITS (L_SHAPE * G_SHAPE)
#define MAX_THREADS 16

static struct {
    double sleep_ms;
    uint64_t thread_budgets[8];
    unsigned nbudgets;
    unsigned threads[MAX_THREADS];
    unsigned nthreads;
    uint64_t journal_evals, sync_evals;
    unsigned repeats;
    const char *dir;
    int do_threads, do_journal;
} cfg;

static int bugs;

static void report_bug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "BUG? ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    bugs++;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------------------ */
/* Snapshots of a result, to compare runs                                    */
/* ------------------------------------------------------------------------ */
struct snapshot {
    int status, feasible;
    uint8_t mask[UNITS];
    double score;
    uint64_t evals, replayed;
    size_t hist_n;
    uint8_t *hist_masks;
    double *hist_scores;
    int *hist_stages;
};

static void snapshot_take(const bosch_optimizer *opt, struct snapshot *s)
{
    memset(s, 0, sizeof *s);
    bosch_result *r = NULL;
    if (bosch_get_result(opt, &r) != BOSCH_OK || !r) {
        report_bug("bosch_get_result failed");
        return;
    }
    s->status = bosch_result_status(r);
    s->feasible = bosch_result_feasible(r);
    bosch_result_mask(r, s->mask, UNITS);
    s->score = bosch_result_score(r);
    s->evals = bosch_result_evaluations(r, -1);
    s->replayed = bosch_result_replayed(r);
    s->hist_n = bosch_result_history_size(r);
    s->hist_masks = malloc(s->hist_n * UNITS + 1);
    s->hist_scores = malloc(s->hist_n * sizeof(double) + 1);
    s->hist_stages = malloc(s->hist_n * sizeof(int) + 1);
    for (size_t i = 0; i < s->hist_n; i++)
        bosch_result_history_entry(r, i, s->hist_masks + i * UNITS, &s->hist_scores[i],
                                   &s->hist_stages[i]);
    bosch_result_free(r);
}

static void snapshot_free(struct snapshot *s)
{
    free(s->hist_masks);
    free(s->hist_scores);
    free(s->hist_stages);
    memset(s, 0, sizeof *s);
}

/* NULL when identical (best mask, best score, evaluation count, every
 * history record), else what differs. */
static const char *snapshot_diff(const struct snapshot *a, const struct snapshot *b)
{
    static char why[160];
    if (memcmp(a->mask, b->mask, UNITS) != 0)
        return "best mask";
    if (!(a->score == b->score) && !(isnan(a->score) && isnan(b->score)))
        return "best score";
    if (a->evals != b->evals) {
        snprintf(why, sizeof why, "evaluation count (%llu vs %llu)",
                 (unsigned long long)a->evals, (unsigned long long)b->evals);
        return why;
    }
    if (a->hist_n != b->hist_n) {
        snprintf(why, sizeof why, "history length (%zu vs %zu)", a->hist_n, b->hist_n);
        return why;
    }
    for (size_t i = 0; i < a->hist_n; i++)
        if (memcmp(a->hist_masks + i * UNITS, b->hist_masks + i * UNITS, UNITS) != 0 ||
            a->hist_scores[i] != b->hist_scores[i] || a->hist_stages[i] != b->hist_stages[i]) {
            snprintf(why, sizeof why, "history record %zu", i);
            return why;
        }
    return NULL;
}

static bosch_optimizer *new_optimizer(uint64_t budget, const bosch_problem *p)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    if (!opt) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)budget);
    int rc = bosch_set_option(opt, "budget", buf);
    if (rc == BOSCH_OK)
        rc = bosch_set_option(opt, "seed", "1");
    if (rc != BOSCH_OK) {
        fprintf(stderr, "options: %s (%s)\n", bosch_err_name(rc), bosch_optimizer_last_error(opt));
        exit(1);
    }
    return opt;
}

static void must(int rc, const char *what, const bosch_optimizer *opt)
{
    if (bosch_is_error(rc)) {
        fprintf(stderr, "%s: %s (%s)\n", what, bosch_err_name(rc),
                opt ? bosch_optimizer_last_error(opt) : "");
        exit(1);
    }
}

/* ------------------------------------------------------------------------ */
/* (a) Concurrent evaluation                                                 */
/* ------------------------------------------------------------------------ */
struct sleepy {
    const bosch_testbed *tb;
    struct timespec delay;
    atomic_int in_flight, max_in_flight;
    atomic_ullong calls;
    /* batch sizes, from the evaluation counts seen by the progress callback */
    uint64_t last, *sizes;
    size_t nsizes, cap;
};

static void batch_progress(const bosch_progress *p, void *user)
{
    struct sleepy *s = user;
    uint64_t e = bosch_progress_evaluations(p);
    if (e <= s->last)
        return;
    if (s->nsizes == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->sizes = realloc(s->sizes, s->cap * sizeof *s->sizes);
        if (!s->sizes)
            exit(1);
    }
    s->sizes[s->nsizes++] = e - s->last;
    s->last = e;
}

static int sleepy_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    struct sleepy *s = user;
    int now = atomic_fetch_add(&s->in_flight, 1) + 1;
    int seen = atomic_load(&s->max_in_flight);
    while (now > seen && !atomic_compare_exchange_weak(&s->max_in_flight, &seen, now))
        ;
    atomic_fetch_add(&s->calls, 1);
    struct timespec left = s->delay;
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
    atomic_fetch_sub(&s->in_flight, 1);
    (void)units;
    return bosch_testbed_score(s->tb, mask, score);
}

static void bench_threads(const bosch_problem *p, const bosch_testbed *tb, uint64_t budget)
{
    printf("### Budget %llu\n\n", (unsigned long long)budget);
    printf("| threads | wall s | evaluations | evaluator calls | batches (mean size) | evals/s | "
           "speed-up | efficiency | in flight | ideal wall s | wall / ideal | identical to 1 "
           "thread |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    struct snapshot base;
    double base_wall = NAN;
    int have_base = 0;
    for (unsigned k = 0; k < cfg.nthreads; k++) {
        unsigned t = cfg.threads[k];
        struct sleepy s = {.tb = tb};
        double ns = cfg.sleep_ms * 1e6;
        s.delay.tv_sec = (time_t)(ns / 1e9);
        s.delay.tv_nsec = (long)fmod(ns, 1e9);
        atomic_init(&s.in_flight, 0);
        atomic_init(&s.max_in_flight, 0);
        atomic_init(&s.calls, 0);
        bosch_optimizer *opt = new_optimizer(budget, p);
        must(bosch_set_progress(opt, batch_progress, &s), "set_progress", opt);
        must(bosch_set_evaluator(opt, sleepy_eval, &s), "set_evaluator", opt);
        must(bosch_set_evaluator_thread_safe(opt, 1), "set_evaluator_thread_safe", opt);
        must(bosch_set_threads(opt, t), "set_threads", opt);
        fprintf(stderr, "(a) threads %u ...\n", t);
        double t0 = now_seconds();
        int rc = bosch_optimize(opt);
        double wall = now_seconds() - t0;
        must(rc, "bosch_optimize", opt);
        struct snapshot snap;
        snapshot_take(opt, &snap);
        if (atomic_load(&s.calls) != snap.evals)
            report_bug("threads %u: %llu evaluator calls for %llu evaluations", t,
                       (unsigned long long)atomic_load(&s.calls),
                       (unsigned long long)snap.evals);
        if ((unsigned)atomic_load(&s.max_in_flight) > t)
            report_bug("threads %u: %d evaluations in flight at once", t,
                       atomic_load(&s.max_in_flight));
        const char *diff = NULL;
        if (!have_base) {
            base = snap;
            base_wall = wall;
            have_base = 1;
        } else {
            diff = snapshot_diff(&base, &snap);
            if (diff)
                report_bug("threads %u: result differs from the first run: %s", t, diff);
        }
        /* Ideal wall: every batch takes ceil(size / threads) rounds of one delay. */
        uint64_t rounds = 0, seen = 0;
        for (size_t i = 0; i < s.nsizes; i++) {
            rounds += (s.sizes[i] + t - 1) / t;
            seen += s.sizes[i];
        }
        if (seen != snap.evals)
            report_bug("threads %u: progress saw %llu evaluations in batches, the result has "
                       "%llu", t, (unsigned long long)seen, (unsigned long long)snap.evals);
        double ideal = (double)rounds * cfg.sleep_ms / 1000.0;
        double speedup = base_wall / wall;
        printf("| %u | %.3f | %llu | %llu | %zu (%.2f) | %.1f | %.2f | %.0f%% | %d | %.3f | "
               "%.2f | %s%s |\n",
               t, wall, (unsigned long long)snap.evals, (unsigned long long)atomic_load(&s.calls),
               s.nsizes, s.nsizes ? (double)seen / (double)s.nsizes : 0.0,
               (double)snap.evals / wall, speedup, 100.0 * speedup / t,
               atomic_load(&s.max_in_flight), ideal, wall / ideal,
               k == 0 ? "(reference)" : diff ? "NO: " : "yes", diff ? diff : "");
        free(s.sizes);
        if (snap.hist_masks != base.hist_masks)
            snapshot_free(&snap);
        bosch_optimizer_free(opt);
    }
    if (have_base) {
        printf("\nStatus: %s, best raw score %.6f (%s).\n\n", bosch_err_name(base.status),
               base.score, bugs ? "see BUG? lines" : "every thread count");
        snapshot_free(&base);
    }
}

/* ------------------------------------------------------------------------ */
/* (b) Journal cost and (c) resume                                           */
/* ------------------------------------------------------------------------ */
/* Near-zero-cost batch evaluator (as bench_search's "null" evaluator): all
 * full scores highest, so the anchors are valid. */
struct counting {
    atomic_ullong calls;     /* candidates scored */
    uint64_t stop_after;     /* force-stop once this many are scored (0 = never) */
    bosch_optimizer *opt;
};

static int null_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores,
                           void *user)
{
    struct counting *c = user;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *m = masks + i * units;
        uint64_t acc = 0;
        for (size_t u = 0; u < units; u++)
            if (!m[u])
                acc += (u * 0x9E3779B97F4A7C15ull) >> 54; /* 0..1023 */
        scores[i] = 0.5 + 1e-9 * (double)acc;
    }
    if (c) {
        unsigned long long total = atomic_fetch_add(&c->calls, n) + n;
        if (c->stop_after && total >= c->stop_after)
            bosch_force_stop(c->opt);
    }
    return 0;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Size of the first (header) frame: 28 bytes + clen (little-endian u32 at
 * offset 8), per docs/journal.md. */
static long long header_frame_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char h[28];
    long long out = -1;
    if (fread(h, 1, sizeof h, f) == sizeof h && memcmp(h, "BSHJ", 4) == 0)
        out = 28 + (long long)(h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24);
    fclose(f);
    return out;
}

struct jrun {
    double wall;
    uint64_t evals, calls, replayed;
    long long bytes;
    int status;
};

/* One search with the null evaluator; journal `path` (NULL = off) in `mode`. */
static struct jrun journal_run(const bosch_problem *p, uint64_t budget, const char *path, int mode,
                               int sync, uint64_t stop_after, struct snapshot *snap)
{
    struct jrun r = {0};
    struct counting c;
    atomic_init(&c.calls, 0);
    c.stop_after = stop_after;
    bosch_optimizer *opt = new_optimizer(budget, p);
    c.opt = opt;
    must(bosch_set_batch_evaluator(opt, null_batch_eval, &c), "set_batch_evaluator", opt);
    if (path) {
        must(bosch_set_journal(opt, path, mode), "set_journal", opt);
        must(bosch_set_journal_sync(opt, sync), "set_journal_sync", opt);
    }
    double t0 = now_seconds();
    r.status = bosch_optimize(opt);
    r.wall = now_seconds() - t0;
    must(r.status, "bosch_optimize", opt);
    bosch_result *res = NULL;
    must(bosch_get_result(opt, &res), "get_result", opt);
    r.evals = bosch_result_evaluations(res, -1);
    r.replayed = bosch_result_replayed(res);
    bosch_result_free(res);
    r.calls = atomic_load(&c.calls);
    r.bytes = path ? file_size(path) : 0;
    if (snap)
        snapshot_take(opt, snap);
    bosch_optimizer_free(opt);
    return r;
}

static const char *fs_name(const char *dir)
{
    struct statfs sf;
    if (statfs(dir, &sf) != 0)
        return "unknown";
    switch ((unsigned long)sf.f_type) {
    case 0xEF53UL: return "ext2/3/4";
    case 0x01021994UL: return "tmpfs";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794C7630UL: return "overlayfs";
    default: return "other";
    }
}

static void bench_journal(const bosch_problem *p)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_engine.%ld.journal", cfg.dir, (long)getpid());
    unsigned R = cfg.repeats;
    double *w = calloc(R, sizeof *w);
    struct jrun off = {0}, on = {0}, syn = {0};
    double us_off, us_on, us_sync;

    printf("## (b) Journal cost per evaluation\n\n");
    printf("Qwen3-1.7B shape (224 units, rho 0.75), search seed 1, strategy auto, batch size 8, "
           "one thread, a near-zero-cost batch evaluator (0.5 + a tiny mask-dependent value). "
           "Time per evaluation = CLOCK_MONOTONIC wall of bosch_optimize / evaluations, the "
           "median of %u runs; it includes the library's own search overhead, so the journal's "
           "cost is the difference to 'off'. Journal in %s (file system: %s), mode CREATE (the "
           "file is replaced each run). Bytes per evaluation = final file size / evaluations "
           "(header frame included).\n\n",
           R, cfg.dir, fs_name(cfg.dir));

    fprintf(stderr, "(b) journal off ...\n");
    for (unsigned i = 0; i < R; i++) {
        off = journal_run(p, cfg.journal_evals, NULL, 0, 0, 0, NULL);
        w[i] = off.wall;
    }
    us_off = 1e6 * median(w, R) / (double)off.evals;

    fprintf(stderr, "(b) journal on ...\n");
    struct snapshot orig;
    memset(&orig, 0, sizeof orig);
    for (unsigned i = 0; i < R; i++) {
        if (i == R - 1)
            on = journal_run(p, cfg.journal_evals, path, BOSCH_JOURNAL_CREATE, 0, 0, &orig);
        else
            on = journal_run(p, cfg.journal_evals, path, BOSCH_JOURNAL_CREATE, 0, 0, NULL);
        w[i] = on.wall;
    }
    us_on = 1e6 * median(w, R) / (double)on.evals;
    long long hdr = header_frame_size(path);
    if (on.evals != off.evals)
        report_bug("journal on: %llu evaluations, off: %llu", (unsigned long long)on.evals,
                   (unsigned long long)off.evals);

    /* (c) first part: replay the complete journal just written. */
    fprintf(stderr, "(c) full replay ...\n");
    struct snapshot rep;
    double *rw = calloc(R, sizeof *rw);
    struct jrun replay = {0};
    for (unsigned i = 0; i < R; i++) {
        replay = journal_run(p, cfg.journal_evals, path, BOSCH_JOURNAL_RESUME, 0, 0,
                             i == R - 1 ? &rep : NULL);
        rw[i] = replay.wall;
        if (replay.calls != 0)
            report_bug("full replay called the evaluator %llu times",
                       (unsigned long long)replay.calls);
    }
    double replay_wall = median(rw, R);
    const char *replay_diff = snapshot_diff(&orig, &rep);
    if (replay_diff)
        report_bug("full replay: result differs from the original run: %s", replay_diff);
    if (replay.replayed != on.evals)
        report_bug("full replay: %llu replayed, the journal holds %llu evaluations",
                   (unsigned long long)replay.replayed, (unsigned long long)on.evals);
    long long size_after_replay = file_size(path);
    if (size_after_replay != on.bytes)
        report_bug("full replay changed the journal's size (%lld -> %lld bytes)", on.bytes,
                   size_after_replay);

    fprintf(stderr, "(b) journal on, sync ...\n");
    for (unsigned i = 0; i < R; i++) {
        syn = journal_run(p, cfg.sync_evals, path, BOSCH_JOURNAL_CREATE, 1, 0, NULL);
        w[i] = syn.wall;
    }
    us_sync = 1e6 * median(w, R) / (double)syn.evals;
    struct jrun syn_off = {0};
    for (unsigned i = 0; i < R; i++) {
        syn_off = journal_run(p, cfg.sync_evals, NULL, 0, 0, 0, NULL);
        w[i] = syn_off.wall;
    }
    double us_sync_off = 1e6 * median(w, R) / (double)syn_off.evals;

    printf("| journal | budget | evaluations | us / evaluation | journal cost us / evaluation | "
           "file bytes | bytes / evaluation |\n|---|---|---|---|---|---|---|\n");
    printf("| off | %llu | %llu | %.2f | - | - | - |\n", (unsigned long long)cfg.journal_evals,
           (unsigned long long)off.evals, us_off);
    printf("| on, journal_sync 0 | %llu | %llu | %.2f | %.2f | %lld | %.1f |\n",
           (unsigned long long)cfg.journal_evals, (unsigned long long)on.evals, us_on,
           us_on - us_off, on.bytes, (double)on.bytes / (double)on.evals);
    printf("| off | %llu | %llu | %.2f | - | - | - |\n", (unsigned long long)cfg.sync_evals,
           (unsigned long long)syn_off.evals, us_sync_off);
    printf("| on, journal_sync 1 | %llu | %llu | %.2f | %.2f | %lld | %.1f |\n",
           (unsigned long long)cfg.sync_evals, (unsigned long long)syn.evals, us_sync,
           us_sync - us_sync_off, syn.bytes, (double)syn.bytes / (double)syn.evals);
    printf("\nHeader frame: %lld bytes; the evaluation frames average %.1f bytes (the mask "
           "alone is %d bytes packed, 28 bytes of frame header, a zstd frame per record).\n\n",
           hdr, hdr >= 0 ? (double)(on.bytes - hdr) / (double)on.evals : NAN, (UNITS + 63) / 64 * 8);

    printf("## (c) Resume\n\n");
    printf("**Full replay.** A new optimizer with the same settings opens the journal of the "
           "'on, journal_sync 0' run (%llu evaluations) in RESUME mode and runs "
           "bosch_optimize; wall = median of %u runs. Evaluator calls must be 0 and the result "
           "(best mask, score, evaluation count, whole history) identical.\n\n",
           (unsigned long long)on.evals, R);
    printf("| evaluations replayed | wall s | replayed / s | us / replayed evaluation | "
           "evaluator calls | identical |\n|---|---|---|---|---|---|\n");
    printf("| %llu | %.4f | %.0f | %.2f | %llu | %s%s |\n\n",
           (unsigned long long)replay.replayed, replay_wall,
           (double)replay.replayed / replay_wall, 1e6 * replay_wall / (double)replay.replayed,
           (unsigned long long)replay.calls, replay_diff ? "NO: " : "yes",
           replay_diff ? replay_diff : "");

    /* (c) second part: stopped half way, then resumed. */
    fprintf(stderr, "(c) stop half way and resume ...\n");
    uint64_t half = on.evals / 2;
    struct jrun first = journal_run(p, cfg.journal_evals, path, BOSCH_JOURNAL_CREATE, 0, half, NULL);
    long long size_first = file_size(path);
    struct snapshot resumed;
    struct jrun second =
        journal_run(p, cfg.journal_evals, path, BOSCH_JOURNAL_AUTO, 0, 0, &resumed);
    const char *resume_diff = snapshot_diff(&orig, &resumed);
    if (resume_diff)
        report_bug("stopped + resumed run differs from the uninterrupted one: %s", resume_diff);
    if (second.replayed != first.evals)
        report_bug("resume replayed %llu evaluations, the stopped run had done %llu",
                   (unsigned long long)second.replayed, (unsigned long long)first.evals);
    if (second.calls + second.replayed != second.evals)
        report_bug("resume: %llu evaluator calls + %llu replayed != %llu evaluations",
                   (unsigned long long)second.calls, (unsigned long long)second.replayed,
                   (unsigned long long)second.evals);
    printf("**Stopped and resumed.** The same search with the journal, stopped by "
           "bosch_force_stop from the evaluator once %llu candidates were scored (status %s), "
           "then run again in AUTO mode.\n\n",
           (unsigned long long)half, bosch_err_name(first.status));
    printf("| first run evaluations | journal bytes | resumed: replayed | resumed: evaluator "
           "calls | final evaluations | resumed wall s | identical to uninterrupted |\n"
           "|---|---|---|---|---|---|---|\n");
    printf("| %llu | %lld | %llu | %llu | %llu | %.3f | %s%s |\n\n",
           (unsigned long long)first.evals, size_first, (unsigned long long)second.replayed,
           (unsigned long long)second.calls, (unsigned long long)second.evals, second.wall,
           resume_diff ? "NO: " : "yes", resume_diff ? resume_diff : "");

    snapshot_free(&orig);
    snapshot_free(&rep);
    snapshot_free(&resumed);
    unlink(path);
    free(w);
    free(rw);
}

/* ------------------------------------------------------------------------ */
/* main                                                                      */
/* ------------------------------------------------------------------------ */
static void usage(void)
{
    fprintf(stderr,
            "usage: bench_engine [--quick] [--sleep-ms M] [--thread-budget LIST] [--threads LIST]\n"
            "                    [--journal-evals N] [--sync-evals N] [--repeats R] [--dir PATH]\n"
            "                    [--no-threads] [--no-journal]\n"
            "defaults: sleep 20 ms, thread budgets 200,1000, threads 1,2,4,8, journal evals 20000,\n"
            "          sync evals 2000, repeats 5, dir '.'.\n"
            "--quick: sleep 5 ms, thread budget 80, journal evals 3000, sync evals 300,\n"
            "         repeats 1 (flags after --quick override it).\n");
}

static int parse_threads(const char *s)
{
    cfg.nthreads = 0;
    while (*s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || v < 1 || v > 256 || cfg.nthreads == MAX_THREADS)
            return -1;
        cfg.threads[cfg.nthreads++] = (unsigned)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return cfg.nthreads ? 0 : -1;
}

static int parse_budgets(const char *s)
{
    cfg.nbudgets = 0;
    while (*s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || v < 2 || cfg.nbudgets == 8 || (*end && *end != ','))
            return -1;
        cfg.thread_budgets[cfg.nbudgets++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return cfg.nbudgets ? 0 : -1;
}

int main(int argc, char **argv)
{
    cfg.sleep_ms = 20;
    parse_budgets("200,1000");
    parse_threads("1,2,4,8");
    cfg.journal_evals = 20000;
    cfg.sync_evals = 2000;
    cfg.repeats = 5;
    cfg.dir = ".";
    cfg.do_threads = cfg.do_journal = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            cfg.sleep_ms = 5;
            parse_budgets("80");
            cfg.journal_evals = 3000;
            cfg.sync_evals = 300;
            cfg.repeats = 1;
        } else if (strcmp(a, "--sleep-ms") == 0 && v) {
            cfg.sleep_ms = atof(v), i++;
        } else if (strcmp(a, "--thread-budget") == 0 && v) {
            if (parse_budgets(v)) {
                usage();
                return 2;
            }
            i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (parse_threads(v)) {
                usage();
                return 2;
            }
            i++;
        } else if (strcmp(a, "--journal-evals") == 0 && v) {
            cfg.journal_evals = strtoull(v, NULL, 10), i++;
        } else if (strcmp(a, "--sync-evals") == 0 && v) {
            cfg.sync_evals = strtoull(v, NULL, 10), i++;
        } else if (strcmp(a, "--repeats") == 0 && v) {
            cfg.repeats = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (strcmp(a, "--dir") == 0 && v) {
            cfg.dir = v, i++;
        } else if (strcmp(a, "--no-threads") == 0) {
            cfg.do_threads = 0;
        } else if (strcmp(a, "--no-journal") == 0) {
            cfg.do_journal = 0;
        } else {
            usage();
            return 2;
        }
    }
    if (!(cfg.sleep_ms >= 0) || cfg.journal_evals < 4 ||
        cfg.sync_evals < 2 || cfg.repeats < 1) {
        usage();
        return 2;
    }

    bosch_problem *p = bosch_problem_create(L_SHAPE, G_SHAPE, H_SHAPE);
    bosch_testbed *tb = bosch_testbed_create(L_SHAPE, G_SHAPE, 1);
    if (!p || !tb)
        return 1;
    must(bosch_problem_set_target_ratio(p, 0.75), "ratio", NULL);
    must(bosch_testbed_set(tb, "entanglement", 0.1), "testbed", NULL);

    printf("# bench_engine: concurrent evaluation, journal and resume\n\n");
    printf("libbosch %s, %ld online CPUs. Command:", bosch_version_string(),
           sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 0; i < argc; i++)
        printf(" %s", i == 0 ? "bench_engine" : argv[i]);
    printf("\n\n");
    if (cfg.do_threads) {
        printf("## (a) Concurrent evaluation\n\n");
        printf("Qwen3-1.7B shape (28 x 8 = 224 units, rho 0.75), testbed seed 1 with "
               "entanglement 0.1, search seed 1, batch size 8 (default), strategy auto. The "
               "evaluator is a single-candidate callback declared thread-safe "
               "(bosch_set_evaluator_thread_safe) that sleeps %g ms (nanosleep) and returns "
               "bosch_testbed_score. Wall = CLOCK_MONOTONIC around bosch_optimize, one run per "
               "thread count. Speed-up = wall(1 thread) / wall; efficiency = speed-up / threads. "
               "'in flight' = the most evaluator calls observed running at once. Batches = "
               "progress events whose evaluation count grew (one per completed batch); ideal "
               "wall = sum over batches of ceil(batch size / threads) x the delay, i.e. what "
               "perfect workers would take for the batches the search proposed. 'identical' = "
               "same best mask, best score, evaluation count and whole history (masks, scores, "
               "stages) as the 1-thread run.\n\n",
               cfg.sleep_ms);
        for (unsigned i = 0; i < cfg.nbudgets; i++)
            bench_threads(p, tb, cfg.thread_budgets[i]);
    }
    if (cfg.do_journal)
        bench_journal(p);
    if (bugs)
        printf("**%d contract violation(s) reported on stderr (BUG? lines).**\n", bugs);
    bosch_testbed_free(tb);
    bosch_problem_free(p);
    return bugs ? 1 : 0;
}
