/* bosch search: BOSCH on a checkpoint of libbosch-torch's families (its evaluator),
 * interruptible and resumable; writes PREFIX.json, .tsv, .svg and
 * .history.jsonl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib_options.h"
#include "model_dir.h"
#include "options.h"
#include "output.h"
#ifdef BOSCH_CLI_TORCH
#include "backend.h"
#include "console.h"
#endif
#ifdef BOSCH_CLI_MPI
#include <bosch/mpi.h>

#include "mpi_job.h"
#else
typedef struct bosch_mpi_coordinator bosch_mpi_coordinator; /* never made */
#endif

#ifdef BOSCH_CLI_TORCH
/* --priors FILE: the unit_importance of a saved selection (a baseline's
 * PREFIX.json) as the search's priors; 0, or EXIT_ERROR after a message. */
static int load_priors(bosch_optimizer *opt, const bosch_problem *prob, const char *path)
{
    bosch_selection *sel = bosch_selection_read_json(path);
    if (!sel) {
        errorf("--priors %s: %s", path, bosch_create_error());
        return EXIT_ERROR;
    }
    int status = EXIT_ERROR;
    size_t units = bosch_problem_units(prob);
    double *imp = NULL;
    if (bosch_selection_layers(sel) != bosch_problem_layers(prob) ||
        bosch_selection_kv_groups(sel) != bosch_problem_kv_groups(prob)) {
        errorf("--priors %s: %u layers x %u KV groups, the model has %u x %u", path,
               bosch_selection_layers(sel), bosch_selection_kv_groups(sel),
               bosch_problem_layers(prob), bosch_problem_kv_groups(prob));
        goto out;
    }
    imp = malloc(units * sizeof *imp);
    if (!imp) {
        errorf("out of memory");
        goto out;
    }
    if (bosch_selection_importance(sel, imp, units) != BOSCH_OK) {
        errorf("--priors %s: it records no unit_importance (save one with bosch baseline "
               "--kind ablation|layer-probe|locality|retrieval|echo-induction|fisher|\n"
               "duo-on-the-fly)",
               path);
        goto out;
    }
    for (size_t u = 0; u < units; u++)
        if (imp[u] != imp[u]) {
            errorf("--priors %s: the importance of unit %zu (layer %zu, KV group %zu) is null", path,
                   u, u / bosch_problem_kv_groups(prob), u % bosch_problem_kv_groups(prob));
            goto out;
        }
    int rc = bosch_set_priors(opt, imp, units);
    status = rc ? opt_fail(rc, "--priors", opt) : 0;
out:
    free(imp);
    bosch_selection_free(sel);
    return status;
}

/* The search options: the command's seed, then the library options given
 * (lib_options.h); 0, or EXIT_ERROR after a message. */
static int configure(bosch_optimizer *opt, const struct settings *s)
{
    int rc = bosch_set_seed(opt, s->seed);
    if (rc)
        return opt_fail(rc, "--seed", opt);
    return lib_options_configure(opt, s);
}

static int stopped(int rc)
{
    return rc == BOSCH_FORCED_STOP || rc == BOSCH_TIME_REACHED;
}

/* Writes the outputs of a feasible result and prints the summary; 0, or
 * EXIT_ERROR after a message. */
static int report(const bosch_result *res, const bosch_problem *prob, const struct settings *s)
{
    bosch_selection *sel = bosch_selection_from_result(res, prob);
    if (!sel) {
        errorf("out of memory"); /* the shapes agree: nothing else can fail */
        return EXIT_ERROR;
    }
    int status = EXIT_ERROR;
    char *hp = NULL;
    if (record_run(sel, s, "bosch") || write_outputs(sel, s->out))
        goto out;
    hp = path_with(s->out, ".history.jsonl");
    if (!hp || bosch_result_write_history(res, hp)) {
        errorf("cannot write %s.history.jsonl: %s", s->out, strerror(errno));
        goto out;
    }
    print_picture(sel);
    print_scores(sel);
    uint64_t ev[BOSCH_STAGE_COUNT + 1], replayed = 0;
    for (int i = 0; i < BOSCH_STAGE_COUNT; i++)
        bosch_selection_evaluations(sel, i, &ev[i]);
    bosch_selection_evaluations(sel, -1, &ev[BOSCH_STAGE_COUNT]);
    bosch_selection_replayed(sel, &replayed);
    printf("evaluations %llu (anchors %llu, probe %llu, alloc %llu, group %llu; replayed %llu), "
           "status %s\nwrote %s.json, %s.tsv, %s.svg, %s.history.jsonl\n",
           (unsigned long long)ev[BOSCH_STAGE_COUNT], (unsigned long long)ev[0],
           (unsigned long long)ev[1], (unsigned long long)ev[2], (unsigned long long)ev[3],
           (unsigned long long)replayed, bosch_selection_status(sel), s->out, s->out, s->out,
           s->out);
    status = EXIT_OK;
out:
    free(hp);
    bosch_selection_free(sel);
    return status;
}

/* A search's progress: the console's display, and the evaluator's prefix
 * cache kept on the incumbent. */
struct search_progress {
    struct console_progress console;
    struct backend *b;
    bosch_mpi_coordinator *mpi; /* an MPI job's: the workers follow it too */
};

static void on_search_progress(const bosch_progress *p, void *user)
{
    struct search_progress *sp = user;
    if (backend_follow_incumbent(sp->b, p) && sp->mpi) {
#ifdef BOSCH_CLI_MPI
        bosch_mpi_coordinator_set_reference(sp->mpi, sp->b->reference,
                                            (size_t)sp->b->L * sp->b->G);
#endif
    }
    console_on_progress(p, &sp->console);
}

/* Message of the evaluator's last failure: the backend's, or in an MPI
 * job the failing rank's. */
static const char *evaluator_error(const struct backend *b, const bosch_mpi_coordinator *mpi)
{
#ifdef BOSCH_CLI_MPI
    if (mpi)
        return bosch_mpi_coordinator_last_error(mpi);
#endif
    (void)mpi;
    return backend_last_error(b);
}

/* Runs the search on the backend's evaluator, or over the ranks of an MPI
 * job (mpi, on rank 0); the exit code. */
static int search(bosch_optimizer *opt, const bosch_problem *prob, struct backend *b,
                  const struct settings *s, bosch_mpi_coordinator *mpi)
{
    bosch_result *res = NULL;
    int arc = backend_attach(opt, b);
#ifdef BOSCH_CLI_MPI
    if (!arc && mpi)
        arc = bosch_set_request_batch_evaluator(opt, bosch_mpi_request_batch_eval, mpi);
#endif
    if (arc)
        return opt_fail(arc, "evaluator", opt);
    struct search_progress pr = {.b = b, .mpi = mpi};
    console_progress_init(&pr.console);
    bosch_set_progress(opt, on_search_progress, &pr);
    fprintf(stderr, "model %s: %u layers x %u KV groups x %u heads/group, %s; task %s; window %u, sink %u; "
            "numerical noise %.2g\n",
            b->dir, b->L, b->G, b->H, backend_describe(b), s->task ? s->task : "niah",
            effective_window(s), s->sink, b->noise);
    const int search_rc = console_run(opt, &pr.console, EXIT_STOPPED);
    int rc, status = EXIT_ERROR;
    if (search_rc == INT32_MIN) {
        errorf("cannot start the search thread");
    } else if (bosch_is_error(search_rc)) {
        status = opt_fail(search_rc, "search", opt);
        if (search_rc == BOSCH_E_ANCHORS)
            backend_anchors_hint(b);
        /* a rank's failure comes back with its own status, and its message */
        if (search_rc == BOSCH_E_EVALUATOR || (mpi && *evaluator_error(b, mpi)))
            errorf("evaluator: %s", evaluator_error(b, mpi));
    } else if ((rc = bosch_get_result(opt, &res))) {
        status = opt_fail(rc, "result", opt);
    } else if (!bosch_result_feasible(res)) {
        errorf("the search stopped before any mask with the target ratio was evaluated; "
               "nothing written");
        status = stopped(search_rc) ? EXIT_STOPPED : EXIT_ERROR;
    } else if (search_rc == BOSCH_JOURNAL_FAILED) {
        /* The journal lost the rest of the run: say why first, then write
         * the best mask found (which may fail as well on a full disk). */
        errorf("%s", bosch_optimizer_last_error(opt));
        report(res, prob, s);
    } else if (!report(res, prob, s)) {
        status = EXIT_OK;
        if (stopped(search_rc) || stopped(bosch_result_status(res))) {
            if (lib_option_given(s, "journal"))
                fprintf(stderr, "stopped; rerun with --journal %s to resume\n",
                        lib_option_given(s, "journal"));
            status = EXIT_STOPPED;
        }
    }
    bosch_result_free(res);
    return status;
}

/* The search (rank 0 of an MPI job when in_job: it opens its model, then
 * the other ranks report theirs, then it hands out). */
static int run_search(struct settings *s, int in_job)
{
    struct backend b;
    int status = EXIT_ERROR;
    bosch_problem *prob = NULL;
    bosch_optimizer *opt = NULL;
    bosch_mpi_coordinator *mpi = NULL;
    memset(&b, 0, sizeof b);
    int opened = !backend_open(s, &b);
#ifdef BOSCH_CLI_MPI
    if (in_job && !(mpi = mpi_job_coordinator(&b, opened)))
        opened = 0;
    if (in_job && mpi)
        mpi_job_announce(s);
#endif
    (void)in_job;
    if (!opened)
        goto out;
    if (backend_check_choice(&b))
        goto out;
    if (!(prob = backend_problem(&b))) {
        errorf("out of memory");
        goto out;
    }
    int rc = bosch_problem_set_target_ratio(prob, s->ratio);
    if (rc) {
        status = opt_fail(rc, "ratio", NULL);
        goto out;
    }
    if (!(opt = bosch_optimizer_create(prob))) {
        errorf("out of memory");
        goto out;
    }
    if (!configure(opt, s) && (!s->priors || !load_priors(opt, prob, s->priors)))
        status = search(opt, prob, &b, s, mpi);
out:
#ifdef BOSCH_CLI_MPI
    bosch_mpi_coordinator_free(mpi); /* the other ranks return */
#endif
    bosch_optimizer_free(opt);
    bosch_problem_free(prob);
    backend_free(&b);
    return status;
}
#endif

int cmd_search(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_command(CMD_SEARCH, argc, argv, &s, NULL);
    if (rc)
        return rc;
#ifndef BOSCH_CLI_TORCH
    return no_backend(argv[0]);
#else
#ifdef BOSCH_CLI_MPI
    if (mpi_job_launched()) {
        /* One rank of several (mpirun, srun): rank 0 searches, every rank
         * evaluates. A rank whose setup fails still joins the handshake,
         * which then refuses the job naming it. */
        struct mpi_job job;
        if (mpi_job_start(&job, &s))
            return EXIT_ERROR;
        const int gathered = !mpi_job_gather_devices(&job, &s);
        if (job.rank)
            rc = mpi_job_serve(&job, &s);
        else if (!gathered || model_setup(&s, 0) || check_output_prefix(s.out)) {
            /* the handshake still runs: the other ranks wait on it */
            bosch_mpi_coordinator_free(mpi_job_coordinator(&(struct backend){0}, 0));
            rc = EXIT_ERROR;
        } else
            rc = run_search(&s, 1);
        mpi_job_end(&job);
        return rc;
    }
#endif
    if (model_setup(&s, 0) || check_output_prefix(s.out))
        return EXIT_ERROR;
    return run_search(&s, 0);
#endif
}
