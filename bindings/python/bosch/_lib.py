"""Loading of libbosch and ctypes prototypes of its public C API.

Every C function the binding uses is declared here with explicit
``argtypes``/``restype``. Handles are opaque and travel as ``c_void_p``
(Python ints); NULL handles come back as ``None``.

Library lookup order:
  1. the environment variable ``BOSCH_LIBRARY`` (full path to libbosch.so.0);
  2. ``ctypes.util.find_library('bosch')``;
  3. the plain soname ``libbosch.so.0`` (resolved by the dynamic loader).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_double, c_int, c_size_t, c_uint32,
                    c_uint64, c_void_p)

__all__ = ["lib", "library_path", "missing_symbols", "EVAL_FN", "BATCH_EVAL_FN", "LOG_FN",
           "PROGRESS_FN", "STRATEGY_INIT_FN", "STRATEGY_PROPOSE_FN", "STRATEGY_OBSERVE_FN",
           "STRATEGY_DESTROY_FN", "OBJECTIVE_FN", "SUPPORTED_MAJOR"]

#: Major API version this binding was written against (bosch.h 0.x).
SUPPORTED_MAJOR = 0

c_uint8_p = POINTER(ctypes.c_uint8)
c_double_p = POINTER(c_double)
c_uint32_p = POINTER(c_uint32)
c_uint64_p = POINTER(c_uint64)
c_size_t_p = POINTER(c_size_t)
c_int_p = POINTER(c_int)
c_void_pp = POINTER(c_void_p)


def _load() -> tuple[ctypes.CDLL, str]:
    env = os.environ.get("BOSCH_LIBRARY")
    if env:
        try:
            return ctypes.CDLL(env), env
        except OSError as exc:
            raise ImportError(f"BOSCH_LIBRARY={env!r} could not be loaded: {exc}") from exc
    errors = []
    candidates = []
    found = ctypes.util.find_library("bosch")
    if found:
        candidates.append(found)
    candidates += ["libbosch.so.0", "libbosch.so"]
    for name in candidates:
        try:
            return ctypes.CDLL(name), name
        except OSError as exc:
            errors.append(f"{name}: {exc}")
    raise ImportError("libbosch could not be found; set BOSCH_LIBRARY to the full path of "
                      "libbosch.so.0 (tried: " + "; ".join(errors) + ")")


lib, library_path = _load()

# --------------------------------------------------------------------------
# Callback types (C function pointer typedefs of the headers).
# Pointers that the binding only reads as raw memory are declared c_void_p
# (they arrive as plain ints, cheaper than pointer objects).
# --------------------------------------------------------------------------
# int (*bosch_eval_fn)(const uint8_t *mask, size_t units, double *score, void *user)
EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_double_p, c_void_p)
# int (*bosch_batch_eval_fn)(const uint8_t *masks, size_t n, size_t units, double *scores, void *user)
BATCH_EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_size_t, c_double_p, c_void_p)
# void (*bosch_log_fn)(int level, const char *msg, void *user)
LOG_FN = CFUNCTYPE(None, c_int, c_char_p, c_void_p)
# void (*bosch_progress_fn)(const bosch_progress *p, void *user)
PROGRESS_FN = CFUNCTYPE(None, c_void_p, c_void_p)
# int (*bosch_strategy_init_fn)(void **state, const bosch_subproblem *sp, void *user)
STRATEGY_INIT_FN = CFUNCTYPE(c_int, c_void_pp, c_void_p, c_void_p)
# int (*bosch_strategy_propose_fn)(void *state, const bosch_subproblem *sp, uint8_t *cands,
#                                  size_t max, size_t *n)
STRATEGY_PROPOSE_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_size_t, c_size_t_p)
# int (*bosch_strategy_observe_fn)(void *state, const bosch_subproblem *sp, const uint8_t *cands,
#                                  const double *values, size_t n)
STRATEGY_OBSERVE_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_double_p, c_size_t)
# void (*bosch_strategy_destroy_fn)(void *state, void *user)
STRATEGY_DESTROY_FN = CFUNCTYPE(None, c_void_p, c_void_p)
# int (*bosch_objective_fn)(const uint8_t *x, size_t n_vars, double *value, void *user)
OBJECTIVE_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_double_p, c_void_p)

H = c_void_p  # every opaque handle

# name: (restype, [argtypes])
_PROTOTYPES = {
    # ---- bosch.h: version and status --------------------------------------
    "bosch_version_number": (ctypes.c_uint, []),
    "bosch_version_string": (c_char_p, []),
    "bosch_is_error": (c_int, [c_int]),
    "bosch_strerror": (c_char_p, [c_int]),
    "bosch_err_name": (c_char_p, [c_int]),
    # ---- problem ----------------------------------------------------------
    "bosch_problem_create": (H, [c_uint32, c_uint32, c_uint32]),
    "bosch_problem_clone": (H, [H]),
    "bosch_problem_free": (None, [H]),
    "bosch_problem_layers": (c_uint32, [H]),
    "bosch_problem_kv_groups": (c_uint32, [H]),
    "bosch_problem_heads_per_group": (c_uint32, [H]),
    "bosch_problem_units": (c_size_t, [H]),
    "bosch_problem_query_heads": (c_size_t, [H]),
    "bosch_problem_set_target_ratio": (c_int, [H, c_double]),
    "bosch_problem_set_target_units": (c_int, [H, c_size_t]),
    "bosch_problem_target_units": (c_size_t, [H]),
    "bosch_problem_target_ratio": (c_double, [H]),
    "bosch_problem_fix_unit": (c_int, [H, c_uint32, c_uint32, c_int]),
    "bosch_problem_unit_fix": (c_int, [H, c_uint32, c_uint32]),
    "bosch_problem_set_layer_bounds": (c_int, [H, c_uint32, c_double, c_double]),
    "bosch_problem_check": (c_int, [H, ctypes.c_char_p, c_size_t]),
    # ---- repair and masks -------------------------------------------------
    "bosch_repair": (c_int, [H, c_void_p, c_double_p, c_uint32_p, c_void_p]),
    "bosch_mask_is_feasible": (c_int, [H, c_void_p]),
    "bosch_mask_expand_heads": (c_int, [H, c_void_p, c_void_p]),
    "bosch_kv_saving": (c_double, [c_double, c_uint64, c_uint64, c_uint64]),
    # ---- optimizer.h ------------------------------------------------------
    "bosch_stage_name": (c_char_p, [c_int]),
    "bosch_variant_name": (c_char_p, [c_int]),
    "bosch_optimizer_create": (H, [H]),
    "bosch_optimizer_free": (None, [H]),
    "bosch_optimizer_last_error": (c_char_p, [H]),
    "bosch_set_seed": (c_int, [H, c_uint64]),
    "bosch_set_budget": (c_int, [H, c_uint64]),
    "bosch_set_stage_budget": (c_int, [H, c_int, c_uint64]),
    "bosch_set_probe_fraction": (c_int, [H, c_double]),
    "bosch_set_polish_fraction": (c_int, [H, c_double]),
    "bosch_set_time_limit": (c_int, [H, c_double]),
    "bosch_set_alpha": (c_int, [H, c_double]),
    "bosch_set_group_cap": (c_int, [H, c_uint32]),
    "bosch_set_batch_size": (c_int, [H, c_uint32]),
    "bosch_set_ratio_spread": (c_int, [H, c_double]),
    "bosch_set_variant": (c_int, [H, c_int]),
    "bosch_set_strategy": (c_int, [H, c_int, H]),
    "bosch_set_anchors": (c_int, [H, c_double, c_double]),
    "bosch_set_option": (c_int, [H, c_char_p, c_char_p]),
    "bosch_get_option": (c_int, [H, c_char_p, ctypes.c_char_p, c_size_t]),
    "bosch_set_log": (c_int, [H, LOG_FN, c_void_p, c_int]),
    "bosch_set_progress": (c_int, [H, PROGRESS_FN, c_void_p]),
    "bosch_progress_stage": (c_int, [H]),
    "bosch_progress_evaluations": (c_uint64, [H]),
    "bosch_progress_budget": (c_uint64, [H]),
    "bosch_progress_best_score": (c_double, [H]),
    "bosch_progress_layers": (c_uint32, [H]),
    "bosch_progress_layer_ratios": (c_int, [H, c_double_p, c_size_t]),
    "bosch_progress_elapsed": (c_double, [H]),
    "bosch_progress_rate": (c_double, [H]),
    "bosch_progress_eta": (c_double, [H]),
    "bosch_progress_replayed": (c_uint64, [H]),
    "bosch_set_evaluator": (c_int, [H, EVAL_FN, c_void_p]),
    "bosch_set_batch_evaluator": (c_int, [H, BATCH_EVAL_FN, c_void_p]),
    "bosch_optimize": (c_int, [H]),
    "bosch_force_stop": (None, [H]),
    "bosch_set_threads": (c_int, [H, c_uint32]),
    "bosch_set_evaluator_thread_safe": (c_int, [H, c_int]),
    "bosch_set_journal": (c_int, [H, c_char_p, c_int]),
    "bosch_set_journal_sync": (c_int, [H, c_int]),
    "bosch_evaluator_status": (c_int, [H]),
    "bosch_ask": (c_int, [H, c_size_t_p]),
    "bosch_candidate": (c_int, [H, c_size_t, c_void_p]),
    "bosch_candidate_stage": (c_int, [H]),
    "bosch_tell": (c_int, [H, c_size_t, c_double]),
    "bosch_tell_failure": (c_int, [H, c_size_t, c_int]),
    "bosch_get_result": (c_int, [H, c_void_pp]),
    "bosch_result_free": (None, [H]),
    "bosch_result_status": (c_int, [H]),
    "bosch_result_feasible": (c_int, [H]),
    "bosch_result_units": (c_size_t, [H]),
    "bosch_result_layers": (c_uint32, [H]),
    "bosch_result_mask": (c_int, [H, c_void_p, c_size_t]),
    "bosch_result_head_mask": (c_int, [H, c_void_p, c_size_t]),
    "bosch_result_score": (c_double, [H]),
    "bosch_result_normalized_score": (c_double, [H]),
    "bosch_result_objective": (c_double, [H]),
    "bosch_result_anchor": (c_double, [H, c_int]),
    "bosch_result_ratio": (c_double, [H]),
    "bosch_result_layer_ratios": (c_int, [H, c_double_p, c_size_t]),
    "bosch_result_kv_saving": (c_double, [H, c_uint64, c_uint64, c_uint64]),
    "bosch_result_evaluations": (c_uint64, [H, c_int]),
    "bosch_result_replayed": (c_uint64, [H]),
    "bosch_result_history_size": (c_size_t, [H]),
    "bosch_result_history_entry": (c_int, [H, c_size_t, c_void_p, c_double_p, c_int_p]),
    "bosch_result_history_wall": (c_double, [H, c_size_t]),
    "bosch_result_write_history": (c_int, [H, c_char_p]),
    # ---- strategy.h -------------------------------------------------------
    "bosch_strategy_create": (H, [c_char_p, STRATEGY_INIT_FN, STRATEGY_PROPOSE_FN,
                               STRATEGY_OBSERVE_FN, STRATEGY_DESTROY_FN, c_void_p]),
    "bosch_strategy_builtin": (H, [c_char_p]),
    "bosch_strategy_builtin_count": (c_size_t, []),
    "bosch_strategy_builtin_name": (c_char_p, [c_size_t]),
    "bosch_strategy_clone": (H, [H]),
    "bosch_strategy_name": (c_char_p, [H]),
    "bosch_strategy_free": (None, [H]),
    "bosch_subproblem_vars": (c_size_t, [H]),
    "bosch_subproblem_blocks": (c_size_t, [H]),
    "bosch_subproblem_block_of": (c_uint32, [H, c_size_t]),
    "bosch_subproblem_block_size": (c_uint32, [H, c_size_t]),
    "bosch_subproblem_block_count": (c_uint32, [H, c_size_t]),
    "bosch_subproblem_size": (c_uint64, [H]),
    "bosch_subproblem_budget_left": (c_uint64, [H]),
    "bosch_subproblem_incumbent": (c_int, [H, c_void_p, c_double_p]),
    "bosch_subproblem_lookup": (c_int, [H, c_void_p, c_double_p]),
    "bosch_subproblem_random": (c_uint64, [H]),
    "bosch_subproblem_random_below": (c_uint64, [H, c_uint64]),
    "bosch_subproblem_repair": (c_int, [H, c_void_p, c_double_p]),
    "bosch_subproblem_create": (H, [c_size_t, c_size_t, c_uint32_p, c_uint32_p, c_uint64]),
    "bosch_subproblem_free": (None, [H]),
    "bosch_subproblem_set_start": (c_int, [H, c_void_p, c_double]),
    "bosch_strategy_solve": (c_int, [H, H, OBJECTIVE_FN, c_void_p, c_uint64, c_uint32,
                                     c_void_p, c_double_p, c_uint64_p]),
    # ---- baselines.h ------------------------------------------------------
    "bosch_baseline_layers": (c_int, [H, c_int, c_uint64, c_void_p]),
    "bosch_baseline_static": (c_int, [H, c_double_p, c_void_p]),
    "bosch_baseline_static_heads": (c_int, [H, c_double_p, c_int, c_void_p]),
    # ---- selection.h ------------------------------------------------------
    "bosch_create_status": (c_int, []),
    "bosch_create_error": (c_char_p, []),
    "bosch_selection_create": (H, [c_uint32, c_uint32, c_uint32]),
    "bosch_selection_from_result": (H, [H, H]),
    "bosch_selection_read_json": (H, [c_char_p]),
    "bosch_selection_free": (None, [H]),
    "bosch_selection_last_error": (c_char_p, [H]),
    "bosch_selection_layers": (c_uint32, [H]),
    "bosch_selection_kv_groups": (c_uint32, [H]),
    "bosch_selection_heads_per_group": (c_uint32, [H]),
    "bosch_selection_units": (c_size_t, [H]),
    "bosch_selection_set_mask": (c_int, [H, c_void_p, c_size_t]),
    "bosch_selection_mask": (c_int, [H, c_void_p, c_size_t]),
    "bosch_selection_swa_units": (c_size_t, [H]),
    "bosch_selection_ratio": (c_double, [H]),
    "bosch_selection_layer_ratios": (c_int, [H, c_double_p, c_size_t]),
    "bosch_selection_set_method": (c_int, [H, c_char_p]),
    "bosch_selection_method": (c_char_p, [H]),
    "bosch_selection_set_status": (c_int, [H, c_char_p]),
    "bosch_selection_status": (c_char_p, [H]),
    "bosch_selection_set_model_path": (c_int, [H, c_char_p]),
    "bosch_selection_model_path": (c_char_p, [H]),
    "bosch_selection_library_version": (c_char_p, [H]),
    "bosch_selection_set_target_ratio": (c_int, [H, c_double]),
    "bosch_selection_target_ratio": (c_double, [H]),
    "bosch_selection_set_importance": (c_int, [H, c_double_p, c_size_t]),
    "bosch_selection_importance": (c_int, [H, c_double_p, c_size_t]),
    "bosch_selection_set_score": (c_int, [H, c_int, c_double]),
    "bosch_selection_score": (c_double, [H, c_int]),
    "bosch_selection_set_metric": (c_int, [H, c_char_p]),
    "bosch_selection_metric": (c_char_p, [H]),
    "bosch_selection_set_kv_saving": (c_int, [H, c_uint64, c_uint64, c_uint64]),
    "bosch_selection_kv_saving": (c_int, [H, c_uint64_p, c_uint64_p, c_uint64_p, c_double_p]),
    "bosch_selection_setting_set_string": (c_int, [H, c_char_p, c_char_p]),
    "bosch_selection_setting_set_int": (c_int, [H, c_char_p, ctypes.c_int64]),
    "bosch_selection_setting_set_double": (c_int, [H, c_char_p, c_double]),
    "bosch_selection_setting_set_bool": (c_int, [H, c_char_p, c_int]),
    "bosch_selection_setting_count": (c_size_t, [H]),
    "bosch_selection_setting_key": (c_char_p, [H, c_size_t]),
    "bosch_selection_setting_type": (c_int, [H, c_char_p]),
    "bosch_selection_setting_string": (c_char_p, [H, c_char_p]),
    "bosch_selection_setting_int": (c_int, [H, c_char_p, POINTER(ctypes.c_int64)]),
    "bosch_selection_setting_double": (c_int, [H, c_char_p, c_double_p]),
    "bosch_selection_setting_bool": (c_int, [H, c_char_p, c_int_p]),
    "bosch_selection_set_evaluations": (c_int, [H, c_uint64_p, c_uint64, c_uint64]),
    "bosch_selection_evaluations": (c_int, [H, c_int, c_uint64_p]),
    "bosch_selection_replayed": (c_int, [H, c_uint64_p]),
    "bosch_selection_write_json": (c_int, [H, c_char_p]),
    "bosch_selection_write_tsv": (c_int, [H, c_char_p]),
    "bosch_selection_write_svg": (c_int, [H, c_char_p]),
    "bosch_history_write": (c_int, [c_char_p, c_size_t, c_size_t, c_void_p, c_double_p,
                                    POINTER(c_char_p), c_double, c_double]),
    # ---- testbed.h --------------------------------------------------------
    "bosch_testbed_create": (H, [c_uint32, c_uint32, c_uint64]),
    "bosch_testbed_free": (None, [H]),
    "bosch_testbed_units": (c_size_t, [H]),
    "bosch_testbed_set": (c_int, [H, c_char_p, c_double]),
    "bosch_testbed_get": (c_double, [H, c_char_p]),
    "bosch_testbed_score": (c_int, [H, c_void_p, c_double_p]),
    "bosch_testbed_score_clean": (c_int, [H, c_void_p, c_double_p]),
    "bosch_testbed_unit_cost": (c_double, [H, c_size_t]),
    "bosch_testbed_interactions": (c_size_t, [H]),
    "bosch_testbed_interaction": (c_int, [H, c_size_t, c_size_t_p, c_size_t_p, c_double_p]),
    "bosch_testbed_eval": (c_int, [c_void_p, c_size_t, c_double_p, c_void_p]),
    "bosch_testbed_batch_eval": (c_int, [c_void_p, c_size_t, c_size_t, c_double_p, c_void_p]),
    "bosch_testbed_optimum": (c_int, [H, H, c_void_p, c_double_p]),
}

#: Names of public functions the loaded library does not export (should be empty).
missing_symbols: list[str] = []


def _declare() -> None:
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing_symbols.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes


_declare()


def _c_function(name: str, proto):
    """The exported C function `name` as a function pointer of type `proto`
    (to hand library functions such as bosch_testbed_eval back to the library)."""
    return proto((name, lib))


def testbed_eval_pointer():
    return _c_function("bosch_testbed_eval", EVAL_FN)


def testbed_batch_eval_pointer():
    return _c_function("bosch_testbed_batch_eval", BATCH_EVAL_FN)


def text(ptr: bytes | None) -> str:
    """Decode a ``const char *`` result (NULL -> '')."""
    if ptr is None:
        return ""
    return ptr.decode("utf-8", errors="replace")
