"""Loading of libbosch and ctypes prototypes of its public C API.

Every C function the binding uses is declared here with explicit
``argtypes``/``restype``. Handles are opaque and travel as ``c_void_p``
(Python ints); NULL handles come back as ``None``.

Library lookup (:func:`library_candidates`), the first that loads wins:
  1. an explicit path: ``BOSCH_LIBRARY`` (libbosch), ``BOSCH_TEXT_LIBRARY``
     (libbosch-text), ``BOSCH_TORCH_LIBRARY`` (libbosch-torch); when set,
     nothing else is tried;
  2. the directories of ``BOSCH_LIBRARY_DIR`` (``os.pathsep``-separated),
     and their ``text/`` and ``torch/`` subfolders (a meson build's ``lib``);
  3. libbosch-text and libbosch-torch only: the directory libbosch was
     loaded from, and its ``text/`` / ``torch/`` subfolders;
  4. ``ctypes.util.find_library`` (the ld.so cache, ``LD_LIBRARY_PATH``);
  5. the standard directories: ``/usr/local``, ``/usr``, then ``sys.prefix``
     and ``sys.base_prefix`` (a venv, a conda environment), each with
     ``lib/<multiarch>`` (Debian's ``lib/x86_64-linux-gnu``), ``lib64``, ``lib``;
  6. the soname (``libbosch.so.0``, resolved by the dynamic loader), then the
     development name (``libbosch.so``).
libbosch is loaded at import; libbosch-text and libbosch-torch only when
``bosch.text`` / ``bosch.backend`` are first used (:func:`load_text`,
:func:`load_torch`). A failed lookup raises :class:`LibraryNotFoundError`
(an ImportError) listing every candidate and why it failed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import sys
import sysconfig
import threading
from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_double, c_int, c_size_t, c_uint32,
                    c_uint64, c_void_p)

__all__ = ["lib", "library_path", "missing_symbols", "EVAL_FN", "BATCH_EVAL_FN",
           "REQUEST_EVAL_FN", "REQUEST_BATCH_EVAL_FN", "LOG_FN",
           "PROGRESS_FN", "STRATEGY_INIT_FN", "STRATEGY_PROPOSE_FN", "STRATEGY_OBSERVE_FN",
           "STRATEGY_DESTROY_FN", "OBJECTIVE_FN", "SUPPORTED_MAJOR", "LibraryNotFoundError",
           "LIBRARIES", "library_candidates", "standard_dirs", "multiarch", "load_text",
           "load_torch", "load_mpi", "loaded_path"]

#: Major API version this binding was written against (bosch.h 0.x).
SUPPORTED_MAJOR = 0

c_uint8_p = POINTER(ctypes.c_uint8)
c_double_p = POINTER(c_double)
c_uint32_p = POINTER(c_uint32)
c_uint64_p = POINTER(c_uint64)
c_size_t_p = POINTER(c_size_t)
c_int_p = POINTER(c_int)
c_void_pp = POINTER(c_void_p)

# --------------------------------------------------------------------------
# Library lookup
# --------------------------------------------------------------------------
#: name -> (soname, development name, explicit-path variable, build-tree subfolder)
LIBRARIES = {
    "bosch": ("libbosch.so.0", "libbosch.so", "BOSCH_LIBRARY", ""),
    "bosch-text": ("libbosch-text.so.0", "libbosch-text.so", "BOSCH_TEXT_LIBRARY", "text"),
    "bosch-torch": ("libbosch-torch.so.0", "libbosch-torch.so", "BOSCH_TORCH_LIBRARY", "torch"),
    "bosch-mpi": ("libbosch-mpi.so.0", "libbosch-mpi.so", "BOSCH_MPI_LIBRARY", "mpi"),
}


class LibraryNotFoundError(ImportError):
    """A libbosch library could not be loaded. ``library`` is its name
    ("bosch", "bosch-text", "bosch-torch"); ``tried`` lists
    ``(candidate, reason)`` in lookup order."""

    def __init__(self, library: str, tried: list[tuple[str, str]], hint: str = ""):
        self.library = library
        self.tried = list(tried)
        soname, _, var, _ = LIBRARIES[library]
        lines = "\n".join(f"  {c}: {r}" for c, r in self.tried)
        msg = (f"lib{library} ({soname}) could not be loaded; set {var} to its full path or "
               f"BOSCH_LIBRARY_DIR to its directory. Tried, in order:\n{lines}")
        if hint:
            msg += "\n" + hint
        super().__init__(msg, name=f"lib{library}")


def multiarch() -> str | None:
    """The multiarch tuple of this interpreter (Debian's lib/<tuple>), e.g.
    'x86_64-linux-gnu': sysconfig's MULTIARCH, else the last folder of its
    LIBDIR when it looks like one, else <machine>-linux-gnu on Linux."""
    m = sysconfig.get_config_var("MULTIARCH")
    if m:
        return str(m)
    base = os.path.basename(str(sysconfig.get_config_var("LIBDIR") or ""))
    if base.count("-") >= 2:
        return base
    if sys.platform.startswith("linux") and platform.machine():
        return platform.machine() + "-linux-gnu"
    return None


def standard_dirs() -> list[str]:
    """The standard library directories searched (step 5), in order."""
    ma = multiarch()
    out: list[str] = []
    for prefix in ("/usr/local", "/usr", sys.prefix, sys.base_prefix):
        for sub in ([f"lib/{ma}"] if ma else []) + ["lib64", "lib"]:
            d = os.path.join(prefix, sub)
            if d not in out:
                out.append(d)
    return out


def library_candidates(name: str, loaded_dir: str | None = None,
                       env=None) -> tuple[list[str], bool]:
    """The candidates tried for library `name` ("bosch", "bosch-text",
    "bosch-torch"), in order, and whether they come from an explicit path
    variable (then only that one is tried). `loaded_dir` is the directory
    libbosch was loaded from (step 3); `env` defaults to os.environ."""
    env = os.environ if env is None else env
    soname, devname, var, sub = LIBRARIES[name]
    explicit = env.get(var)
    if explicit:
        return [explicit], True
    out: list[str] = []

    def add(c):
        if c and c not in out:
            out.append(c)

    def add_dir(d):
        for f in (soname, devname):
            add(os.path.join(d, f))
        if sub:
            add(os.path.join(d, sub, soname))

    for d in filter(None, env.get("BOSCH_LIBRARY_DIR", "").split(os.pathsep)):
        add_dir(d)
    if name != "bosch" and loaded_dir:
        add_dir(loaded_dir)  # an install (one libdir) or a build tree (lib/text, lib/torch)
    found = ctypes.util.find_library(name)
    if found:
        add(found)
    for d in standard_dirs():
        add(os.path.join(d, soname))
    add(soname)
    add(devname)
    return out, False


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", c_void_p), ("l_name", c_char_p)]


def loaded_path(cdll: ctypes.CDLL, fallback: str) -> str:
    """The real file behind a loaded library (dlinfo RTLD_DI_LINKMAP), or `fallback`."""
    try:
        dlinfo = ctypes.CDLL(None).dlinfo
        dlinfo.argtypes = [c_void_p, c_int, c_void_p]
        dlinfo.restype = c_int
        lm = POINTER(_LinkMap)()
        if dlinfo(cdll._handle, 2, ctypes.byref(lm)) == 0 and lm and lm.contents.l_name:
            p = lm.contents.l_name.decode(errors="replace")
            if os.path.isabs(p):
                return os.path.realpath(p)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not glibc
        pass
    return fallback


def _load_named(name: str, loaded_dir: str | None = None,
                hint: str = "") -> tuple[ctypes.CDLL, str]:
    candidates, explicit = library_candidates(name, loaded_dir)
    tried: list[tuple[str, str]] = []
    for c in candidates:
        if os.sep in c and not explicit and not os.path.exists(c):
            tried.append((c, "no such file"))
            continue
        try:
            cdll = ctypes.CDLL(c)
        except OSError as exc:
            tried.append((c, str(exc)))
            continue
        return cdll, (c if explicit else loaded_path(cdll, c))
    var = LIBRARIES[name][2]
    if explicit:
        raise LibraryNotFoundError(name, [(f"{var}={candidates[0]}", tried[0][1])], hint)
    raise LibraryNotFoundError(name, tried, hint)


def _load() -> tuple[ctypes.CDLL, str]:
    return _load_named("bosch")


lib, library_path = _load()
#: The real file of the loaded libbosch (library_path may be a soname or relative).
library_file = loaded_path(lib, library_path)

# --------------------------------------------------------------------------
# Callback types (C function pointer typedefs of the headers).
# Pointers that the binding only reads as raw memory are declared c_void_p
# (they arrive as plain ints, cheaper than pointer objects).
# --------------------------------------------------------------------------
# int (*bosch_eval_fn)(const uint8_t *mask, size_t units, double *score, void *user)
EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_double_p, c_void_p)
# int (*bosch_batch_eval_fn)(const uint8_t *masks, size_t n, size_t units, double *scores, void *user)
BATCH_EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_size_t, c_double_p, c_void_p)
# int (*bosch_request_eval_fn)(const uint8_t *mask, size_t units, double fidelity,
#                              uint32_t draw, double *score, void *user)
REQUEST_EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_double, c_uint32, c_double_p, c_void_p)
# int (*bosch_request_batch_eval_fn)(const uint8_t *masks, const double *fidelity,
#                                    const uint32_t *draws, size_t n, size_t units,
#                                    double *scores, void *user)
REQUEST_BATCH_EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_double_p, c_uint32_p, c_size_t, c_size_t,
                                  c_double_p, c_void_p)
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
    # confirmation draws and multi-fidelity screening
    "bosch_set_confirm": (c_int, [H, c_uint32]),
    "bosch_set_confirm_top": (c_int, [H, c_uint32]),
    "bosch_set_screen_fidelity": (c_int, [H, c_double]),
    # the flip sweep at the end of stage 3
    "bosch_set_sweep_pairs": (c_int, [H, c_uint32]),
    "bosch_set_sweep_gap": (c_int, [H, c_double]),
    # the stopping rule
    "bosch_set_stop_tolerance": (c_int, [H, c_double]),
    "bosch_set_priors": (c_int, [H, c_double_p, c_size_t]),
    "bosch_get_priors": (c_size_t, [H, c_double_p, c_size_t]),
    "bosch_set_run_identity": (c_int, [H, c_char_p, c_char_p]),
    "bosch_get_run_identity": (c_char_p, [H, c_char_p]),
    "bosch_set_option": (c_int, [H, c_char_p, c_char_p]),
    "bosch_get_option": (c_int, [H, c_char_p, ctypes.c_char_p, c_size_t]),
    # typed options and the option table
    "bosch_set_option_uint": (c_int, [H, c_char_p, c_uint64]),
    "bosch_set_option_double": (c_int, [H, c_char_p, c_double]),
    "bosch_get_option_uint": (c_int, [H, c_char_p, c_uint64_p]),
    "bosch_get_option_double": (c_int, [H, c_char_p, c_double_p]),
    "bosch_option_count": (c_size_t, []),
    "bosch_option_name": (c_char_p, [c_size_t]),
    "bosch_option_type": (c_int, [c_char_p]),
    "bosch_option_doc": (c_char_p, [c_char_p]),
    "bosch_option_default": (c_char_p, [c_char_p]),
    "bosch_option_range": (c_int, [c_char_p, c_double_p, c_double_p]),
    "bosch_option_choices": (c_char_p, [c_char_p]),
    "bosch_set_log": (c_int, [H, LOG_FN, c_void_p, c_int]),
    "bosch_set_progress": (c_int, [H, PROGRESS_FN, c_void_p]),
    "bosch_progress_stage": (c_int, [H]),
    "bosch_progress_evaluations": (c_uint64, [H]),
    "bosch_progress_budget": (c_uint64, [H]),
    "bosch_progress_best_score": (c_double, [H]),
    "bosch_progress_layers": (c_uint32, [H]),
    "bosch_progress_layer_ratios": (c_int, [H, c_double_p, c_size_t]),
    "bosch_progress_working_mask": (c_int, [H, c_uint8_p, c_size_t]),
    "bosch_progress_best_mask": (c_int, [H, c_uint8_p, c_size_t]),
    "bosch_progress_elapsed": (c_double, [H]),
    "bosch_progress_rate": (c_double, [H]),
    "bosch_progress_eta": (c_double, [H]),
    "bosch_progress_replayed": (c_uint64, [H]),
    "bosch_set_evaluator": (c_int, [H, EVAL_FN, c_void_p]),
    "bosch_set_batch_evaluator": (c_int, [H, BATCH_EVAL_FN, c_void_p]),
    "bosch_set_request_evaluator": (c_int, [H, REQUEST_EVAL_FN, c_void_p]),
    "bosch_set_request_batch_evaluator": (c_int, [H, REQUEST_BATCH_EVAL_FN, c_void_p]),
    "bosch_optimize": (c_int, [H]),
    "bosch_force_stop": (None, [H]),
    "bosch_set_threads": (c_int, [H, c_uint32]),
    "bosch_set_evaluator_thread_safe": (c_int, [H, c_int]),
    "bosch_set_journal": (c_int, [H, c_char_p, c_int]),
    "bosch_set_journal_sync": (c_int, [H, c_int]),
    "bosch_set_raw_scores": (c_int, [H, c_int]),
    "bosch_set_anchor_tolerance": (c_int, [H, c_double]),
    "bosch_evaluator_status": (c_int, [H]),
    "bosch_ask": (c_int, [H, c_size_t_p]),
    "bosch_candidate": (c_int, [H, c_size_t, c_void_p]),
    # (opt, i, double *fidelity, uint32_t *draw)
    "bosch_candidate_request": (c_int, [H, c_size_t, c_double_p, c_uint32_p]),
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
    "bosch_result_confirmations": (c_uint32, [H]),
    "bosch_result_score_stderr": (c_double, [H]),
    "bosch_result_search_score": (c_double, [H]),
    "bosch_result_cost": (c_double, [H]),
    "bosch_result_evaluations": (c_uint64, [H, c_int]),
    "bosch_result_replayed": (c_uint64, [H]),
    "bosch_result_history_size": (c_size_t, [H]),
    "bosch_result_history_entry": (c_int, [H, c_size_t, c_void_p, c_double_p, c_int_p]),
    # (r, i, double *fidelity, uint32_t *draw)
    "bosch_result_history_request": (c_int, [H, c_size_t, c_double_p, c_uint32_p]),
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
    "bosch_subproblem_history_count": (c_size_t, [H]),
    "bosch_subproblem_history": (c_int, [H, c_size_t, c_void_p, c_double_p]),
    "bosch_subproblem_prior": (c_int, [H, c_double_p]),
    "bosch_subproblem_set_prior": (c_int, [H, c_double_p]),
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
    # (a, b, double *per_layer, layers, double *overall)
    "bosch_selection_overlap": (c_int, [H, H, c_double_p, c_size_t, c_double_p]),
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
    # exports (docs/export.md)
    "bosch_selection_is_layer_level": (c_int, [H]),
    "bosch_selection_project_layers": (H, [H]),
    "bosch_selection_export_duo": (c_int, [H, c_char_p]),
    "bosch_selection_export_hf": (c_int, [H, c_char_p, c_char_p]),
    # (s, model_dir, out_dir, unsigned flags, size_t *linked, size_t *kept)
    "bosch_selection_export_hf_dir": (c_int, [H, c_char_p, c_char_p, ctypes.c_uint, c_size_t_p,
                                              c_size_t_p]),
    # (s, model_config, max_seq_len, path)
    "bosch_selection_export_trtllm": (c_int, [H, c_char_p, c_uint64, c_char_p]),
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
    # (tb, mask, fidelity, draw, double *score)
    "bosch_testbed_score_request": (c_int, [H, c_void_p, c_double, c_uint32, c_double_p]),
    # bosch_request_eval_fn / bosch_request_batch_eval_fn with the testbed as `user`
    "bosch_testbed_request_eval": (c_int, [c_void_p, c_size_t, c_double, c_uint32, c_double_p,
                                           c_void_p]),
    "bosch_testbed_request_batch_eval": (c_int, [c_void_p, c_double_p, c_uint32_p, c_size_t,
                                                 c_size_t, c_double_p, c_void_p]),
    "bosch_testbed_optimum": (c_int, [H, H, c_void_p, c_double_p]),
    "bosch_testbed_create_family": (H, [c_int, c_uint32, c_uint32, c_uint64]),
    "bosch_testbed_family": (c_int, [H]),
    "bosch_testbed_family_name": (c_char_p, [c_int]),
    "bosch_testbed_exact_optimum": (c_int, [H, H, c_void_p, c_double_p]),
}

#: Names of public functions the loaded library does not export (should be empty).
missing_symbols: list[str] = []


def _declare(cdll: ctypes.CDLL, prototypes: dict, missing: list[str]) -> None:
    for name, (restype, argtypes) in prototypes.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes


_declare(lib, _PROTOTYPES, missing_symbols)


def _c_function(name: str, proto):
    """The exported C function `name` as a function pointer of type `proto`
    (to hand library functions such as bosch_testbed_eval back to the library)."""
    return proto((name, lib))


def testbed_eval_pointer():
    return _c_function("bosch_testbed_eval", EVAL_FN)


def testbed_batch_eval_pointer():
    return _c_function("bosch_testbed_batch_eval", BATCH_EVAL_FN)


def testbed_request_eval_pointer():
    return _c_function("bosch_testbed_request_eval", REQUEST_EVAL_FN)


def testbed_request_batch_eval_pointer():
    return _c_function("bosch_testbed_request_batch_eval", REQUEST_BATCH_EVAL_FN)


def text(ptr: bytes | None) -> str:
    """Decode a ``const char *`` result (NULL -> '')."""
    if ptr is None:
        return ""
    return ptr.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------
# libbosch-text (bosch/text.h) and libbosch-torch (bosch/torch.h), loaded
# on first use. Pointers to arrays the binding fills or reads in place are
# c_void_p (ctypes arrays and numpy buffers pass as addresses).
# --------------------------------------------------------------------------
c_int32_p = POINTER(ctypes.c_int32)


class ChatMessage(ctypes.Structure):
    """struct bosch_chat_message."""
    _fields_ = [("role", c_char_p), ("content", c_char_p)]


class RulerParams(ctypes.Structure):
    """struct bosch_text_ruler_params."""
    _fields_ = [("struct_size", c_size_t), ("task", c_char_p), ("context", c_uint32),
                ("samples", c_uint32), ("seed", c_uint64), ("depth_min", c_double),
                ("depth_max", c_double), ("chat", c_int)]


TEXT_PROTOTYPES = {
    "bosch_text_create_status": (c_int, []),
    "bosch_text_create_error": (c_char_p, []),
    "bosch_text_free": (None, [c_void_p]),
    "bosch_tokenizer_open": (H, [c_char_p]),
    "bosch_tokenizer_from_json": (H, [c_char_p, c_size_t]),
    "bosch_tokenizer_free": (None, [H]),
    # (tok, text, len, flags, int32_t **ids, size_t *n)
    "bosch_tokenizer_encode": (c_int, [H, c_char_p, c_size_t, ctypes.c_uint,
                                       POINTER(c_int32_p), c_size_t_p]),
    # (tok, const int32_t *ids, n, flags, char **text, size_t *len): *text kept as
    # a void* so that it can be handed back to bosch_text_free
    "bosch_tokenizer_decode": (c_int, [H, c_void_p, c_size_t, ctypes.c_uint, c_void_pp,
                                       c_size_t_p]),
    "bosch_tokenizer_vocab_size": (c_uint32, [H]),
    "bosch_tokenizer_token_id": (ctypes.c_int32, [H, c_char_p]),
    "bosch_tokenizer_token": (c_char_p, [H, ctypes.c_int32]),
    "bosch_tokenizer_is_special": (c_int, [H, ctypes.c_int32]),
    "bosch_tokenizer_is_ordinary": (c_int, [H, ctypes.c_int32]),
    # (tok, rows, int32_t **ids, size_t *n)
    "bosch_tokenizer_stop_ids": (c_int, [H, c_uint32, POINTER(c_int32_p), c_size_t_p]),
    # (const struct bosch_chat_message *, n, flags, char **text, size_t *len)
    "bosch_chat_format_qwen3": (c_int, [POINTER(ChatMessage), c_size_t, ctypes.c_uint,
                                        c_void_pp, c_size_t_p]),
    # (tok, const int32_t **before, size_t *, const int32_t **after, size_t *)
    "bosch_tokenizer_template": (c_int, [H, POINTER(c_int32_p), c_size_t_p, POINTER(c_int32_p),
                                         c_size_t_p]),
    # enum bosch_chat_style as an int
    "bosch_chat_style_for": (c_int, [H]),
    "bosch_chat_style_name": (c_char_p, [c_int]),
    "bosch_chat_style_parse": (c_int, [c_char_p]),
    # (style, const struct bosch_chat_message *, n, flags, char **text, size_t *len)
    "bosch_chat_format": (c_int, [c_int, POINTER(ChatMessage), c_size_t, ctypes.c_uint,
                                  c_void_pp, c_size_t_p]),
    "bosch_text_task_chat_style": (c_int, [H, c_size_t]),
    "bosch_text_task_set_chat_style": (c_int, [H, c_int]),
    "bosch_text_task_read_jsonl": (H, [c_char_p]),
    "bosch_text_task_write_jsonl": (c_int, [H, c_char_p]),
    "bosch_text_task_samples": (c_size_t, [H]),
    # (t, i, chat_flags, char **text, size_t *len)
    "bosch_text_task_prompt": (c_int, [H, c_size_t, ctypes.c_uint, c_void_pp, c_size_t_p]),
    "bosch_text_task_answers": (c_size_t, [H, c_size_t]),
    "bosch_text_task_answer": (c_char_p, [H, c_size_t, c_size_t]),
    "bosch_text_task_target": (c_char_p, [H, c_size_t]),
    "bosch_text_task_max_new_tokens": (c_uint32, [H, c_size_t]),
    "bosch_text_task_free": (None, [H]),
    "bosch_text_match_all": (c_double, [c_char_p, POINTER(c_char_p), c_size_t]),
    "bosch_text_ruler_task_name": (c_char_p, [c_size_t]),
    "bosch_text_ruler_params_init": (None, [POINTER(RulerParams)]),
    "bosch_text_ruler_create": (H, [H, POINTER(RulerParams)]),
}

class Generation(ctypes.Structure):
    """struct bosch_torch_generation."""
    _fields_ = [("struct_size", c_size_t), ("kv_bytes", c_uint64), ("kv_bytes_full", c_uint64),
                ("prefill_seconds", c_double), ("decode_seconds", c_double),
                ("new_tokens", c_uint32)]


class CheckpointParams(ctypes.Structure):
    """struct bosch_torch_checkpoint_params."""
    _fields_ = [("struct_size", c_size_t), ("device", c_char_p), ("dtype", c_int),
                ("tokenizer", c_char_p), ("task", c_char_p), ("role", c_int),
                ("context", c_uint32), ("samples", c_uint32), ("needles", c_uint32),
                ("key_len", c_uint32), ("value_len", c_uint32), ("seed", c_uint64)]


TORCH_PROTOTYPES = {
    "bosch_torch_cuda_available": (c_int, []),
    "bosch_torch_cuda_device_count": (c_uint32, []),
    "bosch_torch_set_threads": (c_int, [c_uint32]),
    "bosch_torch_threads": (c_uint32, []),
    "bosch_torch_create_status": (c_int, []),
    "bosch_torch_create_error": (c_char_p, []),
    # model
    "bosch_torch_model_open": (H, [c_char_p, c_int, c_int]),
    "bosch_torch_model_open_device": (H, [c_char_p, c_char_p, c_int]),
    # (m, uint64_t *param_bytes, int *dtype)
    "bosch_torch_model_memory": (c_int, [H, c_uint64_p, c_int_p]),
    "bosch_torch_model_device": (c_char_p, [H]),
    "bosch_torch_dtype_name": (c_char_p, [c_int]),
    "bosch_torch_model_free": (None, [H]),
    "bosch_torch_model_last_error": (c_char_p, [H]),
    # (m, uint32_t *layers, *kv_groups, *heads_per_group, *vocab)
    "bosch_torch_model_shape": (c_int, [H, c_uint32_p, c_uint32_p, c_uint32_p, c_uint32_p]),
    "bosch_torch_model_problem": (H, [H]),
    # hybrid checkpoints: the config's sliding window (0: none) and sliding layers
    "bosch_torch_model_sliding_window": (c_uint32, [H]),
    "bosch_torch_model_layer_sliding": (c_int, [H, c_uint32]),
    # the config's max_position_embeddings (0: none): generate's bound
    "bosch_torch_model_max_positions": (c_uint64, [H]),
    # mixture of experts: (m, uint32_t *experts, *per_token, *sparse_layers)
    "bosch_torch_model_experts": (c_int, [H, c_uint32_p, c_uint32_p, c_uint32_p]),
    # (m, const int32_t *tokens, batch, len, const uint8_t *masks, window, sink,
    #  const int32_t *positions, npos, float *logits)
    "bosch_torch_model_forward": (c_int, [H, c_void_p, c_size_t, c_size_t, c_void_p, c_uint32,
                                          c_uint32, c_void_p, c_size_t, c_void_p]),
    # (m, const uint8_t *mask, units, window, sink, const int32_t *prompt, n_prompt, max_new,
    #  const int32_t *stop, n_stop, int32_t *out, size_t *n_out, struct generation *info)
    "bosch_torch_generate": (c_int, [H, c_void_p, c_size_t, c_uint32, c_uint32, c_void_p,
                                     c_size_t, c_uint32, c_void_p, c_size_t, c_void_p,
                                     c_size_t_p, c_void_p]),
    # the same without the info struct
    "bosch_torch_generate_reference": (c_int, [H, c_void_p, c_size_t, c_uint32, c_uint32,
                                               c_void_p, c_size_t, c_uint32, c_void_p, c_size_t,
                                               c_void_p, c_size_t_p]),
    # tasks
    "bosch_torch_task_read_jsonl": (H, [c_char_p]),
    # (vocab, context, samples, needles, key_len, value_len, depth_min, depth_max, seed)
    "bosch_torch_task_create_niah": (H, [c_uint32, c_uint32, c_uint32, c_uint32, c_uint32,
                                         c_uint32, c_double, c_double, c_uint64]),
    # (const int32_t *filler, n_filler, key_marker, value_marker, query_marker, context,
    #  samples, needles, key_len, value_len, depth_min, depth_max, seed)
    "bosch_torch_task_create_niah_ids": (H, [c_void_p, c_size_t, ctypes.c_int32,
                                             ctypes.c_int32, ctypes.c_int32, c_uint32, c_uint32,
                                             c_uint32, c_uint32, c_uint32, c_double, c_double,
                                             c_uint64]),
    "bosch_torch_task_from_text": (H, [H, H, ctypes.c_uint]),
    "bosch_torch_task_write_jsonl": (c_int, [H, c_char_p]),
    "bosch_torch_task_samples": (c_size_t, [H]),
    "bosch_torch_task_prompt_len": (c_size_t, [H]),
    "bosch_torch_task_prompt_len_of": (c_size_t, [H, c_size_t]),
    # (t, i, const int32_t **prompt, size_t *n_prompt, const int32_t **answer,
    #  size_t *n_answer, uint32_t *max_new)
    "bosch_torch_task_sample": (c_int, [H, c_size_t, c_void_p, c_size_t_p, c_void_p, c_size_t_p,
                                        c_uint32_p]),
    "bosch_torch_task_tokenizer": (H, [H]),
    "bosch_torch_task_free": (None, [H]),
    # evaluator
    "bosch_torch_evaluator_open": (H, [H, H, c_uint32, c_uint32, c_int]),
    "bosch_torch_evaluator_free": (None, [H]),
    "bosch_torch_evaluator_set_batch": (c_int, [H, c_uint32]),
    "bosch_torch_evaluator_set_buckets": (c_int, [H, c_uint32]),
    "bosch_torch_evaluator_set_prefix_cache": (c_int, [H, c_int]),
    "bosch_torch_evaluator_set_reference": (c_int, [H, c_uint8_p, c_size_t]),
    "bosch_torch_evaluator_set_screen_task": (c_int, [H, H]),
    "bosch_torch_model_identity": (c_char_p, [H]),
    "bosch_torch_evaluator_identify": (c_int, [H, H]),
    "bosch_torch_evaluator_identity": (c_char_p, [H]),
    "bosch_torch_evaluator_noise": (c_int, [H, c_double_p]),
    # bosch_batch_eval_fn: (const uint8_t *masks, n, units, double *scores, void *evaluator)
    "bosch_torch_batch_eval": (c_int, [c_void_p, c_size_t, c_size_t, c_double_p, c_void_p]),
    # bosch_request_batch_eval_fn: (const uint8_t *masks, const double *fidelity,
    #   const uint32_t *draws, n, units, double *scores, void *evaluator)
    "bosch_torch_request_batch_eval": (c_int, [c_void_p, c_double_p, c_uint32_p, c_size_t,
                                               c_size_t, c_double_p, c_void_p]),
    "bosch_torch_evaluator_last_error": (c_char_p, [H]),
    "bosch_torch_evaluator_set_forward_samples": (c_int, [H, c_uint32]),
    # bosch_mpi_sample_count_fn / bosch_mpi_sample_eval_fn with the evaluator as `user`
    "bosch_torch_request_samples": (c_size_t, [c_double, c_void_p]),
    "bosch_torch_sample_eval": (c_int, [c_void_p, c_double, c_uint32, c_size_t, c_size_t,
                                        c_size_t, c_double_p, c_void_p]),
    # checkpoint directory
    "bosch_torch_checkpoint_params_init": (None, [POINTER(CheckpointParams)]),
    "bosch_torch_checkpoint_open": (H, [c_char_p, POINTER(CheckpointParams)]),
    "bosch_torch_checkpoint_free": (None, [H]),
    "bosch_torch_checkpoint_model": (H, [H]),
    "bosch_torch_checkpoint_tokenizer": (H, [H]),
    "bosch_torch_checkpoint_task": (H, [H]),
    "bosch_torch_checkpoint_task_at": (H, [H, c_uint32]),
    "bosch_torch_checkpoint_read_task": (H, [H, c_char_p]),
    "bosch_torch_checkpoint_dir": (c_char_p, [H]),
    "bosch_torch_checkpoint_task_source": (c_char_p, [H]),
    "bosch_torch_checkpoint_tokenizer_path": (c_char_p, [H]),
    "bosch_torch_checkpoint_describe": (c_char_p, [H]),
    "bosch_torch_checkpoint_suggested": (c_int, [H, c_char_p, POINTER(ctypes.c_int64)]),
    "bosch_torch_checkpoint_suggested_file": (c_char_p, [H, c_char_p]),
    # static scores
    "bosch_torch_scorer_name": (c_char_p, [c_int]),
    # (m, t, scorer, window, sink, double *head_scores, double *unit_scores)
    "bosch_torch_model_scores": (c_int, [H, H, c_int, c_uint32, c_uint32, c_void_p, c_void_p]),
}

#: const char *(*)(void *user): an evaluator's last error (bosch_mpi_error_fn).
MPI_ERROR_FN = CFUNCTYPE(c_char_p, c_void_p)

# libbosch-mpi (bosch/mpi.h). MPI_Comm travels as c_void_p: Open MPI's
# communicators are pointers (bosch.mpi checks mpi4py's size of one).
# bosch_mpi_sample_count_fn, bosch_mpi_sample_eval_fn, bosch_mpi_reference_fn (bosch/mpi.h)
SAMPLE_COUNT_FN = CFUNCTYPE(c_size_t, c_double, c_void_p)
SAMPLE_EVAL_FN = CFUNCTYPE(c_int, c_void_p, c_double, c_uint32, c_size_t, c_size_t, c_size_t,
                           c_double_p, c_void_p)
REFERENCE_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)
# bosch_mpi_identity_fn: returns a char * (c_void_p, so that a Python
# callback can return the address of a buffer it keeps alive).
IDENTITY_FN = CFUNCTYPE(c_void_p, c_void_p)


class MpiEvaluator(ctypes.Structure):
    """struct bosch_mpi_evaluator (bosch/mpi.h), field for field."""
    _fields_ = [("struct_size", c_size_t), ("eval", REQUEST_BATCH_EVAL_FN),
                ("error", MPI_ERROR_FN), ("user", c_void_p), ("samples", SAMPLE_COUNT_FN),
                ("sample_eval", SAMPLE_EVAL_FN), ("reference", REFERENCE_FN),
                ("identity", IDENTITY_FN)]


MPI_PROTOTYPES = {
    # (comm, units, eval, user, error, ready, why, flags)
    "bosch_mpi_coordinator_create": (H, [c_void_p, c_size_t, REQUEST_BATCH_EVAL_FN, c_void_p,
                                         MPI_ERROR_FN, c_int, c_char_p, ctypes.c_uint]),
    "bosch_mpi_request_batch_eval": (c_int, [c_void_p, c_double_p, c_uint32_p, c_size_t,
                                             c_size_t, c_double_p, c_void_p]),
    # (c, int *ranks, uint64_t *counts, n_counts)
    "bosch_mpi_coordinator_stats": (c_int, [H, c_int_p, c_uint64_p, c_size_t]),
    "bosch_mpi_coordinator_last_error": (c_char_p, [H]),
    "bosch_mpi_coordinator_free": (None, [H]),
    # (comm, units, eval, user, error, ready, why)
    "bosch_mpi_worker_run": (c_int, [c_void_p, c_size_t, REQUEST_BATCH_EVAL_FN, c_void_p,
                                     MPI_ERROR_FN, c_int, c_char_p]),
    # (comm, units, const struct bosch_mpi_evaluator *, ready, why, flags)
    "bosch_mpi_coordinator_open": (H, [c_void_p, c_size_t, POINTER(MpiEvaluator), c_int,
                                       c_char_p, ctypes.c_uint]),
    "bosch_mpi_coordinator_set_reference": (c_int, [H, c_uint8_p, c_size_t]),
    # (comm, units, const struct bosch_mpi_evaluator *, ready, why)
    "bosch_mpi_worker_serve": (c_int, [c_void_p, c_size_t, POINTER(MpiEvaluator), c_int,
                                       c_char_p]),
    "bosch_mpi_create_status": (c_int, []),
    "bosch_mpi_create_error": (c_char_p, []),
}

#: Functions of TEXT_PROTOTYPES / TORCH_PROTOTYPES the loaded library lacks.
missing_text_symbols: list[str] = []
missing_torch_symbols: list[str] = []

_lazy_lock = threading.Lock()
_lazy: dict[str, tuple[ctypes.CDLL, str]] = {}
_lazy_errors: dict[str, LibraryNotFoundError] = {}


def _lazy_load(name: str, prototypes: dict, missing: list[str], hint: str):
    with _lazy_lock:
        if name in _lazy:
            return _lazy[name]
        if name in _lazy_errors:  # lookups are not repeated: the same error again
            raise _lazy_errors[name]
        try:
            cdll, path = _load_named(name, os.path.dirname(library_file)
                                     if os.path.isabs(library_file) else None, hint)
        except LibraryNotFoundError as exc:
            _lazy_errors[name] = exc
            raise
        _declare(cdll, prototypes, missing)
        _lazy[name] = (cdll, path)
        return cdll, path


def load_text() -> tuple[ctypes.CDLL, str]:
    """libbosch-text (loaded once) and its path; LibraryNotFoundError when absent."""
    return _lazy_load("bosch-text", TEXT_PROTOTYPES, missing_text_symbols,
                      "libbosch-text is built with libbosch (lib/text); install it beside "
                      "libbosch.")


def _thread_policy_env() -> None:
    """The CPU thread policy of the torch backend (docs/torch.md, "Threads"),
    as the bosch command applies it: libtorch's OpenMP pool sized to the CPUs
    this process may use, libgomp's and OpenBLAS's threads sleeping when idle.
    Only the environment sets these and the libraries read it when they load,
    so it is set here, before libbosch-torch (and with it libtorch) loads; it
    has no effect when torch was imported first. A variable already set is
    kept; BOSCH_THREAD_POLICY=0 leaves the environment alone."""
    if os.environ.get("BOSCH_THREAD_POLICY") == "0":
        return
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, cpus)))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def load_torch() -> tuple[ctypes.CDLL, str]:
    """libbosch-torch (loaded once, after libbosch-text, which it links) and its
    path; LibraryNotFoundError when absent. Applies the thread policy's
    environment first (_thread_policy_env)."""
    load_text()
    _thread_policy_env()
    return _lazy_load("bosch-torch", TORCH_PROTOTYPES, missing_torch_symbols,
                      "libbosch-torch is built only when meson finds libtorch "
                      "(meson setup -Dtorch=enabled; docs/torch.md).")


missing_mpi_symbols: list[str] = []


def load_mpi() -> tuple[ctypes.CDLL, str]:
    """libbosch-mpi (loaded once) and its path; LibraryNotFoundError when absent."""
    return _lazy_load("bosch-mpi", MPI_PROTOTYPES, missing_mpi_symbols,
                      "libbosch-mpi is built only when meson finds MPI (Debian: "
                      "libopenmpi-dev; docs/mpi.md).")


def mpi_request_batch_eval_pointer():
    """bosch_mpi_request_batch_eval as a bosch_request_batch_eval_fn pointer."""
    return REQUEST_BATCH_EVAL_FN(("bosch_mpi_request_batch_eval", load_mpi()[0]))


def torch_sample_pointers():
    """(bosch_torch_request_samples, bosch_torch_sample_eval) as libbosch-mpi's
    sample count and sample evaluation callbacks."""
    cdll = load_torch()[0]
    return (SAMPLE_COUNT_FN(("bosch_torch_request_samples", cdll)),
            SAMPLE_EVAL_FN(("bosch_torch_sample_eval", cdll)))


def torch_evaluator_error_pointer():
    """bosch_torch_evaluator_last_error as a bosch_mpi_error_fn pointer."""
    return MPI_ERROR_FN(("bosch_torch_evaluator_last_error", load_torch()[0]))


def torch_evaluator_identity_pointer():
    """bosch_torch_evaluator_identity as a bosch_mpi_identity_fn pointer."""
    return IDENTITY_FN(("bosch_torch_evaluator_identity", load_torch()[0]))


def torch_batch_eval_pointer():
    """bosch_torch_batch_eval as a bosch_batch_eval_fn pointer (for bosch_set_batch_evaluator)."""
    return BATCH_EVAL_FN(("bosch_torch_batch_eval", load_torch()[0]))


def torch_request_batch_eval_pointer():
    """bosch_torch_request_batch_eval as a bosch_request_batch_eval_fn pointer (for
    bosch_set_request_batch_evaluator). AttributeError naming the symbol when the
    loaded libbosch-torch predates it."""
    cdll = load_torch()[0]
    if "bosch_torch_request_batch_eval" in missing_torch_symbols:
        raise AttributeError("the loaded libbosch-torch has no bosch_torch_request_batch_eval "
                             "(built before evaluation requests): rebuild it")
    return REQUEST_BATCH_EVAL_FN(("bosch_torch_request_batch_eval", cdll))
