"""Search strategies: built-in ones by name, and strategies written in Python.

A Python strategy is a factory called once per subproblem::

    class Greedy:
        def __init__(self, sp):            # sp: bosch.Subproblem (valid during calls only)
            self.done = False
        def propose(self, sp, max_candidates):
            if self.done:
                return []                  # [] = finished
            self.done = True
            return [bytes(sp.n_vars)]      # masks of sp.n_vars entries (any mask form)
        def observe(self, sp, candidates, values):
            pass                           # candidates: list of bytes (after repair)
        def close(self):                   # optional
            pass

    strat = bosch.Strategy.from_python("greedy", Greedy)
    opt = bosch.Optimizer(problem, strategy=strat)

An exception raised by a Python strategy stops the search (BOSCH_E_STRATEGY
in C) and is re-raised by Optimizer.optimize()/ask()/tell() or by
solve_subproblem().
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from dataclasses import dataclass

from ._lib import (OBJECTIVE_FN, STRATEGY_DESTROY_FN, STRATEGY_INIT_FN, STRATEGY_OBSERVE_FN,
                   STRATEGY_PROPOSE_FN, lib, text)
from ._masks import double_array, mask_bytes, uint32_array
from .errors import ErrorCode, check_status, error_for_status

__all__ = ["Strategy", "Subproblem", "builtin_strategies", "solve_subproblem", "SolveResult"]

#: Status a Python trampoline returns to the library when Python code raised.
PYTHON_EXCEPTION_STATUS = 1


def builtin_strategies() -> list[str]:
    """Names of the built-in strategies (bosch_strategy_builtin_name)."""
    names = []
    for i in range(lib.bosch_strategy_builtin_count()):
        name = lib.bosch_strategy_builtin_name(i)
        if name is None:
            break
        names.append(text(name))
    return names


class Subproblem:
    """Read-only view of a strategy subproblem (see strategy.h). A view passed
    to a strategy callback is valid only during that call."""

    def __init__(self, handle):
        self._h = handle

    @property
    def n_vars(self) -> int:
        return lib.bosch_subproblem_vars(self._h)

    @property
    def n_blocks(self) -> int:
        return lib.bosch_subproblem_blocks(self._h)

    def block_of(self, var: int) -> int:
        return lib.bosch_subproblem_block_of(self._h, int(var))

    def block_size(self, block: int) -> int:
        return lib.bosch_subproblem_block_size(self._h, int(block))

    def block_count(self, block: int) -> int:
        return lib.bosch_subproblem_block_count(self._h, int(block))

    @property
    def size(self) -> int:
        """Number of feasible candidates (2**64 - 1 when it does not fit)."""
        return lib.bosch_subproblem_size(self._h)

    @property
    def budget_left(self) -> int:
        return lib.bosch_subproblem_budget_left(self._h)

    def incumbent(self) -> tuple[bytes, float] | None:
        """(x, value) of the best candidate so far, None when there is none."""
        n = self.n_vars
        buf = (ctypes.c_uint8 * n)()
        val = ctypes.c_double()
        st = lib.bosch_subproblem_incumbent(self._h, buf, ctypes.byref(val))
        if st == ErrorCode.E_NOT_FOUND:
            return None
        check_status(st)
        return bytes(buf), val.value

    def lookup(self, x) -> float | None:
        """The value of x when it has already been evaluated, else None."""
        n = self.n_vars
        raw = mask_bytes(x, n, "x")
        val = ctypes.c_double()
        st = lib.bosch_subproblem_lookup(self._h, raw, ctypes.byref(val))
        check_status(st)
        return val.value if st == 1 else None

    def history(self) -> list[tuple[bytes, float]]:
        """(x, value) of every point already evaluated in this subproblem, in
        evaluation order (what a strategy can warm-start from)."""
        n = self.n_vars
        out = []
        for i in range(lib.bosch_subproblem_history_count(self._h)):
            buf = (ctypes.c_uint8 * max(n, 1))()
            val = ctypes.c_double()
            check_status(lib.bosch_subproblem_history(self._h, i, buf, ctypes.byref(val)))
            out.append((bytes(buf)[:n], val.value))
        return out

    def prior(self) -> list[float] | None:
        """The host's priors per variable (higher = keep full), or None when
        it gave none (bosch_subproblem_prior)."""
        n = self.n_vars
        buf = (ctypes.c_double * max(n, 1))()
        rc = lib.bosch_subproblem_prior(self._h, buf)
        if rc == ErrorCode.E_NOT_FOUND:
            return None
        check_status(rc)
        return list(buf)[:n]

    def random(self) -> int:
        return lib.bosch_subproblem_random(self._h)

    def random_below(self, bound: int) -> int:
        if bound < 1:
            raise ValueError("bound must be >= 1")
        return lib.bosch_subproblem_random_below(self._h, int(bound))

    def repair(self, x, priority=None) -> tuple[bytes, int]:
        """x repaired to the block counts: (repaired bytes, number of changes)."""
        n = self.n_vars
        buf = (ctypes.c_uint8 * n).from_buffer_copy(mask_bytes(x, n, "x")) if n else None
        prio = None if priority is None else double_array(priority, n, "priority")
        changed = check_status(lib.bosch_subproblem_repair(self._h, buf, prio))
        return (bytes(buf) if n else b""), changed


class Strategy:
    """A strategy descriptor (owned C handle). Create with
    ``Strategy(name)`` / ``Strategy.builtin(name)`` for a built-in one, or
    ``Strategy.from_python(name, factory)``."""

    def __init__(self, name: str | None = None, *, _handle=None):
        self._py = None
        if _handle is None:
            if name is None:
                raise TypeError("Strategy() needs a built-in strategy name")
            _handle = lib.bosch_strategy_builtin(name.encode())
            if not _handle:
                raise error_for_status(ErrorCode.E_NOT_FOUND,
                                       f"unknown built-in strategy {name!r} "
                                       f"(known: {', '.join(builtin_strategies())})")
        self._h = _handle

    @classmethod
    def builtin(cls, name: str) -> "Strategy":
        return cls(name)

    @classmethod
    def from_python(cls, name: str, factory) -> "Strategy":
        """A strategy implemented in Python; `factory(sp)` is called once per
        subproblem and returns an object with propose(sp, max) and
        observe(sp, candidates, values) (and optionally close())."""
        py = _PyStrategy(factory)
        h = lib.bosch_strategy_create(name.encode(), py.init_fn, py.propose_fn, py.observe_fn,
                                   py.destroy_fn, None)
        if not h:
            raise error_for_status(ErrorCode.E_INVALID, "bosch_strategy_create failed")
        s = cls(_handle=h)
        s._py = py
        return s

    def clone(self) -> "Strategy":
        h = lib.bosch_strategy_clone(self._handle)
        if not h:
            raise error_for_status(ErrorCode.E_NOMEM, "bosch_strategy_clone failed")
        s = Strategy(_handle=h)
        s._py = self._py
        return s

    @property
    def _handle(self):
        if not self._h:
            raise ValueError("the strategy has been closed")
        return self._h

    @property
    def name(self) -> str:
        return text(lib.bosch_strategy_name(self._handle))

    def close(self) -> None:
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.bosch_strategy_free(h)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self) -> str:
        kind = "python" if self._py else "builtin"
        return f"<bosch.Strategy {self.name!r} ({kind})>" if self._h else "<bosch.Strategy (closed)>"

    # Used by Optimizer / solve_subproblem to surface exceptions of Python strategies.
    def _take_exception(self):
        return self._py.take_exception() if self._py else None


class _PyStrategy:
    """Trampolines between the C strategy interface and a Python factory.
    Per-subproblem state objects live in a dict keyed by a small integer that
    travels through C as the `void *state`."""

    def __init__(self, factory):
        self.factory = factory
        self.states: dict[int, object] = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.exc: BaseException | None = None
        # Keep the CFUNCTYPE objects alive as long as this object (the
        # Strategy, and every Optimizer using it, hold a reference).
        self.init_fn = STRATEGY_INIT_FN(self._init)
        self.propose_fn = STRATEGY_PROPOSE_FN(self._propose)
        self.observe_fn = STRATEGY_OBSERVE_FN(self._observe)
        self.destroy_fn = STRATEGY_DESTROY_FN(self._destroy)

    def capture(self, exc: BaseException) -> None:
        with self.lock:
            if self.exc is None:
                self.exc = exc

    def take_exception(self):
        with self.lock:
            exc, self.exc = self.exc, None
        return exc

    def _init(self, state_pp, sp, user):
        try:
            obj = self.factory(Subproblem(sp))
            with self.lock:
                key = next(self.ids)
                self.states[key] = obj
            state_pp[0] = key
            return 0
        except BaseException as exc:  # never let Python exceptions cross C
            self.capture(exc)
            return PYTHON_EXCEPTION_STATUS

    def _propose(self, state, sp, cands, max_n, n_out):
        try:
            n_out[0] = 0
            obj = self.states[state]
            view = Subproblem(sp)
            proposals = obj.propose(view, max_n)
            proposals = [] if proposals is None else list(proposals)
            if len(proposals) > max_n:
                raise ValueError(f"strategy proposed {len(proposals)} candidates, "
                                 f"at most {max_n} allowed")
            n_vars = view.n_vars
            if proposals:
                data = b"".join(mask_bytes(x, n_vars, "candidate") for x in proposals)
                ctypes.memmove(cands, data, len(data))
            n_out[0] = len(proposals)
            return 0
        except BaseException as exc:
            self.capture(exc)
            return PYTHON_EXCEPTION_STATUS

    def _observe(self, state, sp, cands, values, n):
        try:
            obj = self.states[state]
            view = Subproblem(sp)
            n_vars = view.n_vars
            raw = ctypes.string_at(cands, n * n_vars) if n else b""
            xs = [raw[i * n_vars:(i + 1) * n_vars] for i in range(n)]
            vals = [values[i] for i in range(n)]
            obj.observe(view, xs, vals)
            return 0
        except BaseException as exc:
            self.capture(exc)
            return PYTHON_EXCEPTION_STATUS

    def _destroy(self, state, user):
        try:
            with self.lock:
                obj = self.states.pop(state, None)
            close = getattr(obj, "close", None)
            if close is not None:
                close()
        except BaseException as exc:
            self.capture(exc)


@dataclass
class SolveResult:
    """Outcome of solve_subproblem()."""
    status: int
    status_name: str
    best: bytes | None
    best_value: float
    evaluations: int


def solve_subproblem(strategy, block_of, counts, objective, budget: int, batch: int = 8,
                     seed: int = 0, start=None, start_value: float | None = None,
                     prior=None) -> SolveResult:
    """Run one strategy on a standalone subproblem (bosch_strategy_solve;
    the experimental tier of docs/abi.md: not covered by the ABI promise).

    `block_of[v]` is the block of variable v, `counts[b]` the exact number of
    ones of block b, `objective(x: bytes) -> float` (higher is better).
    `prior` (one value per variable, higher = keep at 0) is what
    Subproblem.prior() returns to the strategy (bosch_subproblem_set_prior).
    `strategy` is a Strategy or a built-in name. Errors raise BoschError; an
    exception raised by `objective` or by a Python strategy is re-raised.
    """
    if isinstance(strategy, str):
        strategy = Strategy(strategy)
    n_vars = len(block_of)
    n_blocks = len(counts)
    bo = uint32_array(block_of, n_vars, "block_of")
    cn = uint32_array(counts, n_blocks, "counts")
    sp = lib.bosch_subproblem_create(n_vars, n_blocks, bo, cn, int(seed))
    if not sp:
        raise error_for_status(ErrorCode.E_INVALID, "bosch_subproblem_create: inconsistent "
                               "block_of / counts")
    errors: list[BaseException] = []

    def _objective(x, n, value, user):
        try:
            value[0] = float(objective(ctypes.string_at(x, n)))
            return 0
        except BaseException as exc:
            if not errors:
                errors.append(exc)
            return PYTHON_EXCEPTION_STATUS

    fn = OBJECTIVE_FN(_objective)
    try:
        if prior is not None:
            check_status(lib.bosch_subproblem_set_prior(sp, double_array(prior, n_vars,
                                                                         "prior")))
        if start is not None:
            if start_value is None:
                start_value = float(objective(mask_bytes(start, n_vars, "start")))
            check_status(lib.bosch_subproblem_set_start(sp, mask_bytes(start, n_vars, "start"),
                                                        float(start_value)))
        best = (ctypes.c_uint8 * max(n_vars, 1))()
        best_value = ctypes.c_double(float("nan"))
        evals = ctypes.c_uint64(0)
        st = lib.bosch_strategy_solve(strategy._handle, sp, fn, None, int(budget), int(batch),
                                      best, ctypes.byref(best_value), ctypes.byref(evals))
    finally:
        lib.bosch_subproblem_free(sp)
    strat_exc = strategy._take_exception()
    if errors:
        raise errors[0]
    if strat_exc is not None:
        raise strat_exc
    check_status(st)
    return SolveResult(status=st, status_name=text(lib.bosch_err_name(st)),
                       best=bytes(best)[:n_vars] if evals.value else None,
                       best_value=best_value.value, evaluations=evals.value)
