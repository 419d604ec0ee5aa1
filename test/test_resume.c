/*
 * kill -9 test of the journal: a child process runs a threaded search with a
 * journal in AUTO mode; the parent SIGKILLs it after a random 20-200 ms and
 * starts it again, until one child finishes. The final result must equal an
 * uninterrupted run, and the masks evaluated twice overall (read from a log
 * the evaluator appends to) must number at most kills x threads: only the
 * evaluations in flight at a kill are redone (optimizer.h, docs/journal.md).
 *
 * All library work happens in forked children, so the test process itself
 * stays single-threaded (fork after threads is not supported by TSan).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support.h"
#include "support/journal_files.h"

#define RL 6
#define RG 8
#define RU (RL * RG)
#define BUDGET 300
#define THREADS 2
#define EVAL_US 2000
#define MAX_KILLS 25

typedef struct {
    bosch_testbed *tb;
    int logfd;
} child_ctx;

static int child_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    child_ctx *c = user;
    if (units != RU)
        return 77;
    sleep_us(EVAL_US);
    double s = NAN;
    if (bosch_testbed_score(c->tb, mask, &s) != BOSCH_OK)
        return 78;
    if (c->logfd >= 0) {
        char line[RU + 1];
        for (size_t u = 0; u < RU; u++)
            line[u] = mask[u] ? '1' : '0';
        line[RU] = '\n';
        if (write(c->logfd, line, sizeof line) != (ssize_t)sizeof line)
            return 79;
    }
    *score = s;
    return 0;
}

/* Runs the search; writes "status evaluations replayed score histhash mask"
 * to `resp` (atomically, by rename). Exit code 0 on success. Plain C: no
 * Check assertions in the child. */
static int child_main(const char *journal, const char *logp, const char *resp, int sync)
{
    child_ctx c = {NULL, -1};
    if (logp) {
        c.logfd = open(logp, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (c.logfd < 0)
            return 10;
    }
    c.tb = bosch_testbed_create(RL, RG, 17);
    if (!c.tb || bosch_testbed_set(c.tb, "entanglement", 0.3) != BOSCH_OK ||
        bosch_testbed_set(c.tb, "noise", 0.01) != BOSCH_OK)
        return 11;
    bosch_problem *p = bosch_problem_create(RL, RG, 1);
    if (!p || bosch_problem_set_target_units(p, RU / 2) != BOSCH_OK)
        return 12;
    bosch_optimizer *o = bosch_optimizer_create(p);
    bosch_problem_free(p);
    if (!o || bosch_set_seed(o, 5) || bosch_set_budget(o, BUDGET) ||
        bosch_set_threads(o, THREADS) || bosch_set_evaluator_thread_safe(o, 1) ||
        bosch_set_evaluator(o, child_eval, &c))
        return 13;
    if (journal && (bosch_set_journal(o, journal, BOSCH_JOURNAL_AUTO) ||
                    bosch_set_journal_sync(o, sync)))
        return 14;
    int st = bosch_optimize(o);
    if (st <= 0) {
        fprintf(stderr, "child: bosch_optimize: %s: %s\n", bosch_err_name(st),
                bosch_optimizer_last_error(o));
        return 15;
    }
    bosch_result *r = NULL;
    if (bosch_get_result(o, &r) != BOSCH_OK)
        return 16;
    uint64_t h = 1469598103934665603ULL;
    uint8_t m[RU];
    for (size_t i = 0; i < bosch_result_history_size(r); i++) {
        double s;
        int stage;
        if (bosch_result_history_entry(r, i, m, &s, &stage) != BOSCH_OK)
            return 17;
        uint64_t bits;
        memcpy(&bits, &s, 8);
        h = (h ^ mset_hash(m, RU)) * 1099511628211ULL;
        h = (h ^ bits) * 1099511628211ULL;
        h = (h ^ (uint64_t)stage) * 1099511628211ULL;
    }
    char ms[RU + 1];
    bosch_result_mask(r, m, RU);
    for (size_t u = 0; u < RU; u++)
        ms[u] = m[u] ? '1' : '0';
    ms[RU] = 0;
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", resp);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 18;
    fprintf(f, "%d %lu %lu %.17g %016llx %s\n", st,
            (unsigned long)bosch_result_evaluations(r, -1),
            (unsigned long)bosch_result_replayed(r), bosch_result_score(r), (unsigned long long)h,
            ms);
    if (fclose(f) != 0 || rename(tmp, resp) != 0)
        return 19;
    bosch_result_free(r);
    bosch_optimizer_free(o);
    bosch_testbed_free(c.tb);
    if (c.logfd >= 0)
        close(c.logfd);
    return 0;
}

typedef struct {
    int status;
    unsigned long evals, replayed;
    char score[64], hash[32], mask[RU + 1];
} rres;

static void read_result(const char *path, rres *r)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no result file %s", path);
    ck_assert_int_eq(fscanf(f, "%d %lu %lu %63s %31s %48s", &r->status, &r->evals, &r->replayed,
                            r->score, r->hash, r->mask),
                     6);
    fclose(f);
}

static int spawn(const char *journal, const char *logp, const char *resp, int sync)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(child_main(journal, logp, resp, sync));
    return (int)pid;
}

START_TEST(kill9_resume)
{
    char dir[64], refres[128], reflog[128];
    j_mkdtemp(dir);
    j_path(refres, sizeof refres, dir, "ref.txt");
    j_path(reflog, sizeof reflog, dir, "ref.log");

    /* The uninterrupted run, without a journal. */
    int ws;
    pid_t pid = spawn(NULL, reflog, refres, 0);
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "reference child failed (%d)", ws);
    rres ref;
    read_result(refres, &ref);
    ck_assert_int_gt(ref.status, 0);

    static const uint64_t seeds[] = {101, 202, 303, 404, 505};
    size_t total_kills = 0, total_dups = 0;
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        char journal[128], logp[128], resp[128];
        snprintf(journal, sizeof journal, "%s/j%zu.bin", dir, si);
        snprintf(logp, sizeof logp, "%s/eval%zu.log", dir, si);
        snprintf(resp, sizeof resp, "%s/res%zu.txt", dir, si);
        trng g = {seeds[si]};
        int sync = si == 0;
        size_t kills = 0;
        for (;;) {
            pid = spawn(journal, logp, resp, sync);
            if (kills < MAX_KILLS) {
                long us = 20000 + (long)trng_below(&g, 180001);
                if (si == 1 && kills < 3)
                    us = (long)trng_below(&g, 5000); /* early: header and first frames */
                sleep_us(us);
                kill(pid, SIGKILL);
            }
            ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
            if (WIFEXITED(ws)) {
                ck_assert_msg(WEXITSTATUS(ws) == 0,
                              "seed %zu: child exited with %d after %zu kills", si,
                              WEXITSTATUS(ws), kills);
                break;
            }
            ck_assert_msg(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL, "seed %zu: child status %d",
                          si, ws);
            kills++;
        }
        rres got;
        read_result(resp, &got);
        ck_assert_msg(got.status == ref.status, "seed %zu: status %d, uninterrupted %d", si,
                      got.status, ref.status);
        ck_assert_msg(got.evals == ref.evals, "seed %zu: %lu evaluations, uninterrupted %lu", si,
                      got.evals, ref.evals);
        ck_assert_msg(!strcmp(got.score, ref.score), "seed %zu: score %s, uninterrupted %s", si,
                      got.score, ref.score);
        ck_assert_msg(!strcmp(got.mask, ref.mask), "seed %zu: mask %s, uninterrupted %s", si,
                      got.mask, ref.mask);
        ck_assert_msg(!strcmp(got.hash, ref.hash), "seed %zu: history differs (hash %s vs %s)",
                      si, got.hash, ref.hash);
        ck_assert_uint_le(got.replayed, got.evals);

        /* The journal: valid to its end, one record per evaluation. */
        size_t size = 0;
        jframes fr = j_parse_file(journal, &size);
        ck_assert_msg(!fr.tail, "seed %zu: journal has garbage after %zu of %zu bytes", si,
                      fr.valid_end, size);
        ck_assert_msg(fr.n == got.evals + 1,
                      "seed %zu: journal has %zu records for %lu evaluations", si,
                      fr.n ? fr.n - 1 : 0, got.evals);
        j_frames_free(&fr);

        /* The evaluator log: masks evaluated twice. */
        size_t n = 0;
        uint8_t *log = j_slurp(logp, &n);
        ck_assert_ptr_nonnull(log);
        ck_assert_msg(n % (RU + 1) == 0, "seed %zu: log of %zu bytes has a torn line", si, n);
        mset seen;
        mset_init(&seen, RU);
        size_t dups = 0, lines = n / (RU + 1);
        uint8_t m[RU];
        for (size_t i = 0; i < lines; i++) {
            for (size_t u = 0; u < RU; u++)
                m[u] = log[i * (RU + 1) + u] == '1';
            double cnt = 0;
            if (mset_find(&seen, m, &cnt)) {
                dups++;
            } else {
                mset_add(&seen, m, 1);
            }
        }
        printf("kill -9 seed %zu: %zu kills, %zu evaluator calls, %zu masks evaluated twice "
               "(bound %zu), last child replayed %lu of %lu\n",
               si, kills, lines, dups, kills * THREADS, got.replayed, got.evals);
        fflush(stdout);
        ck_assert_msg(seen.count == got.evals, "seed %zu: %zu distinct masks evaluated, %lu in the "
                      "result", si, seen.count, got.evals);
        ck_assert_msg(dups <= kills * THREADS,
                      "seed %zu: %zu masks evaluated twice after %zu kills (at most %zu allowed: "
                      "only evaluations in flight may be redone)",
                      si, dups, kills, kills * THREADS);
        total_kills += kills;
        total_dups += dups;
        mset_free(&seen);
        free(log);
    }
    printf("kill -9 total: %zu kills, %zu repeated evaluations\n", total_kills, total_dups);
    ck_assert_uint_gt(total_kills, 0); /* the test exercised something */
    j_rmtree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resume");
    TCase *tc = tcase_new(s, "kill9");
    tcase_add_test(tc, kill9_resume);
    return run_suite(s);
}
