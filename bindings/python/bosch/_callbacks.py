"""The trampolines between the library's callbacks and Python functions
(evaluators, progress, log): each holds the first exception a Python
callback raised until the C call returns, through the optimizer's
:class:`_CallbackState`."""

from __future__ import annotations

import ctypes
import enum
import logging
import threading

from ._lib import (BATCH_EVAL_FN, EVAL_FN, LOG_FN, PROGRESS_FN, REQUEST_BATCH_EVAL_FN,
                   REQUEST_EVAL_FN, lib)
from .result import _read_progress
from .strategy import PYTHON_EXCEPTION_STATUS

__all__ = ["LogLevel"]


class LogLevel(enum.IntEnum):
    """enum bosch_log_level"""
    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3


_PY_LOG_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}


# ----------------------------------------------------------------------------
# Callback plumbing
# ----------------------------------------------------------------------------
class _CallbackState:
    """Shared by the trampolines of one optimizer. Holds the first Python
    exception raised inside a callback until the C call returns. Trampolines
    reference this object, not the Optimizer (no reference cycle).

    With ``threads`` > 1 the library calls evaluators from its worker
    threads (ctypes takes the GIL for each call): ``capture`` is locked, so
    the first exception of any thread is kept and re-raised by the thread
    that called into C."""

    def __init__(self):
        self.handle = None
        self.exc: BaseException | None = None
        self.lock = threading.Lock()

    def capture(self, exc: BaseException, stop: bool) -> None:
        with self.lock:
            if self.exc is None:
                self.exc = exc
        if stop and self.handle:
            lib.bosch_force_stop(self.handle)

    def take(self) -> BaseException | None:
        with self.lock:
            exc, self.exc = self.exc, None
        return exc


def _make_eval(fn, state: _CallbackState):
    string_at = ctypes.string_at

    def trampoline(mask, units, score, user):
        try:
            score[0] = float(fn(string_at(mask, units)))
            return 0
        except BaseException as exc:  # must never propagate into C
            state.capture(exc, stop=False)
            return PYTHON_EXCEPTION_STATUS

    return EVAL_FN(trampoline)


def _score_batch(masks, n, units, scores, call, what):
    """Splits C's `n` masks of `units` bytes, scores them with `call(batch)`
    and writes the n scores back (ValueError naming `what` otherwise)."""
    raw = ctypes.string_at(masks, n * units) if n else b""
    batch = [raw[i * units:(i + 1) * units] for i in range(n)]
    values = [float(v) for v in call(batch)]
    if len(values) != n:
        raise ValueError(f"{what} returned {len(values)} scores for {n} masks")
    for i, v in enumerate(values):
        scores[i] = v


def _make_batch_eval(fn, state: _CallbackState):
    def trampoline(masks, n, units, scores, user):
        try:
            _score_batch(masks, n, units, scores, fn, "batch evaluator")
            return 0
        except BaseException as exc:
            state.capture(exc, stop=False)
            return PYTHON_EXCEPTION_STATUS

    return BATCH_EVAL_FN(trampoline)


def _make_request_eval(fn, state: _CallbackState):
    string_at = ctypes.string_at

    def trampoline(mask, units, fidelity, draw, score, user):
        try:
            score[0] = float(fn(string_at(mask, units), fidelity, draw))
            return 0
        except BaseException as exc:  # must never propagate into C
            state.capture(exc, stop=False)
            return PYTHON_EXCEPTION_STATUS

    return REQUEST_EVAL_FN(trampoline)


def _make_request_batch_eval(fn, state: _CallbackState):
    def trampoline(masks, fidelity, draws, n, units, scores, user):
        try:
            _score_batch(masks, n, units, scores,
                         lambda batch: fn(batch, fidelity[:n], draws[:n]),
                         "request batch evaluator")
            return 0
        except BaseException as exc:
            state.capture(exc, stop=False)
            return PYTHON_EXCEPTION_STATUS

    return REQUEST_BATCH_EVAL_FN(trampoline)


def _make_progress(fn, state: _CallbackState, units: int = 0):
    def trampoline(p, user):
        try:
            fn(_read_progress(p, units))
        except BaseException as exc:
            state.capture(exc, stop=True)

    return PROGRESS_FN(trampoline)


def _make_log(fn, state: _CallbackState):
    if isinstance(fn, logging.Logger):
        logger = fn

        def fn(level, msg):  # noqa: F811 - adapter
            logger.log(_PY_LOG_LEVELS.get(level, logging.INFO), "%s", msg)

    def trampoline(level, msg, user):
        try:
            fn(level, msg.decode("utf-8", errors="replace") if msg is not None else "")
        except BaseException as exc:
            state.capture(exc, stop=True)

    return LOG_FN(trampoline)
