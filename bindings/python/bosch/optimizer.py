"""bosch.Optimizer: the BOSCH search driven by Python callbacks or by ask/tell.

Mask conventions of this module:
  * candidates handed to Python (evaluator arguments, ``ask()``) are ``bytes``
    objects of ``units`` bytes, each 0 (full attention) or 1 (SWA); index them
    like a list of ints, ``list(m)`` gives a list;
  * masks in results (``Result.mask``, ``HistoryRecord.mask`` ...) are lists of 0/1 ints.

Evaluation requests: with ``screen_fidelity`` < 1 (multi-fidelity screening)
or ``confirm`` > 0 (confirmation draws) a candidate comes with a request, a
fidelity in (0, 1] (the share of the calibration samples to score on) and a
draw (0 for a mask's first evaluation, 1, 2, ... for its confirmation draws,
to be scored independently of draw 0). Request evaluators
(:meth:`Optimizer.set_request_evaluator` / ``set_request_batch_evaluator``)
receive them; in ask/tell mode :meth:`Optimizer.candidate_request` gives them.
"""

from __future__ import annotations

import ctypes
import enum
import os

from ._callbacks import (LogLevel, _CallbackState, _make_batch_eval, _make_eval, _make_log,
                         _make_progress, _make_request_batch_eval, _make_request_eval)
from ._handle import Handle
from ._lib import (BATCH_EVAL_FN, EVAL_FN, LOG_FN, PROGRESS_FN, REQUEST_BATCH_EVAL_FN,
                   REQUEST_EVAL_FN, lib, testbed_batch_eval_pointer, testbed_eval_pointer,
                   testbed_request_batch_eval_pointer, testbed_request_eval_pointer, text)
from ._masks import _NORM, double_array
from ._options import (OPTION_BOOL, OPTION_DOUBLE, OPTION_UINT, OptionInfo, _format_option,
                       install_option_properties, options)
from .errors import (ErrorCode, EvaluatorError, check_status, err_name, error_for_status,
                     strerror)
from .problem import Problem
from .result import (STAGES, HistoryRecord, Progress, Result, Stage, Variant, _read_result,
                     _ResultHandle, stage_name, variant_name)
from .strategy import Strategy
from .testbed import Testbed

__all__ = ["Optimizer", "Result", "Progress", "HistoryRecord", "Stage", "Variant", "LogLevel",
           "JournalMode", "stage_name", "variant_name", "STAGES", "OptionInfo", "options"]


class JournalMode(enum.IntEnum):
    """enum bosch_journal_mode"""
    CREATE = 0   # start a new journal (an existing file is replaced)
    RESUME = 1   # the file must exist: replay it, then append
    AUTO = 2     # resume when the file exists, else create



_JOURNAL_MODES = {"create": JournalMode.CREATE, "resume": JournalMode.RESUME,
                  "auto": JournalMode.AUTO}

_STRATEGY_OPTIONS = {"strategy": -1, "probe_strategy": int(Stage.PROBE),
                     "group_strategy": int(Stage.GROUP)}




class Optimizer(Handle):
    """The BOSCH search on a copy of `problem`.

    Keyword options are applied in order through :meth:`set_option` (the
    library's options, listed below from its table; ``journal`` is a path,
    mode 'auto', None disables it), plus ``anchors=(s_full, s_allswa)``.
    Strategy options also accept a :class:`bosch.Strategy` object (or None
    for the default).

    ``threads=N`` evaluates up to N candidates of a batch at once; a Python
    evaluator runs concurrently only when declared thread-safe
    (``optimize(..., evaluator_thread_safe=True)``), and then still holds the
    GIL while it runs Python code (useful when it waits on I/O, a GPU or a
    subprocess). Results never depend on ``threads``. ``journal=path`` (or
    :meth:`set_journal`) records every evaluation so that a killed run can
    be resumed with identical results.

    Two ways to evaluate:
      * ``optimize(evaluator=f)`` with ``f(mask: bytes) -> float`` or
        ``optimize(batch_evaluator=g)`` with ``g(masks: list[bytes]) -> list[float]``;
        a :class:`bosch.Testbed` may be passed as either, and is then called
        directly by the library (no Python in the loop);
      * evaluators that read the request (needed for ``screen_fidelity``
        < 1, useful with ``confirm``): ``optimize(request_evaluator=f)`` with
        ``f(mask: bytes, fidelity: float, draw: int) -> float`` or
        ``optimize(request_batch_evaluator=g)`` with ``g(masks, fidelities,
        draws) -> list[float]`` (a Testbed too);
      * the ask/tell loop::

            while batch := opt.ask():
                for i, mask in enumerate(batch):
                    opt.tell(i, score(mask))   # or score(mask, *opt.candidate_request(i))
            result = opt.result()

    Higher scores are better. Exceptions raised by Python callbacks stop the
    search and are re-raised (unchanged, with their traceback) once the C call
    returns; the best-so-far result stays available through :meth:`result`.
    """

    _kind = "optimizer"

    def __init__(self, problem: Problem, **options):
        if not isinstance(problem, Problem):
            raise TypeError("problem must be a bosch.Problem")
        h = lib.bosch_optimizer_create(problem._handle)
        if not h:
            raise error_for_status(ErrorCode.E_NOMEM, "bosch_optimizer_create failed")
        super().__init__(h)
        self._state = _CallbackState()
        self._state.handle = h
        self._units = problem.n_units
        self._layers = problem.layers
        self._query_heads = problem.n_query_heads
        self._keep: dict[str, object] = {}     # CFUNCTYPE objects / testbeds C may use
        self._strategies: dict[int, Strategy] = {}
        self._evaluator_kind: str | None = None
        self._status = 0
        for name, value in options.items():
            self.set_option(name, value)

    # -- lifetime (close, with, garbage collection: the Handle base) ------------
    def _free(self, h) -> None:
        state = getattr(self, "_state", None)
        if state is not None:
            state.handle = None
        lib.bosch_optimizer_free(h)
        # Only now may the callbacks be released.
        keep = getattr(self, "_keep", None)
        if keep is not None:
            keep.clear()

    def __repr__(self) -> str:
        state = "closed" if not self._h else (
            f"status={err_name(self._status)}" if self._status else "not finished")
        return f"<bosch.Optimizer units={self._units} layers={self._layers} {state}>"

    def _last_error(self) -> str:
        return text(lib.bosch_optimizer_last_error(self._h)) if self._h else ""

    def _check(self, status: int) -> int:
        return check_status(status, self._last_error)

    @staticmethod
    def _check_const(status: int, context: str) -> int:
        # Functions taking a `const bosch_optimizer *` cannot record a message
        # (bosch_optimizer_last_error would still show an older one): use our own text.
        if status < 0:
            raise error_for_status(status, f"{context}: {strerror(status)}")
        return status

    @property
    def last_error(self) -> str:
        """bosch_optimizer_last_error of the handle ('' if none)."""
        return self._last_error()

    @property
    def units(self) -> int:
        return self._units

    @property
    def layers(self) -> int:
        return self._layers

    # -- options ----------------------------------------------------------------
    def set_option(self, name: str, value) -> "Optimizer":
        """bosch_set_option with `value` converted to text (ints, floats,
        strings, Variant; Strategy objects for the strategy options;
        ``anchors`` takes a pair)."""
        if name == "anchors":
            s_full, s_allswa = value
            return self.set_anchors(s_full, s_allswa)
        if name in _STRATEGY_OPTIONS and (value is None or isinstance(value, Strategy)):
            return self.set_strategy(value, _STRATEGY_OPTIONS[name])
        if name == "journal" and value is None:
            return self.set_journal(None)
        self._check(lib.bosch_set_option(self._handle, name.encode(),
                                         _format_option(value).encode()))
        if name in _STRATEGY_OPTIONS:  # a built-in chosen by name replaces a Python one
            for st in ((1, 3) if _STRATEGY_OPTIONS[name] == -1 else (_STRATEGY_OPTIONS[name],)):
                self._strategies.pop(st, None)
        return self

    def set_options(self, **options) -> "Optimizer":
        for name, value in options.items():
            self.set_option(name, value)
        return self

    def get_option(self, name: str) -> str:
        """Current value of an option, as the library's text."""
        size = 128
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self._check_const(lib.bosch_get_option(self._handle, name.encode(), buf, size),
                                  f"get_option({name!r})")
            if n < size:
                return buf.value.decode("utf-8", errors="replace")
            size = n + 1

    def get_option_value(self, name: str):
        """Current value of an option, typed by the option table: int for
        uint options, bool for bool ones, float for double ones, str otherwise
        (bosch_get_option_uint / _double / bosch_get_option)."""
        kind = lib.bosch_option_type(name.encode())
        if kind in (OPTION_UINT, OPTION_BOOL):
            v = ctypes.c_uint64(0)
            self._check_const(lib.bosch_get_option_uint(self._handle, name.encode(),
                                                        ctypes.byref(v)), f"get_option({name!r})")
            return bool(v.value) if kind == OPTION_BOOL else v.value
        if kind == OPTION_DOUBLE:
            d = ctypes.c_double(0)
            self._check_const(lib.bosch_get_option_double(self._handle, name.encode(),
                                                          ctypes.byref(d)), f"get_option({name!r})")
            return d.value
        return self.get_option(name)

    def set_run_identity(self, key: str, value: str | None) -> "Optimizer":
        """What identifies the run beyond the optimizer's settings (model,
        task, evaluator parameters): journaled as "identity.<key>", so a
        resume with another value is refused naming the key
        (bosch_set_run_identity). None removes the key."""
        self._check(lib.bosch_set_run_identity(
            self._handle, key.encode(), None if value is None else str(value).encode()))
        return self

    def get_run_identity(self, key: str) -> str | None:
        """The value set for `key`, None when unset."""
        v = lib.bosch_get_run_identity(self._handle, key.encode())
        return None if v is None else v.decode()

    def set_priors(self, importance) -> "Optimizer":
        """Per-unit priors the host already has (FISHER, single-unit ablation):
        one finite value per unit, higher = more harm when the unit becomes
        SWA (bosch_set_priors). The default strategy evaluates their static
        mask first in each subproblem and learns how far to trust them.
        None clears them."""
        if importance is None:
            self._check(lib.bosch_set_priors(self._handle, None, 0))
            return self
        vals = list(importance)
        self._check(lib.bosch_set_priors(self._handle, double_array(vals, len(vals), "priors"),
                                         len(vals)))
        return self

    def priors(self) -> list[float] | None:
        """The priors set (bosch_get_priors), or None."""
        n = lib.bosch_get_priors(self._handle, None, 0)
        if n == 0:
            return None
        arr = (ctypes.c_double * n)()
        lib.bosch_get_priors(self._handle, arr, n)
        return list(arr)

    def set_anchors(self, s_full: float, s_allswa: float) -> "Optimizer":
        """Supply S_full and S_allSWA instead of evaluating them."""
        self._check(lib.bosch_set_anchors(self._handle, float(s_full), float(s_allswa)))
        return self

    def set_stage_budget(self, stage, evaluations: int) -> "Optimizer":
        self._check(lib.bosch_set_stage_budget(self._handle, _stage_code(stage),
                                               int(evaluations)))
        return self

    def set_strategy(self, strategy, stage=-1) -> "Optimizer":
        """Strategy (Strategy object, built-in name, or None = default) for
        stage 'probe', 'group' or both (-1)."""
        st = -1 if stage in (-1, None, "both") else _stage_code(stage)
        if isinstance(strategy, str):
            strategy = Strategy(strategy)
        self._check(lib.bosch_set_strategy(self._handle, st,
                                           None if strategy is None else strategy._handle))
        for s in ((1, 3) if st == -1 else (st,)):
            if strategy is None or strategy._py is None:
                self._strategies.pop(s, None)
            else:
                # the optimizer's copy calls back into strategy._py: keep it alive
                self._strategies[s] = strategy
        return self

    def set_threads(self, threads: int) -> "Optimizer":
        """Evaluate up to `threads` candidates of a batch at once (1..256)."""
        self._check(lib.bosch_set_threads(self._handle, int(threads)))
        return self

    def set_evaluator_thread_safe(self, thread_safe: bool = True) -> "Optimizer":
        """Declare whether the single-mask evaluator may run on several threads at once."""
        self._check(lib.bosch_set_evaluator_thread_safe(self._handle, 1 if thread_safe else 0))
        return self

    def set_journal(self, path, mode="auto", sync: bool = False) -> "Optimizer":
        """Journal every finished evaluation to `path` (None disables it).

        `mode`: 'create' (an existing file is replaced), 'resume' (the file
        must exist: replay it, then append) or 'auto' (resume when the file
        exists), or a :class:`JournalMode`. `sync`: fdatasync after every
        record. The journal is opened and checked when the search starts
        (optimize()/ask()), which then raises JournalMismatchError (other
        settings or version), JournalCorruptError (damaged file) or
        BoschIOError."""
        if isinstance(mode, str):
            try:
                mode = _JOURNAL_MODES[mode.lower()]
            except KeyError:
                raise ValueError(f"unknown journal mode {mode!r} "
                                 "(expected 'auto', 'create' or 'resume')") from None
        p = None if path is None else os.fsencode(os.fspath(path))
        self._check(lib.bosch_set_journal(self._handle, p, int(mode)))
        self._check(lib.bosch_set_journal_sync(self._handle, 1 if sync else 0))
        return self

    def set_raw_scores(self, raw: bool = True) -> "Optimizer":
        """Search raw scores when S_full <= S_allSWA instead of failing
        (normalized scores are then NaN); option "raw_scores"."""
        self._check(lib.bosch_set_raw_scores(self._handle, 1 if raw else 0))
        return self

    def set_anchor_tolerance(self, tolerance: float) -> "Optimizer":
        """Anchors count as ordered only when S_full - S_allSWA > tolerance
        (default 0); set it to the evaluator's numerical noise
        (:meth:`bosch.backend.Evaluator.noise`); option "anchor_tolerance"."""
        self._check(lib.bosch_set_anchor_tolerance(self._handle, float(tolerance)))
        return self

    def set_confirm(self, draws: int) -> "Optimizer":
        """Confirmation draws (option "confirm", default 0 = off): after the
        search the best mask is evaluated again `draws` times (draw 1..draws,
        full fidelity) and Result.score is the mean of those fresh draws
        (Result.search_score keeps the search's own score). The draws come
        out of the budget. A deterministic evaluator should read the draw
        (set_request_evaluator, candidate_request)."""
        self._check(lib.bosch_set_confirm(self._handle, int(draws)))
        return self

    def set_confirm_top(self, masks: int) -> "Optimizer":
        """Spread the confirmation draws over the `masks` best distinct
        feasible masks and report the best mean (option "confirm_top",
        default 1)."""
        self._check(lib.bosch_set_confirm_top(self._handle, int(masks)))
        return self

    def set_screen_fidelity(self, fidelity: float) -> "Optimizer":
        """Multi-fidelity screening of stage 3 (option "screen_fidelity",
        in (0, 1], default 1 = off): new candidates are first scored at this
        fidelity, promising ones again at full fidelity; the budget counts a
        fidelity-f evaluation as f (Result.cost). Needs a request evaluator or
        ask/tell with candidate_request (optimize() with a plain evaluator
        raises InvalidArgumentError)."""
        self._check(lib.bosch_set_screen_fidelity(self._handle, float(fidelity)))
        return self

    def set_sweep_pairs(self, pairs: int) -> "Optimizer":
        """The flip sweep at the end of stage 3 (option "sweep_pairs",
        default 40, 0 = off): when the polish is refining small effects that
        add up, the last (free units + 2 pairs, or, tested again, free
        units + pairs) evaluations score every free unit flipped alone on
        the best mask, then at most `pairs` swaps built from those exact
        effects, then rounds of at most `pairs` substitute probes and the
        swaps they predict (bosch_set_sweep_pairs)."""
        self._check(lib.bosch_set_sweep_pairs(self._handle, int(pairs)))
        return self

    def set_sweep_gap(self, gap: float) -> "Optimizer":
        """The flip sweep runs only when the median gap of the polish's recent
        candidates to the best, relative to the best, is below `gap`
        (option "sweep_gap", in [0, 1], default 0.005)."""
        self._check(lib.bosch_set_sweep_gap(self._handle, float(gap)))
        return self

    def set_stop_tolerance(self, tolerance: float) -> "Optimizer":
        """The stopping rule (option "stop_tolerance", in [0, 1], default 0 =
        off): stage 3's polish ends with StopReason.PLATEAU when the best S^'s
        gain over its recent evaluations, carried over the budget left, would
        add less than `tolerance` (bosch_set_stop_tolerance)."""
        self._check(lib.bosch_set_stop_tolerance(self._handle, float(tolerance)))
        return self

    # -- callbacks ------------------------------------------------------------------
    def _attach(self, setter, empty, fn, *, testbed_ptr, make, c_hook, kind, what):
        """Installs an evaluator through the C `setter`: a C evaluator with the
        `c_hook` attribute (bosch.backend.Evaluator), a Testbed (its C
        function `testbed_ptr()`), None (the `empty` function type: none), or
        a Python callable wrapped by `make`. `kind` names it (python-*,
        testbed-*, c-*) for optimize()'s checks."""
        c_eval = getattr(fn, c_hook, None) if c_hook else None
        if c_eval is not None:
            ptr, user = c_eval()
            self._check(setter(self._handle, ptr, user))
            self._keep["evaluator"] = (ptr, fn)
            self._evaluator_kind = "c-" + kind
        elif isinstance(fn, Testbed):
            ptr = testbed_ptr()
            self._check(setter(self._handle, ptr, fn._handle))
            self._keep["evaluator"] = (ptr, fn)
            self._evaluator_kind = "testbed-" + kind
        elif fn is None:
            self._check(setter(self._handle, empty(), None))
            self._evaluator_kind = None
        else:
            if not callable(fn):
                raise TypeError(f"{what} must be callable or a bosch.Testbed")
            cb = make(fn, self._state)
            self._check(setter(self._handle, cb, None))
            self._keep["evaluator"] = cb
            self._evaluator_kind = "python-" + kind
        return self

    def set_evaluator(self, fn, thread_safe: bool | None = None) -> "Optimizer":
        """Single-mask evaluator: ``fn(mask: bytes) -> float``, or a Testbed
        (evaluated in C). Replaces a batch evaluator.

        `thread_safe`: whether `fn` may be called on several threads at once
        when ``threads`` > 1 (bosch_set_evaluator_thread_safe). None = False
        for a Python callable, True for a Testbed (its scoring only reads)."""
        if hasattr(fn, "_c_batch_evaluator"):  # a C batch evaluator (bosch.backend.Evaluator)
            return self.set_batch_evaluator(fn)
        self._attach(lib.bosch_set_evaluator, EVAL_FN, fn, testbed_ptr=testbed_eval_pointer,
                     make=_make_eval, c_hook=None, kind="single", what="evaluator")
        if fn is not None:
            self.set_evaluator_thread_safe(isinstance(fn, Testbed) if thread_safe is None
                                           else thread_safe)
        return self

    def set_batch_evaluator(self, fn) -> "Optimizer":
        """Batch evaluator: ``fn(masks: list[bytes]) -> sequence of floats``,
        or a Testbed or a :class:`bosch.backend.Evaluator` (evaluated in C:
        bosch_testbed_batch_eval / bosch_torch_batch_eval). Replaces a single
        evaluator."""
        return self._attach(lib.bosch_set_batch_evaluator, BATCH_EVAL_FN, fn,
                            testbed_ptr=testbed_batch_eval_pointer, make=_make_batch_eval,
                            c_hook="_c_batch_evaluator", kind="batch", what="batch evaluator")

    def set_request_evaluator(self, fn, thread_safe: bool | None = None) -> "Optimizer":
        """Evaluator that reads the request: ``fn(mask: bytes, fidelity: float,
        draw: int) -> float`` (fidelity in (0, 1], the share of the
        calibration samples to score on; draw 0 for a mask's first
        evaluation, >= 1 for confirmation draws, to be scored independently),
        or a Testbed (bosch_testbed_request_eval, in C), or a
        :class:`bosch.backend.Evaluator` (its batch form). Replaces any other
        evaluator. `thread_safe` as in :meth:`set_evaluator`."""
        if hasattr(fn, "_c_request_batch_evaluator"):  # a C evaluator (bosch.backend.Evaluator)
            return self.set_request_batch_evaluator(fn)
        self._attach(lib.bosch_set_request_evaluator, REQUEST_EVAL_FN, fn,
                     testbed_ptr=testbed_request_eval_pointer, make=_make_request_eval,
                     c_hook=None, kind="request", what="request evaluator")
        if fn is not None:
            self.set_evaluator_thread_safe(isinstance(fn, Testbed) if thread_safe is None
                                           else thread_safe)
        return self

    def set_request_batch_evaluator(self, fn) -> "Optimizer":
        """Batch evaluator that reads the requests: ``fn(masks: list[bytes],
        fidelities: list[float], draws: list[int]) -> sequence of floats``
        (request i belongs to mask i), or a Testbed
        (bosch_testbed_request_batch_eval) or a :class:`bosch.backend.Evaluator`
        (bosch_torch_request_batch_eval), evaluated in C. Replaces any other
        evaluator."""
        return self._attach(lib.bosch_set_request_batch_evaluator, REQUEST_BATCH_EVAL_FN, fn,
                            testbed_ptr=testbed_request_batch_eval_pointer,
                            make=_make_request_batch_eval, c_hook="_c_request_batch_evaluator",
                            kind="request-batch", what="request batch evaluator")

    def set_progress(self, fn) -> "Optimizer":
        """``fn(progress: Progress)`` after every batch and stage change; None removes it."""
        if fn is None:
            self._check(lib.bosch_set_progress(self._handle, PROGRESS_FN(), None))
            self._keep.pop("progress", None)
        else:
            cb = _make_progress(fn, self._state, self.units)
            self._check(lib.bosch_set_progress(self._handle, cb, None))
            self._keep["progress"] = cb
        return self

    def set_log(self, fn, min_level=LogLevel.INFO) -> "Optimizer":
        """``fn(level: int, message: str)`` or a logging.Logger; None removes it."""
        if fn is None:
            self._check(lib.bosch_set_log(self._handle, LOG_FN(), None, int(min_level)))
            self._keep.pop("log", None)
        else:
            cb = _make_log(fn, self._state)
            self._check(lib.bosch_set_log(self._handle, cb, None, int(min_level)))
            self._keep["log"] = cb
        return self

    def _raise_pending(self) -> None:
        exc = self._state.take()
        for s in list(self._strategies.values()):
            sexc = s._take_exception()
            if exc is None:
                exc = sexc
        if exc is not None:
            raise exc

    def _raise_status(self, status: int) -> None:
        if status < 0:
            msg = self._last_error()
            # a C evaluator (bosch.backend.Evaluator): add its own message
            if self._evaluator_kind in ("c-batch", "c-request-batch"):
                why = self._keep["evaluator"][1]._c_last_error()
                if why and why not in msg:
                    msg = f"{msg}: {why}" if msg else why
            err = error_for_status(status, msg or None)
            if isinstance(err, EvaluatorError):
                err.evaluator_status = self.evaluator_status
            try:
                err.result = self.result()
            except Exception:  # pragma: no cover - defensive
                err.result = None
            raise err

    # -- running --------------------------------------------------------------------
    def optimize(self, evaluator=None, batch_evaluator=None, progress=None, log=None,
                 log_level=LogLevel.INFO, evaluator_thread_safe: bool | None = None,
                 request_evaluator=None, request_batch_evaluator=None) -> Result:
        """Run the whole search (bosch_optimize) and return the Result.

        Evaluators/callbacks given here replace those set before (None keeps
        them); give at most one of `evaluator`, `batch_evaluator`,
        `request_evaluator` and `request_batch_evaluator` (see the
        set_*evaluator methods). `evaluator_thread_safe` declares whether the
        single-mask evaluator (plain or request) may run on several threads
        at once (see set_evaluator; None keeps the declaration, or takes
        set_evaluator's default when an evaluator is given here). Raises the
        matching BoschError (with ``.result`` attached) on a library error,
        or re-raises the exception of a Python callback, whichever thread it
        was raised on.
        """
        given = [name for name, v in (("evaluator", evaluator),
                                      ("batch_evaluator", batch_evaluator),
                                      ("request_evaluator", request_evaluator),
                                      ("request_batch_evaluator", request_batch_evaluator))
                 if v is not None]
        if len(given) > 1:
            raise ValueError(f"give one evaluator, not {' and '.join(given)}")
        if evaluator is not None:
            self.set_evaluator(evaluator, thread_safe=evaluator_thread_safe)
        elif request_evaluator is not None:
            self.set_request_evaluator(request_evaluator, thread_safe=evaluator_thread_safe)
        elif evaluator_thread_safe is not None:
            self.set_evaluator_thread_safe(evaluator_thread_safe)
        if batch_evaluator is not None:
            self.set_batch_evaluator(batch_evaluator)
        if request_batch_evaluator is not None:
            self.set_request_batch_evaluator(request_batch_evaluator)
        if progress is not None:
            self.set_progress(progress)
        if log is not None:
            self.set_log(log, log_level)
        if self._evaluator_kind is None:
            raise ValueError("no evaluator: pass evaluator= or batch_evaluator= "
                             "(or use ask()/tell())")
        if self._evaluator_kind.startswith(("testbed", "c-")) and \
                not self._keep["evaluator"][1]._h:
            kind = "testbed" if self._evaluator_kind.startswith("testbed") else "evaluator"
            raise ValueError(f"the {kind} used as evaluator has been closed")
        self._state.take()
        status = lib.bosch_optimize(self._handle)
        self._status = status
        self._raise_pending()
        self._raise_status(status)
        return self.result()

    def force_stop(self) -> None:
        """Ask the search to stop as soon as possible (thread-safe, callback-safe)."""
        h = self._h
        if h:
            lib.bosch_force_stop(h)

    @property
    def evaluator_status(self) -> int:
        """The non-zero status an evaluator returned (0 if it never failed)."""
        return lib.bosch_evaluator_status(self._handle)

    @property
    def status(self) -> int:
        """Last status returned by optimize()/ask() (0 before the end)."""
        return self._status

    @property
    def finished(self) -> bool:
        return self._status != 0

    # -- ask / tell -------------------------------------------------------------------
    def ask(self) -> list[bytes]:
        """The next batch of candidates (each `units` bytes of 0/1), or [] when
        the search has ended (see :attr:`status`). Asking again before every
        candidate has been told returns the same batch."""
        n = ctypes.c_size_t(0)
        status = lib.bosch_ask(self._handle, ctypes.byref(n))
        if status != 0:
            self._status = status
        self._raise_pending()
        self._raise_status(status)
        units = self._units
        buf = (ctypes.c_uint8 * units)()
        out = []
        for i in range(n.value):
            self._check_const(lib.bosch_candidate(self._h, i, buf), f"candidate {i}")
            out.append(bytes(buf).translate(_NORM))
        return out

    def candidate_request(self, i: int) -> tuple[float, int]:
        """The request of candidate i of the pending batch: (fidelity, draw),
        the fidelity in (0, 1] to score it at and its draw (0 for a mask's
        first evaluation, >= 1 for a confirmation draw, to be scored
        independently of draw 0). (1.0, 0) unless screen_fidelity or confirm
        are set (bosch_candidate_request)."""
        fid = ctypes.c_double()
        draw = ctypes.c_uint32()
        self._check(lib.bosch_candidate_request(self._handle, int(i), ctypes.byref(fid),
                                                ctypes.byref(draw)))
        return fid.value, draw.value

    @property
    def candidate_stage(self) -> str:
        """Stage name of the pending batch."""
        return stage_name(self._check_const(lib.bosch_candidate_stage(self._handle),
                                            "candidate_stage (no pending batch?)"))

    def tell(self, i: int, score: float) -> None:
        """Score of candidate i of the pending batch (any order). NaN/inf
        raises BadScoreError and leaves the candidate pending."""
        status = lib.bosch_tell(self._handle, int(i), float(score))
        self._raise_pending()
        self._check(status)

    def tell_failure(self, i: int, code: int = 1) -> None:
        """Candidate i could not be evaluated; the search stops with
        BOSCH_E_EVALUATOR (next ask() raises EvaluatorError)."""
        code = int(code)
        if code == 0:
            raise ValueError("a failure code must be non-zero")
        status = lib.bosch_tell_failure(self._handle, int(i), code)
        self._raise_pending()
        if status == ErrorCode.E_EVALUATOR:
            # The library acknowledges the report with the status the search
            # now has (optimizer.h leaves the return value open): not an error
            # of this call. The next ask() raises EvaluatorError.
            self._status = status
            return
        self._check(status)

    def result(self, history: bool = True) -> Result:
        """Snapshot of the best mask so far (any time, also after errors)."""
        out = ctypes.c_void_p()
        self._check_const(lib.bosch_get_result(self._handle, ctypes.byref(out)), "get_result")
        if not out.value:
            raise error_for_status(ErrorCode.E_NOMEM, "bosch_get_result returned no result")
        return _read_result(_ResultHandle(out.value), self._query_heads, history)


def _stage_code(stage) -> int:
    if isinstance(stage, str):
        try:
            return STAGES.index(stage.lower())
        except ValueError:
            raise ValueError(f"unknown stage {stage!r}") from None
    return int(stage)


install_option_properties(Optimizer)
