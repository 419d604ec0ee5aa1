/*
 * libbosch - training-free selection of sliding-window attention heads (BOSCH).
 *
 * This is the stable public API. Everything declared in this header (and in
 * the headers it includes) follows semantic versioning: within one major
 * version, functions keep their signatures and meanings and enum values keep
 * their numbers.
 *
 * Conventions (modelled on libuv and NLopt):
 *  - Every function that can fail returns an `int` status. Negative values are
 *    errors (`enum bosch_error`); zero is plain success; positive values are
 *    success *and* say why a search stopped (`enum bosch_stop`).
 *    `bosch_strerror()` and `bosch_err_name()` turn any status into text.
 *  - Handles are opaque. Whoever creates a handle owns it and frees it with
 *    the matching _free() or _destroy() function; passing NULL to a free
 *    function is a no-op.
 *  - A handle may be used by one thread at a time. Different handles are
 *    independent. The only exception is bosch_force_stop(), which may be
 *    called from any thread (or from inside a callback) at any time while
 *    the optimizer exists.
 *  - Masks are arrays of bytes, one per decision unit, 1 = sliding-window
 *    (SWA), 0 = full attention. Unit u is (layer u / kv_groups, KV group
 *    u % kv_groups). Input masks accept any non-zero byte as 1.
 *  - The library never prints, never exits and never aborts: it reports
 *    through return codes, per-handle error strings and a log callback.
 */
#ifndef BOSCH_BOSCH_H
#define BOSCH_BOSCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Export and deprecation macros. A packager or a static build may define    */
/* BOSCH_API (e.g. empty, or __declspec) and BOSCH_DEPRECATED before         */
/* including this header; libbosch-torch has its own BOSCH_TORCH_API.        */
/* ------------------------------------------------------------------------ */
#ifndef BOSCH_API
#if defined(BOSCH_BUILDING) && defined(__GNUC__)
#define BOSCH_API __attribute__((visibility("default")))
#else
#define BOSCH_API
#endif
#endif

/* Marks the pre-1.0 names kept as aliases (removed in 1.0). Define
 * BOSCH_NO_DEPRECATION_WARNINGS to silence the warnings. */
#ifndef BOSCH_DEPRECATED
#if defined(__GNUC__) && !defined(BOSCH_BUILDING) && !defined(BOSCH_NO_DEPRECATION_WARNINGS)
#define BOSCH_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#else
#define BOSCH_DEPRECATED(replacement)
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */
#define BOSCH_VERSION_MAJOR 0
#define BOSCH_VERSION_MINOR 1
#define BOSCH_VERSION_PATCH 0
#define BOSCH_VERSION_NUMBER \
    (BOSCH_VERSION_MAJOR * 10000 + BOSCH_VERSION_MINOR * 100 + BOSCH_VERSION_PATCH)
#define BOSCH_VERSION_STRING "0.1.0"

/* Version of the library actually loaded at run time (compare with the
 * macros to detect a header/library mismatch). */
BOSCH_API unsigned bosch_version_number(void);
BOSCH_API const char *bosch_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */
/* Every status, from one table (libuv's UV_ERRNO_MAP is the model):
 * XX(name, value, text). Errors are negative, BOSCH_OK is zero, positive
 * statuses say why a search ended. The numbers never change. */
#define BOSCH_ERROR_MAP(XX)                                                                   \
    XX(E_INVALID, -1, "invalid argument")          /* NULL, out of range, bad value */          \
    XX(E_NOMEM, -2, "out of memory")                                                           \
    XX(E_INFEASIBLE, -3, "constraints admit no feasible mask") /* fixed units, bounds, target */ \
    XX(E_STATE, -4, "operation not allowed in the current state")                             \
    XX(E_BAD_SCORE, -5, "score is NaN or infinite")                                           \
    XX(E_EVALUATOR, -6, "the evaluator reported a failure")                                   \
    XX(E_OPTION, -7, "unknown option or unparsable option value")                             \
    XX(E_IO, -8, "input/output error")           /* a file could not be opened, read, written */ \
    XX(E_STRATEGY, -9, "search strategy failed")                                              \
    XX(E_ANCHORS, -10, "anchor scores cannot normalise: S_full must exceed S_allSWA")          \
    XX(E_TOO_LARGE, -11, "instance too large for this exact method")                          \
    XX(E_NOT_FOUND, -12, "not found")            /* no such item (name, index, result) */      \
    XX(E_CORRUPT, -13, "file is damaged or not in the expected format") /* journal, result */  \
    XX(E_MISMATCH, -14, "journal was written with other settings or another version")        \
    XX(E_BUSY, -15, "in use by another process") /* a journal another run holds open (locked) */

#define BOSCH_STOP_MAP(XX)                                                                    \
    XX(DONE, 1, "search completed")  /* every stage ran to completion, the budget spent */      \
    XX(BUDGET_REACHED, 2, "stopped: evaluation budget reached")                              \
    XX(TIME_REACHED, 3, "stopped: time limit reached")                                       \
    XX(FORCED_STOP, 4, "stopped: forced stop requested") /* bosch_force_stop() was called */ \
    XX(CONVERGED, 5, "search completed early: nothing left to search, budget unused") \
    /* every stage ran to completion with budget left: the strategies converged or the   \
       subproblems were enumerated; the log says how many evaluations were used */      \
    XX(JOURNAL_FAILED, 6, "stopped: the journal could not be written")                 \
    /* an append failed (full disk...): the run ended cleanly with the evaluations it    \
       had, the result holds the best mask found, bosch_optimizer_last_error() the reason */ \
    XX(PLATEAU, 7, "search stopped early: the best stopped improving, budget unused")      \
    /* the stopping rule (option stop_tolerance) found that the rest of the budget was       \
       unlikely to raise the best by more than the tolerance; the log says by how much      \
       and how many evaluations were left */

#define BOSCH_STATUS_ENUM_(name, value, text) BOSCH_##name = value,
enum bosch_error {
    BOSCH_OK = 0,
    BOSCH_ERROR_MAP(BOSCH_STATUS_ENUM_)
    BOSCH_E_LAST_ = -16 /* one past the most negative code; not a status */
};

/* Positive statuses: the search ended normally, and this is why. */
enum bosch_stop {
    BOSCH_STOP_MAP(BOSCH_STATUS_ENUM_)
    BOSCH_STOP_LAST_ = 8 /* one past the largest stop reason; not a status */
};
#undef BOSCH_STATUS_ENUM_

/* Non-zero when `status` is an error (negative). */
BOSCH_API int bosch_is_error(int status);
/* Human-readable description of any status; never NULL (unknown codes get a
 * generic text). The string is static. */
BOSCH_API const char *bosch_strerror(int status);
/* Symbolic name of any status ("BOSCH_E_INVALID", "BOSCH_DONE", ...); never NULL. */
BOSCH_API const char *bosch_err_name(int status);

/* Why the last function of libbosch that creates a handle (a _create,
 * _clone or _read function) returned NULL on the calling thread: the status
 * (a negative enum bosch_error) and a message naming the function and the
 * reason. Each thread has its own; a successful creation does not clear it.
 * The message stays valid until the next failing creation on that thread;
 * "" and BOSCH_OK when nothing failed yet. */
BOSCH_API int bosch_create_status(void);
BOSCH_API const char *bosch_create_error(void);

/* ------------------------------------------------------------------------ */
/* Opaque types (declared once here so every header can use them)           */
/* ------------------------------------------------------------------------ */
typedef struct bosch_problem bosch_problem;       /* model shape and constraints */
typedef struct bosch_optimizer bosch_optimizer;   /* one search (optimizer.h) */
typedef struct bosch_result bosch_result;         /* snapshot of a search's outcome */
typedef struct bosch_progress bosch_progress;     /* progress event, valid during the callback */
typedef struct bosch_strategy bosch_strategy;     /* search strategy descriptor (strategy.h) */
typedef struct bosch_subproblem bosch_subproblem; /* what a strategy searches (strategy.h) */
typedef struct bosch_selection bosch_selection; /* a result file's content (selection.h) */

/* ------------------------------------------------------------------------ */
/* Problem: the shape of the model and the constraints on the mask           */
/* ------------------------------------------------------------------------ */

/* Fix state of a unit. */
enum bosch_fix {
    BOSCH_FIX_NONE = 0, /* free: the search decides */
    BOSCH_FIX_FULL = 1, /* always full attention */
    BOSCH_FIX_SWA = 2   /* always sliding-window */
};

/* A model with `layers` layers, `kv_groups` KV heads per layer and
 * `heads_per_group` query heads per KV head (1 for MHA). A decision unit is a
 * (layer, KV group). Defaults: target ratio 0.5, no fixed units, per-layer
 * ratio bounds [0, 1]. Returns NULL on invalid shape (any zero, or more than
 * 2^24 units) or out of memory. */
BOSCH_API bosch_problem *bosch_problem_create(uint32_t layers, uint32_t kv_groups,
                                              uint32_t heads_per_group);
BOSCH_API bosch_problem *bosch_problem_clone(const bosch_problem *p);
BOSCH_API void bosch_problem_free(bosch_problem *p);

BOSCH_API uint32_t bosch_problem_layers(const bosch_problem *p);
BOSCH_API uint32_t bosch_problem_kv_groups(const bosch_problem *p);
BOSCH_API uint32_t bosch_problem_heads_per_group(const bosch_problem *p);
BOSCH_API size_t bosch_problem_units(const bosch_problem *p);     /* layers * kv_groups */
BOSCH_API size_t bosch_problem_query_heads(const bosch_problem *p); /* units * heads_per_group */

/* Target SWA ratio rho in [0, 1]. The exact number of SWA units is
 * floor(rho * units + 0.5). Clears any exact unit count set before. */
BOSCH_API int bosch_problem_set_target_ratio(bosch_problem *p, double rho);
/* Exact number of SWA units (0..units). Overrides the ratio. */
BOSCH_API int bosch_problem_set_target_units(bosch_problem *p, size_t n_swa);
/* The exact number of SWA units every final mask has. */
BOSCH_API size_t bosch_problem_target_units(const bosch_problem *p);
/* rho as set, or n_swa / units when an exact count was set. */
BOSCH_API double bosch_problem_target_ratio(const bosch_problem *p);

BOSCH_API int bosch_problem_fix_unit(bosch_problem *p, uint32_t layer, uint32_t group,
                                     int fix /* enum bosch_fix */);
/* Returns enum bosch_fix, or BOSCH_E_INVALID for an out-of-range unit. */
BOSCH_API int bosch_problem_unit_fix(const bosch_problem *p, uint32_t layer, uint32_t group);

/* Per-layer bounds on the SWA ratio; the count of SWA units in the layer
 * stays within [ceil(min*G), floor(max*G)] (G = kv_groups). */
BOSCH_API int bosch_problem_set_layer_bounds(bosch_problem *p, uint32_t layer,
                                             double min_ratio, double max_ratio);

/* BOSCH_OK when some mask meets every constraint, BOSCH_E_INFEASIBLE (with
 * the reason in `why`, if given) otherwise. `why` may be NULL. */
BOSCH_API int bosch_problem_check(const bosch_problem *p, char *why, size_t why_len);

/* ------------------------------------------------------------------------ */
/* Repair: map any mask to the nearest feasible mask                         */
/* ------------------------------------------------------------------------ */
/* Writes to `out` (units bytes; may alias `in`) the feasible mask closest to
 * `in` in Hamming distance, and returns the number of units changed (>= 0)
 * or a negative error.
 *
 * Feasible means: fixed units hold their fixed value; every layer's SWA count
 * lies within its bounds; the total SWA count equals the problem's target.
 * When `layer_counts` is non-NULL (one entry per layer) each layer must
 * instead hold exactly layer_counts[l] SWA units (and the total is their
 * sum); BOSCH_E_INFEASIBLE if a count conflicts with fixed units or bounds.
 *
 * Tie rule: when several units could be changed, a unit with a higher
 * `priority` is preferred for SWA: SWA units are switched to full in order of
 * increasing priority, full units are switched to SWA in order of decreasing
 * priority; equal priorities go to the lower unit index first (for both
 * directions). `priority` (one double per unit) may be NULL: all equal.
 * Repair is idempotent, and a feasible input is returned unchanged. */
BOSCH_API int bosch_repair(const bosch_problem *p, const uint8_t *in, const double *priority,
                           const uint32_t *layer_counts, uint8_t *out);

/* Non-zero when `mask` is feasible for `p` (as defined above, with the global target). */
BOSCH_API int bosch_mask_is_feasible(const bosch_problem *p, const uint8_t *mask);

/* Expand a unit mask to one byte per query head (GQA tying): head h of layer
 * l takes the value of unit (l, h / heads_per_group). `out` holds
 * bosch_problem_query_heads(p) bytes. */
BOSCH_API int bosch_mask_expand_heads(const bosch_problem *p, const uint8_t *unit_mask,
                                      uint8_t *head_mask);

/* Estimated KV-cache saving of a mask, as a fraction of the full cache, at
 * context length `context` with window `window` and `sink` sink tokens:
 * ratio * (1 - (sink + window) / context), clamped at 0. */
BOSCH_API double bosch_kv_saving(double swa_ratio, uint64_t context, uint64_t window,
                                 uint64_t sink);

#ifdef __cplusplus
}
#endif

#include "bosch/strategy.h"
#include "bosch/optimizer.h"
#include "bosch/baselines.h"
#include "bosch/selection.h"

#endif /* BOSCH_BOSCH_H */
