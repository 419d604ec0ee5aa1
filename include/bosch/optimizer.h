/*
 * libbosch optimizer: the BOSCH search (layer probes, adaptive ratios,
 * grouped head search) driven by host callbacks or by ask/tell.
 * Include <bosch/bosch.h> rather than this file.
 */
#ifndef BOSCH_OPTIMIZER_H
#define BOSCH_OPTIMIZER_H

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bosch_optimizer, bosch_result, bosch_progress, bosch_strategy: opaque
 * types declared in <bosch/bosch.h>. */

/* Stages, as reported in progress events, history records and result counts. */
enum bosch_stage {
    BOSCH_STAGE_ANCHORS = 0, /* the two reference models S_full and S_allSWA */
    BOSCH_STAGE_PROBE = 1,   /* stage 1: layer-importance cascade */
    BOSCH_STAGE_ALLOC = 2,   /* stage 2: adaptive ratios (evaluates the allocated start mask) */
    BOSCH_STAGE_GROUP = 3,   /* stage 3: grouped head-level search */
    BOSCH_STAGE_COUNT = 4
};
/* "anchors", "probe", "alloc", "group"; "unknown" otherwise. */
BOSCH_API const char *bosch_stage_name(int stage);

/* Which parts of the method run (the paper's ablations). */
enum bosch_variant {
    BOSCH_VARIANT_FULL = 0,        /* stages 1, 2 and 3 (default) */
    BOSCH_VARIANT_PROBE_ONLY = 1,  /* stage 1 only, at a uniform per-layer ratio */
    BOSCH_VARIANT_GROUP_ONLY = 2,  /* stage 3 only: uniform ratios, a random start mask
                                      (evaluated once, counted as stage ALLOC) */
    BOSCH_VARIANT_LAYER_LEVEL = 3  /* search which ceil(T/G) whole layers become SWA; each
                                      candidate is repaired to exactly T units (the surplus
                                      leaves the lowest-indexed units first) */
};
/* "full", "probe-only", "group-only", "layer-level"; NULL otherwise. */
BOSCH_API const char *bosch_variant_name(int variant);

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */
/* ------------------------------------------------------------------------ */
/* Creates an optimizer for a copy of `problem` (the caller keeps ownership of
 * `problem` and may free it at once). Returns NULL when `problem` is NULL or
 * memory runs out (bosch_create_error() says which). Infeasible constraints
 * are reported by the first bosch_ask()/bosch_optimize(). */
BOSCH_API bosch_optimizer *bosch_optimizer_create(const bosch_problem *problem);
/* Frees the optimizer and everything it owns; NULL is a no-op. No callback
 * runs after it returns. */
BOSCH_API void bosch_optimizer_free(bosch_optimizer *opt);

/* Message describing the last error on this handle ("" if none). Owned by
 * the handle; valid until the next call on the handle. */
BOSCH_API const char *bosch_optimizer_last_error(const bosch_optimizer *opt);

/* Pre-1.0 names, kept until 1.0. */
BOSCH_API BOSCH_DEPRECATED("bosch_optimizer_create") bosch_optimizer *bosch_create(
    const bosch_problem *problem);
BOSCH_API BOSCH_DEPRECATED("bosch_optimizer_free") void bosch_destroy(bosch_optimizer *opt);
BOSCH_API BOSCH_DEPRECATED("bosch_optimizer_last_error") const char *bosch_last_error(
    const bosch_optimizer *opt);

/* ------------------------------------------------------------------------ */
/* Options. Setters return BOSCH_OK, BOSCH_E_INVALID (bad value) or         */
/* BOSCH_E_STATE (the search has already started); see bosch_set_anchors.   */
/* ------------------------------------------------------------------------ */
/* Seed of every random choice (default 0). Same seed + same inputs + same
 * options = same result, whatever the thread count. */
BOSCH_API int bosch_set_seed(bosch_optimizer *opt, uint64_t seed);
/* Total number of evaluations, anchors included (default 1000, minimum 1).
 * A run needs enough to end with a feasible mask: 2 for the anchors (unless
 * given by bosch_set_anchors) plus, for the full and probe-only variants, one
 * per layer with a free unit (stage 1's cascade meets the target only after
 * its last layer), or 1 for group-only and layer-level. A smaller budget is
 * refused by the first bosch_ask()/bosch_optimize() with BOSCH_E_INVALID
 * before any evaluation (the message names the minimum). A run that ends
 * with budget left returns BOSCH_CONVERGED and logs the evaluations used. */
BOSCH_API int bosch_set_budget(bosch_optimizer *opt, uint64_t evaluations);
/* Evaluations for stage 1 or stage 3 (BOSCH_STAGE_PROBE / BOSCH_STAGE_GROUP);
 * 0 (default) = derived from the total: the probe gets `probe_fraction`
 * (default 0.2) of what is left after the anchors and stage 2's (at most 3)
 * start masks, the grouped search the rest. Budget a stage does not use (a small
 * subproblem enumerated completely) rolls over to the next subproblems. */
BOSCH_API int bosch_set_stage_budget(bosch_optimizer *opt, int stage, uint64_t evaluations);
BOSCH_API int bosch_set_probe_fraction(bosch_optimizer *opt, double fraction);
/* Share of stage 3's budget (default 0.8, in [0, 1]; 0 = the paper's stage 3
 * only) spent last on a "polish": one subproblem over all free units whose
 * swaps may cross layers (so per-layer ratios can still change), within the
 * layer bounds, starting from the committed mask. Its evaluations count as
 * stage 3. Not used by the probe-only and layer-level variants. */
BOSCH_API int bosch_set_polish_fraction(bosch_optimizer *opt, double fraction);
/* Wall-clock limit in seconds, checked between batches (0 = none, default).
 * A run cut by time is not reproducible, by nature. */
BOSCH_API int bosch_set_time_limit(bosch_optimizer *opt, double seconds);
/* Penalty weight alpha of the objective
 *   L(z) = S^(z) - alpha * (ratio(z) - rho)^2   (maximised; default 1.0, >= 0). */
BOSCH_API int bosch_set_alpha(bosch_optimizer *opt, double alpha);
/* Largest number of free units searched jointly in stage 3 (default 48, >= 1);
 * larger ratio groups are split into chunks of whole layers. */
BOSCH_API int bosch_set_group_cap(bosch_optimizer *opt, uint32_t units);
/* Most candidates a strategy proposes at once, i.e. the size of an ask batch
 * (default 4, 1..4096). Part of the algorithm: changing it changes results.
 * Smaller batches let the search move after fewer evaluations (better
 * quality per evaluation, docs/benchmarks-history.md); larger ones give a host more
 * candidates to evaluate in parallel. */
BOSCH_API int bosch_set_batch_size(bosch_optimizer *opt, uint32_t candidates);
/* Largest move of layer ratios away from rho according to their probe drop
 * (default 0.5, in [0, 1]; 0 = uniform ratios). Stage 2 evaluates start
 * masks for spreads 0, spread/2 and spread and keeps the best. */
BOSCH_API int bosch_set_ratio_spread(bosch_optimizer *opt, double spread);
BOSCH_API int bosch_set_variant(bosch_optimizer *opt, int variant /* enum bosch_variant */);
/* Search strategy for stage 1 (BOSCH_STAGE_PROBE), stage 3
 * (BOSCH_STAGE_GROUP), or both (-1). The optimizer keeps its own copy of the
 * descriptor; the caller may free `s` afterwards. NULL restores the default
 * ("auto": exhaustive when the subproblem fits its budget, else the
 * benchmarked default strategy). */
BOSCH_API int bosch_set_strategy(bosch_optimizer *opt, int stage, const bosch_strategy *s);
/* When the anchors are not ordered (S_full <= S_allSWA, the task does not
 * tell full from SWA attention), search the raw scores instead of stopping
 * with BOSCH_E_ANCHORS (default 0). At the fixed SWA count the search does
 * not need normalisation: the objective becomes S(z) - alpha*(ratio-rho)^2
 * with raw S, the result's and history's normalised scores and
 * bosch_progress_best_score are NaN, and a BOSCH_LOG_WARN line says so.
 * Ordered anchors are normalised as always. Option "raw_scores". */
BOSCH_API int bosch_set_raw_scores(bosch_optimizer *opt, int raw);
/* The anchors count as ordered only when S_full - S_allSWA > tolerance
 * (default 0: any gap). Set it to the evaluator's numerical noise (for
 * libbosch-torch, bosch_torch_evaluator_noise), so that anchors that differ
 * by rounding error alone end the search with BOSCH_E_ANCHORS (or raw
 * scores, with raw_scores) instead of normalising every score by that
 * noise. Finite, >= 0: else BOSCH_E_INVALID. Applies to evaluated anchors
 * and to bosch_set_anchors (set it before). Option "anchor_tolerance". */
BOSCH_API int bosch_set_anchor_tolerance(bosch_optimizer *opt, double tolerance);
/* Honest scores under noise: after the search, the best mask is evaluated
 * again `draws` times (draw 1..draws, at full fidelity; default 0 = off),
 * and the result reports the mean of those fresh draws rather than the
 * search's own score of the mask, which is the luckiest of many noisy draws
 * and so overstates it. With confirm_top = m > 1 the draws are spread over
 * the m best distinct feasible masks and the one with the best mean of its
 * fresh draws is reported (its mean is then chosen among m means: slightly
 * optimistic, by far less than the search's maximum). The draws come out of
 * the budget (the minimum budget grows by `draws`) and are stage 3
 * evaluations with draw >= 1. An evaluator that is deterministic should
 * read the draw (bosch_set_request_evaluator, bosch_candidate_request) and
 * score it on other samples, or leave confirm off. Options "confirm" and
 * "confirm_top" (default 1, >= 1). */
BOSCH_API int bosch_set_confirm(bosch_optimizer *opt, uint32_t draws);
BOSCH_API int bosch_set_confirm_top(bosch_optimizer *opt, uint32_t masks);
/* Multi-fidelity screening (default 1.0 = off; in (0, 1]): every new
 * candidate of stage 3 is first scored at this fidelity (e.g. 0.25 = a
 * quarter of the calibration samples) and confirmed at full fidelity only
 * when its screened objective comes within a margin of the subproblem's
 * best (the margin is learnt from the pairs of screened and full scores
 * seen so far). Stages 1-2, the anchors and confirmation draws are always
 * scored at full fidelity, and only full-fidelity scores can become the
 * result. The budget is counted in full-evaluation equivalents: a
 * candidate at fidelity f costs f. Needs an evaluator that reads the
 * fidelity: bosch_set_request_evaluator / bosch_set_request_batch_evaluator,
 * or ask/tell with bosch_candidate_request (a plain evaluator is refused by
 * bosch_optimize with BOSCH_E_INVALID). Option "screen_fidelity". */
BOSCH_API int bosch_set_screen_fidelity(bosch_optimizer *opt, double fidelity);
/* The flip sweep at the end of stage 3 (full and group-only variants).
 * When the budget left reaches (free units) + 2 `pairs`, and if the test
 * fails there, once more at (free units) + `pairs` (under screening only
 * the second), the polish's recent
 * candidates are tested: if they land close below the best (the median,
 * over the last quarter of the evaluations, the polish's own and at least
 * 32 of them, of (best - S^) / (best - S^ of all SWA) is below `gap`: the
 * search is refining small effects that add up), the polish ends and the
 * rest of the budget measures them: each free unit flipped alone on the
 * best mask (infeasible masks, one unit off the target; never a result),
 * then swaps of the unit gaining most when made full with the one losing
 * least when made SWA, one at a time, kept when they gain (at most
 * `pairs`), then substitute probes (rounds of at most `pairs` infeasible
 * masks around the best mask with its units of outsized loss made SWA)
 * and the swaps they predict, one at a time, kept when they gain
 * (docs/method.md). Budget they leave goes back to the polish. Where the
 * polish still climbs, nothing changes. Options "sweep_pairs" (default 40,
 * 0 = off) and "sweep_gap" (default 0.005, in [0, 1]). */
BOSCH_API int bosch_set_sweep_pairs(bosch_optimizer *opt, uint32_t pairs);
BOSCH_API int bosch_set_sweep_gap(bosch_optimizer *opt, double gap);
/* The stopping rule (default 0 = off; in [0, 1]): while stage 3's polish
 * runs (full and group-only variants), before each batch, the search looks
 * at the last W evaluations of stage 3 (W = the larger of 24 and a third of
 * stage 3's evaluations so far, in full-evaluation equivalents; the polish
 * must have made 24 of its own): if the best normalised score S^ rose by g
 * over them, the rest of the budget at that rate would raise it by
 * g * (budget left) / W. When that is below `tolerance`, the search ends
 * with BOSCH_PLATEAU (after the confirmation draws, when set), the result
 * holds the best mask found, and the log says the gain, the projection and
 * the evaluations left. A search whose best still climbs by more than the
 * tolerance per remaining budget is never stopped; under noise the best of
 * noisy scores keeps creeping up, so a noisy search stops later, never
 * earlier. Set it in S^ units (1 = the gap between all full and all SWA),
 * no smaller than the evaluator's noise over that gap. It enters the
 * journal header (a resume with another value is BOSCH_E_MISMATCH).
 * Option "stop_tolerance". */
BOSCH_API int bosch_set_stop_tolerance(bosch_optimizer *opt, double tolerance);
/* Per-unit priors the host already has, such as FISHER or single-unit
 * ablation scores: importance[u] for each of the problem's units
 * (bosch_problem_units), higher = more harm when unit u becomes SWA. They
 * guide the search and never decide it: the default strategy ("model")
 * first evaluates the priors' static mask in each subproblem it searches
 * (the variables of lowest prior set to SWA) and adds the priors as one
 * feature of its surrogate, whose weight it learns from the evaluations, so
 * a misleading prior costs about one evaluation per subproblem. Other
 * strategies may read them (bosch_subproblem_prior). Copied; NULL clears.
 * BOSCH_E_INVALID when n_units is not the problem's unit count,
 * BOSCH_E_BAD_SCORE when a value is not finite, BOSCH_E_STATE once the
 * search has started. A hash of the priors enters the journal header: a
 * resume with other priors is BOSCH_E_MISMATCH. */
BOSCH_API int bosch_set_priors(bosch_optimizer *opt, const double *importance, size_t n_units);
/* The priors set (0 = none): returns their count and writes up to n of
 * them to out (NULL = count only). */
BOSCH_API size_t bosch_get_priors(const bosch_optimizer *opt, double *out, size_t n);
/* Supply the two anchor scores instead of having them evaluated (saves two
 * evaluations). BOSCH_E_BAD_SCORE unless both are finite, BOSCH_E_ANCHORS
 * unless s_full - s_allswa > anchor_tolerance (accepted when raw_scores is
 * set before). */
BOSCH_API int bosch_set_anchors(bosch_optimizer *opt, double s_full, double s_allswa);

/* String interface for bindings and config files. Every option comes from
 * one table inside the library; enumerate it with bosch_option_count() and
 * bosch_option_name(). Names and values:
 *   seed (uint64), budget (uint64), probe_budget, group_budget (uint64),
 *   probe_fraction (0..1), polish_fraction (0..1), time_limit (seconds),
 *   alpha, group_cap,
 *   batch_size, ratio_spread, threads, journal (a path, mode AUTO),
 *   journal_sync (0|1),
 *   raw_scores (0|1), anchor_tolerance (>= 0), confirm, confirm_top (uint), screen_fidelity (0..1],
 *   sweep_pairs (uint), sweep_gap [0..1], stop_tolerance [0..1], variant (full|probe-only|group-only|layer-level),
 *   strategy, probe_strategy, group_strategy (a built-in strategy name).
 * BOSCH_E_OPTION for unknown names or unparsable values, BOSCH_E_INVALID for
 * values out of range, BOSCH_E_STATE once the search has started. */
BOSCH_API int bosch_set_option(bosch_optimizer *opt, const char *name, const char *value);
/* Current value of an option as text (NUL-terminated, truncated to `len`).
 * Returns the full length needed (excluding NUL) or a negative error
 * (BOSCH_E_OPTION for an unknown name; the handle is not written). */
BOSCH_API int bosch_get_option(const bosch_optimizer *opt, const char *name, char *buf,
                               size_t len);

/* Typed access by name: _uint for BOSCH_OPTION_UINT and BOSCH_OPTION_BOOL
 * options, _double for BOSCH_OPTION_DOUBLE ones (BOSCH_E_OPTION for an
 * unknown name or another type). The getters do not write the handle. */
BOSCH_API int bosch_set_option_uint(bosch_optimizer *opt, const char *name, uint64_t value);
BOSCH_API int bosch_set_option_double(bosch_optimizer *opt, const char *name, double value);
BOSCH_API int bosch_get_option_uint(const bosch_optimizer *opt, const char *name,
                                    uint64_t *value);
BOSCH_API int bosch_get_option_double(const bosch_optimizer *opt, const char *name,
                                      double *value);

/* The option table, for bindings and --help (static data, any thread). */
enum bosch_option_type {
    BOSCH_OPTION_UINT = 0,     /* unsigned integer (bounds from bosch_option_range) */
    BOSCH_OPTION_DOUBLE = 1,   /* finite number (bounds from bosch_option_range) */
    BOSCH_OPTION_BOOL = 2,     /* 0 or 1 */
    BOSCH_OPTION_CHOICE = 3,   /* one of bosch_option_choices() */
    BOSCH_OPTION_STRATEGY = 4, /* a built-in strategy name (bosch_strategy_builtin_name) */
    BOSCH_OPTION_PATH = 5      /* a file path ("" = none) */
};
BOSCH_API size_t bosch_option_count(void);
/* Name of option i in table order; NULL past the end. */
BOSCH_API const char *bosch_option_name(size_t i);
/* enum bosch_option_type, or BOSCH_E_OPTION for an unknown name. */
BOSCH_API int bosch_option_type(const char *name);
/* One-line description; NULL for an unknown name. */
BOSCH_API const char *bosch_option_doc(const char *name);
/* Default value in the table's spelling ("0.5", "auto"); NULL for an unknown name. */
BOSCH_API const char *bosch_option_default(const char *name);
/* Inclusive bounds of a numeric or boolean option (either pointer may be
 * NULL; an unbounded maximum is +inf, or 2^64 for uint64 options);
 * BOSCH_E_INVALID for other types. */
BOSCH_API int bosch_option_range(const char *name, double *min, double *max);
/* "a|b|c" for CHOICE and BOOL options, NULL otherwise. */
BOSCH_API const char *bosch_option_choices(const char *name);

/* ------------------------------------------------------------------------ */
/* Logging and progress (never required; the library never prints)          */
/* ------------------------------------------------------------------------ */
enum bosch_log_level {
    BOSCH_LOG_DEBUG = 0,
    BOSCH_LOG_INFO = 1,
    BOSCH_LOG_WARN = 2,
    BOSCH_LOG_ERROR = 3
};
/* `msg` is valid only during the call. */
typedef void (*bosch_log_fn)(int level, const char *msg, void *user);
/* Messages below `min_level` are not formatted at all. fn NULL = no logging. */
BOSCH_API int bosch_set_log(bosch_optimizer *opt, bosch_log_fn fn, void *user, int min_level);

/* Called after every completed batch and at every stage change. The
 * progress object is valid only during the call; read it with the
 * accessors below. The callback may call bosch_force_stop(). */
typedef void (*bosch_progress_fn)(const bosch_progress *p, void *user);
BOSCH_API int bosch_set_progress(bosch_optimizer *opt, bosch_progress_fn fn, void *user);

BOSCH_API int bosch_progress_stage(const bosch_progress *p);
BOSCH_API uint64_t bosch_progress_evaluations(const bosch_progress *p);
BOSCH_API uint64_t bosch_progress_budget(const bosch_progress *p);
/* Best normalised score S^ of a feasible mask so far (NaN if none yet). */
BOSCH_API double bosch_progress_best_score(const bosch_progress *p);
BOSCH_API uint32_t bosch_progress_layers(const bosch_progress *p);
/* Per-layer SWA ratios of the current working mask; `out` has `n` entries. */
BOSCH_API int bosch_progress_layer_ratios(const bosch_progress *p, double *out, size_t n);
/* The current working mask, the one the next candidates are drawn around
 * (1 = SWA), into `out` of `units` bytes (layers x kv_groups). An evaluator
 * that keeps state per mask prefix follows it: libbosch-torch's prefix
 * cache (bosch_torch_evaluator_set_reference), so that the candidates skip
 * the layers below their first change. BOSCH_E_INVALID for NULL or another
 * unit count; BOSCH_E_STATE before the search has a working mask. */
BOSCH_API int bosch_progress_working_mask(const bosch_progress *p, uint8_t *out, size_t units);
/* The best feasible mask so far, the one bosch_progress_best_score scores
 * (the incumbent), into `out` of `units` bytes. Most candidates of a
 * default search are its neighbours: on 36x8 testbed searches their first
 * layer differing from it lies deeper (13.2 of 36 on average) than from
 * the working mask (6.5), so it is the better reference for a prefix
 * cache. BOSCH_E_INVALID for NULL or another unit count; BOSCH_E_STATE
 * before any feasible mask was scored. */
BOSCH_API int bosch_progress_best_mask(const bosch_progress *p, uint8_t *out, size_t units);
BOSCH_API double bosch_progress_elapsed(const bosch_progress *p); /* seconds */
/* Evaluations per second of this process (journal replays excluded); NaN
 * before the first evaluation. */
BOSCH_API double bosch_progress_rate(const bosch_progress *p);
/* Estimated seconds until the budget is spent at the current rate (the run
 * may finish earlier when stages complete); NaN when unknown. */
BOSCH_API double bosch_progress_eta(const bosch_progress *p);
/* Evaluations answered from a resumed journal so far. */
BOSCH_API uint64_t bosch_progress_replayed(const bosch_progress *p);

/* ------------------------------------------------------------------------ */
/* Evaluation, way 1: callbacks                                              */
/* ------------------------------------------------------------------------ */
/* Scores are "higher is better" (e.g. NIAH accuracy). Return 0 on success
 * after writing a finite score; any non-zero return is an evaluator failure:
 * the run stops, keeps the best so far, bosch_optimize() returns
 * BOSCH_E_EVALUATOR and bosch_evaluator_status() gives the value returned.
 * A NaN/inf score stops the run with BOSCH_E_BAD_SCORE. `mask` (units bytes)
 * is valid during the call only. */
typedef int (*bosch_eval_fn)(const uint8_t *mask, size_t units, double *score, void *user);
/* Batch form: `masks` holds n masks of `units` bytes back to back; write
 * scores[0..n-1]. */
typedef int (*bosch_batch_eval_fn)(const uint8_t *masks, size_t n, size_t units, double *scores,
                                   void *user);
/* Setting one kind of evaluator replaces the others. */
BOSCH_API int bosch_set_evaluator(bosch_optimizer *opt, bosch_eval_fn fn, void *user);
BOSCH_API int bosch_set_batch_evaluator(bosch_optimizer *opt, bosch_batch_eval_fn fn, void *user);
/* Evaluators that read the request: `fidelity` in (0, 1] is the share of the
 * host's calibration samples to score on (1 = all; below 1 only with
 * screen_fidelity), `draw` is 0 for a mask's first evaluation and 1, 2, ...
 * for the confirmation draws (bosch_set_confirm), which should be scored
 * independently of draw 0 (e.g. on other samples). A mask is never sent
 * twice with the same fidelity and draw. In the batch form fidelity[i] and
 * draws[i] belong to mask i. */
typedef int (*bosch_request_eval_fn)(const uint8_t *mask, size_t units, double fidelity,
                                     uint32_t draw, double *score, void *user);
typedef int (*bosch_request_batch_eval_fn)(const uint8_t *masks, const double *fidelity,
                                           const uint32_t *draws, size_t n, size_t units,
                                           double *scores, void *user);
BOSCH_API int bosch_set_request_evaluator(bosch_optimizer *opt, bosch_request_eval_fn fn,
                                          void *user);
BOSCH_API int bosch_set_request_batch_evaluator(bosch_optimizer *opt,
                                                bosch_request_batch_eval_fn fn, void *user);

/* Runs the whole search with the evaluator set above (built on ask/tell).
 * Returns a positive enum bosch_stop, or a negative error; in every case the
 * best mask found so far stays available through bosch_get_result(). */
BOSCH_API int bosch_optimize(bosch_optimizer *opt);

/* Asks the search to stop as soon as possible (after the evaluation or batch
 * in progress). Safe from any thread and from inside callbacks. */
BOSCH_API void bosch_force_stop(bosch_optimizer *opt);

/* Concurrent evaluation (callback mode). Up to `threads` candidates of a
 * batch are evaluated at once on worker threads (default 1, 1..256). The
 * single-candidate evaluator is called concurrently only when declared
 * thread-safe below; otherwise calls are serialised. The batch evaluator
 * always receives the whole batch in one call (one big batch suits a GPU).
 * Results never depend on `threads`: a batch is observed in proposal order
 * once all its scores are known. May be set before the search starts. */
BOSCH_API int bosch_set_threads(bosch_optimizer *opt, uint32_t threads);
/* Declares whether the single-candidate evaluator may run on several
 * threads at once (default 0 = no). */
BOSCH_API int bosch_set_evaluator_thread_safe(bosch_optimizer *opt, int thread_safe);

/* ------------------------------------------------------------------------ */
/* Journal: crash-safe record of every evaluation, exact resume              */
/* ------------------------------------------------------------------------ */
enum bosch_journal_mode {
    BOSCH_JOURNAL_CREATE = 0, /* start a new journal (an existing file is replaced) */
    BOSCH_JOURNAL_RESUME = 1, /* the file must exist: replay it, then append */
    BOSCH_JOURNAL_AUTO = 2    /* resume when the file exists, else create */
};
/* Journals every finished evaluation (mask, score, stage, wall time) to
 * `path`, a sequence of checksummed zstd frames, each written with one
 * write() as soon as the evaluation is told; the first frame records the
 * library version, problem and every option that affects the result.
 * Resuming replays journaled scores instead of calling the evaluator (or,
 * in ask/tell mode, instead of handing those candidates out), so a resumed
 * run ends with the same result, history and evaluation count as an
 * uninterrupted one. The journal is opened and checked by the first
 * bosch_ask()/bosch_optimize(), which then fail with:
 *   BOSCH_E_MISMATCH  other version, shape, constraints or options (the
 *                     message names each field that differs; time_limit
 *                     and threads may differ);
 *   BOSCH_E_CORRUPT   a damaged frame (bit flips, bad checksum or zstd
 *                     data, anywhere), or not a journal;
 *   BOSCH_E_BUSY      another run holds the journal (it is locked, with
 *                     flock, from the start of a run to its end);
 *   BOSCH_E_IO        the file cannot be read or written (the message
 *                     gives the system's reason).
 * An append that fails during the run (a full disk) ends it cleanly with
 * the stop reason BOSCH_JOURNAL_FAILED: the result holds the best mask of
 * the evaluations done, bosch_optimizer_last_error() says why.
 * A last frame cut short (a write interrupted by a crash) is dropped and the
 * file truncated to its valid prefix; its evaluation is redone.
 * An evaluation in flight when the process dies is redone too. `path` is
 * copied; NULL disables journaling. */
BOSCH_API int bosch_set_journal(bosch_optimizer *opt, const char *path, int mode);
/* When non-zero, fdatasync() after every journal write (survives power
 * loss, not only a killed process; slower). Default 0. */
BOSCH_API int bosch_set_journal_sync(bosch_optimizer *opt, int sync);
/* What identifies the run beyond the optimizer's own settings: the model,
 * the task, the evaluator's parameters (metric, window, dtype...), as the
 * host knows them. Each key enters the journal header as
 * "identity.<key>", so a resume whose identity differs in any key (or
 * lacks one, or adds one) is BOSCH_E_MISMATCH naming the key and both
 * values. key: 1..64 characters of [A-Za-z0-9_.-]; value: a
 * NUL-terminated string of at most 4096 bytes, copied; NULL removes the
 * key. BOSCH_E_INVALID for a bad key or value, BOSCH_E_STATE once the run
 * has started. The torch backend sets its own keys with
 * bosch_torch_evaluator_identify(). */
BOSCH_API int bosch_set_run_identity(bosch_optimizer *opt, const char *key, const char *value);
/* The value of `key` (NULL when unset); valid until that key is set again
 * or the optimizer is freed. */
BOSCH_API const char *bosch_get_run_identity(const bosch_optimizer *opt, const char *key);

/* The non-zero value the host evaluator returned (0 if it never failed). */
BOSCH_API int bosch_evaluator_status(const bosch_optimizer *opt);

/* ------------------------------------------------------------------------ */
/* Evaluation, way 2: ask/tell                                               */
/* ------------------------------------------------------------------------ */
/* Prepares the next batch of candidates and stores its size in *n.
 * Candidates answered from a resumed journal are not handed out: *n counts
 * only those that need scores, indexed 0..n-1.
 * Returns BOSCH_OK with *n > 0 when candidates wait for scores; a positive
 * enum bosch_stop with *n == 0 when the search has ended; a negative error
 * otherwise (the search then ends too, keeping the best so far). Calling ask
 * again before every candidate of the batch has been told returns the same
 * batch. */
BOSCH_API int bosch_ask(bosch_optimizer *opt, size_t *n);
/* Copies candidate i (0 <= i < n) of the pending batch into `mask` (units bytes). */
BOSCH_API int bosch_candidate(bosch_optimizer *opt, size_t i, uint8_t *mask);
/* The request of candidate i: the fidelity to score it at and its draw
 * (see bosch_request_eval_fn; 1.0 and 0 unless screen_fidelity or confirm
 * are set). Either pointer may be NULL. */
BOSCH_API int bosch_candidate_request(bosch_optimizer *opt, size_t i, double *fidelity,
                                      uint32_t *draw);
/* Stage of the pending batch (enum bosch_stage) or a negative error. */
BOSCH_API int bosch_candidate_stage(bosch_optimizer *opt);
/* Gives the score of candidate i, in any order. A non-finite score is
 * refused with BOSCH_E_BAD_SCORE and the candidate stays pending (tell it
 * again, or report a failure). Telling a candidate twice is BOSCH_E_STATE. */
BOSCH_API int bosch_tell(bosch_optimizer *opt, size_t i, double score);
/* Reports that candidate i could not be evaluated: the search stops, this
 * call and every later bosch_ask() return BOSCH_E_EVALUATOR, and
 * `host_status` is kept (bosch_evaluator_status). */
BOSCH_API int bosch_tell_failure(bosch_optimizer *opt, size_t i, int host_status);

/* ------------------------------------------------------------------------ */
/* Result                                                                    */
/* ------------------------------------------------------------------------ */
/* Snapshot of the best mask and the run's statistics; may be taken at any
 * time (also mid-run or after an error). The caller owns *out and frees it
 * with bosch_result_free(). */
BOSCH_API int bosch_get_result(const bosch_optimizer *opt, bosch_result **out);
BOSCH_API void bosch_result_free(bosch_result *r);

/* Status of the run when the snapshot was taken: BOSCH_OK while running,
 * else the positive stop reason or the negative error that ended it. */
BOSCH_API int bosch_result_status(const bosch_result *r);
/* Non-zero when a feasible mask (exact target count, fixed units, bounds)
 * has been evaluated; the mask accessors below then describe the best one.
 * Otherwise they describe the best mask evaluated of any kind (or all-full
 * when nothing has been evaluated) and the scores are NaN. */
BOSCH_API int bosch_result_feasible(const bosch_result *r);
BOSCH_API size_t bosch_result_units(const bosch_result *r);
BOSCH_API uint32_t bosch_result_layers(const bosch_result *r);
BOSCH_API int bosch_result_mask(const bosch_result *r, uint8_t *out, size_t units);
BOSCH_API int bosch_result_head_mask(const bosch_result *r, uint8_t *out, size_t query_heads);
/* raw S(z): with confirm, the mean of the mask's confirmation draws */
BOSCH_API double bosch_result_score(const bosch_result *r);
BOSCH_API double bosch_result_normalized_score(const bosch_result *r); /* S^(z) */
BOSCH_API double bosch_result_objective(const bosch_result *r);        /* S^ - alpha*(ratio-rho)^2 */
BOSCH_API double bosch_result_anchor(const bosch_result *r, int swa); /* S_full (0) / S_allSWA (1) */
BOSCH_API double bosch_result_ratio(const bosch_result *r);
BOSCH_API int bosch_result_layer_ratios(const bosch_result *r, double *out, size_t layers);
BOSCH_API double bosch_result_kv_saving(const bosch_result *r, uint64_t context, uint64_t window,
                                        uint64_t sink);
/* Confirmation draws averaged into bosch_result_score (0 = confirm off, or
 * the run ended before confirming). */
BOSCH_API uint32_t bosch_result_confirmations(const bosch_result *r);
/* Standard error of that mean (sd / sqrt(n)); NaN below 2 draws. */
BOSCH_API double bosch_result_score_stderr(const bosch_result *r);
/* The raw score the search itself saw for the reported mask (its draw 0;
 * equal to bosch_result_score without confirmation draws). */
BOSCH_API double bosch_result_search_score(const bosch_result *r);
/* Budget spent, in full-evaluation equivalents (a fidelity-f evaluation
 * counts f; equals bosch_result_evaluations(r, -1) without screening). */
BOSCH_API double bosch_result_cost(const bosch_result *r);
/* Evaluations done in one stage, or in all stages for stage = -1. */
BOSCH_API uint64_t bosch_result_evaluations(const bosch_result *r, int stage);

/* Evaluations answered from a resumed journal (included in the counts above). */
BOSCH_API uint64_t bosch_result_replayed(const bosch_result *r);

/* Evaluation history, in evaluation order. */
BOSCH_API size_t bosch_result_history_size(const bosch_result *r);
/* Record i: its mask (units bytes, may be NULL), raw score, stage. Any
 * output pointer may be NULL. */
BOSCH_API int bosch_result_history_entry(const bosch_result *r, size_t i, uint8_t *mask,
                                         double *score, int *stage);
/* Fidelity and draw of record i (either pointer may be NULL). */
BOSCH_API int bosch_result_history_request(const bosch_result *r, size_t i, double *fidelity,
                                           uint32_t *draw);
/* Wall time of evaluation i in seconds (evaluator call, or ask-to-tell
 * time in ask/tell mode); NaN when unknown or i is out of range. */
BOSCH_API double bosch_result_history_wall(const bosch_result *r, size_t i);
/* Writes the history as JSON Lines, one object per evaluation:
 *   {"eval":0,"stage":"anchors","score":0.93,"normalized":1.0,
 *    "swa_units":0,"wall_s":0.02,"mask":"0000..."}
 * with "fidelity" and "draw" before "mask" on the records of other requests
 * (screened scores, confirmation draws).
 * ("mask" is one character per unit, '1' = SWA). The file is replaced
 * atomically (a temporary beside it, synced, renamed): a failed write
 * leaves an earlier file as it was. BOSCH_E_IO with errno set to the
 * system's reason when it cannot be written. */
BOSCH_API int bosch_result_write_history(const bosch_result *r, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_OPTIMIZER_H */
