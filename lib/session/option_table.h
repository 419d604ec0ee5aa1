/* The option table of the session (XX(id, name, kind, field, default, min,
 * max, what, doc) per option), and the checked writes every setter shares.
 * options.c defines the table and the by-name, enumeration and default
 * code it drives; setters.c the typed setters. Adding an option is one row
 * here (its field in struct options, and what it changes in the method,
 * session_lns_config); the CLI and the Python package take it from the
 * library's enumeration. */
#ifndef LIBBOSCH_SESSION_OPTION_TABLE_H
#define LIBBOSCH_SESSION_OPTION_TABLE_H

#include <math.h>
#include <stddef.h>

#include "session/session.h"

#define STR_(x) #x
#define STR(x) STR_(x) /* a default given as a number (session.h) */

enum kind { K_UINT, K_DOUBLE, K_BOOL, K_CHOICE, K_STRATEGY, K_PATH };

/* XX(id, name, kind, field, default, min, max, what, doc). `field` is the
 * member of struct options (uint64_t for UINT, double for DOUBLE, int for
 * BOOL and CHOICE); `what` names the value in error messages. A strategy
 * option sets `min` as the stage (-1 = both). */
#define OPTION_TABLE(XX)                                                                          \
    XX(SEED, "seed", K_UINT, seed, "0", 0, 18446744073709551615.0, "seed",                          \
       "seed of every random choice; same seed and inputs, same result")                         \
    XX(BUDGET, "budget", K_UINT, budget, "1000", 1, 18446744073709551615.0,                         \
       "budget (must be >= 1)", "total evaluations, anchors included")                           \
    XX(PROBE_BUDGET, "probe_budget", K_UINT, probe_budget, "0", 0, 18446744073709551615.0,          \
       "probe_budget", "evaluations of stage 1 (0 = probe_fraction of what is left)")            \
    XX(GROUP_BUDGET, "group_budget", K_UINT, group_budget, "0", 0, 18446744073709551615.0,          \
       "group_budget", "evaluations of stage 3 (0 = all that is left)")                          \
    XX(PROBE_FRACTION, "probe_fraction", K_DOUBLE, probe_fraction, "0.2", 0, 1,                    \
       "probe_fraction (0..1)", "share of the budget for stage 1 when probe_budget is 0")        \
    XX(TIME_LIMIT, "time_limit", K_DOUBLE, time_limit, "0", 0, INFINITY,                           \
       "time_limit (finite seconds >= 0)", "wall-clock limit in seconds (0 = none)")             \
    XX(ALPHA, "alpha", K_DOUBLE, alpha, "1", 0, INFINITY, "alpha (finite, >= 0)",                  \
       "penalty weight of the ratio deviation in the objective")                                 \
    XX(RATIO_SPREAD, "ratio_spread", K_DOUBLE, spread, "0.5", 0, 1, "ratio_spread (0..1)",         \
       "largest move of layer ratios away from the target in stage 2")                           \
    XX(POLISH_FRACTION, "polish_fraction", K_DOUBLE, polish_fraction, "0.8", 0, 1,                 \
       "polish_fraction (0..1)", "share of stage 3 searching all free units at once")            \
    XX(GROUP_CAP, "group_cap", K_UINT, group_cap, "48", 1, 4294967295.0, "group_cap (>= 1)",       \
       "most free units searched jointly in stage 3")                                            \
    XX(BATCH_SIZE, "batch_size", K_UINT, batch, "4", 1, 4096, "batch_size (1..4096)",              \
       "most candidates proposed at once (part of the algorithm)")                               \
    XX(THREADS, "threads", K_UINT, threads, "1", 1, 256, "threads (1..256)",                       \
       "concurrent evaluations in callback mode (results do not depend on it)")                  \
    XX(JOURNAL, "journal", K_PATH, journal_path, "", 0, 0, "journal path",                         \
       "journal every evaluation to this file and resume from it (empty = none)")                \
    XX(JOURNAL_SYNC, "journal_sync", K_BOOL, journal_sync, "0", 0, 1, "journal_sync",              \
       "fdatasync after every journal write (0|1)")                                              \
    XX(RAW_SCORES, "raw_scores", K_BOOL, raw_scores, "0", 0, 1, "raw_scores",                      \
       "when S_full <= S_allSWA, search raw scores (normalized = NaN) instead of failing (0|1)")  \
    XX(ANCHOR_TOLERANCE, "anchor_tolerance", K_DOUBLE, anchor_tolerance, "0", 0, INFINITY,        \
       "anchor_tolerance (finite, >= 0)",                                                        \
       "anchors ordered only when S_full - S_allSWA exceeds this (the evaluator's noise)")      \
    XX(CONFIRM, "confirm", K_UINT, confirm, "0", 0, 1048576, "confirm (0..1048576)",               \
       "fresh draws of the best masks after the search; the result reports their mean")         \
    XX(CONFIRM_TOP, "confirm_top", K_UINT, confirm_top, "1", 1, 4096, "confirm_top (1..4096)",     \
       "how many of the best masks share the confirmation draws")                                \
    XX(SCREEN_FIDELITY, "screen_fidelity", K_DOUBLE, screen_fidelity, "1", 0.001, 1,               \
       "screen_fidelity (0.001..1)",                                                             \
       "stage 3 scores new candidates at this fidelity first (1 = off; needs a request evaluator)") \
    XX(SWEEP_PAIRS, "sweep_pairs", K_UINT, sweep_pairs, STR(SESSION_SWEEP_PAIRS), 0,             \
       1048576, "sweep_pairs (0..1048576)",                                                      \
       "flip sweep at the end of stage 3: most swaps it scores (0 = no sweep)")                  \
    XX(SWEEP_GAP, "sweep_gap", K_DOUBLE, sweep_gap, STR(SESSION_SWEEP_GAP), 0, 1,                  \
       "sweep_gap (0..1)",                                                                       \
       "the flip sweep runs when the recent candidates' median gap to the best is below this")  \
    XX(STOP_TOLERANCE, "stop_tolerance", K_DOUBLE, stop_tolerance, "0", 0, 1,                      \
       "stop_tolerance (0..1)",                                                                  \
       "stage 3 ends early when the rest of the budget, at the recent rate, would raise the "    \
       "best S^ by less than this (0 = off)")                                                    \
    XX(VARIANT, "variant", K_CHOICE, variant, "full", 0, BOSCH_VARIANT_LAYER_LEVEL, "variant",     \
       "which parts of the method run: full|probe-only|group-only|layer-level")                  \
    XX(STRATEGY, "strategy", K_STRATEGY, strategy, "auto", -1, 0, "strategy",                      \
       "built-in search strategy of stages 1 and 3")                                             \
    XX(PROBE_STRATEGY, "probe_strategy", K_STRATEGY, strategy, "auto", BOSCH_STAGE_PROBE, 0,       \
       "probe_strategy", "built-in search strategy of stage 1")                                  \
    XX(GROUP_STRATEGY, "group_strategy", K_STRATEGY, strategy, "auto", BOSCH_STAGE_GROUP, 0,       \
       "group_strategy", "built-in search strategy of stage 3")

enum option_id {
#define OPTION_ID(id, ...) OPT_##id,
    OPTION_TABLE(OPTION_ID)
#undef OPTION_ID
    OPT_COUNT
};

struct option_def {
    const char *name;
    enum kind kind;
    size_t offset;
    const char *def;
    double min, max;
    const char *what, *doc;
};

extern const struct option_def session_option_defs[OPT_COUNT];

#define FIELD(o, d, type) ((type *)((char *)(o) + (d)->offset))
#define CFIELD(o, d, type) ((const type *)((const char *)(o) + (d)->offset))

/* BOSCH_E_STATE (refused, with a message) once the search has started. */
int session_not_started(bosch_optimizer *opt);
/* BOSCH_E_INVALID, "invalid value for WHAT". */
int session_bad_value(bosch_optimizer *opt, const char *what);
/* Checked writes of a table option's field (bounds of the table). */
int session_set_uint(bosch_optimizer *opt, enum option_id id, uint64_t v);
int session_set_double(bosch_optimizer *opt, enum option_id id, double v);
int session_set_bool(bosch_optimizer *opt, enum option_id id, int v);

#endif
