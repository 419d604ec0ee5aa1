"""Results and progress of a search (bosch_result, bosch_progress): the
stage and variant enums, :class:`Result` with its history, :class:`Progress`.

Masks in results (``Result.mask``, ``HistoryRecord.mask`` ...) are lists of
0/1 ints (1 = SWA)."""

from __future__ import annotations

import ctypes
import enum
import math
from dataclasses import dataclass, field

from ._lib import lib, text
from ._masks import buffer_to_list
from .errors import StopReason, check_status, err_name
from .problem import kv_saving

__all__ = ["Result", "Progress", "HistoryRecord", "Stage", "Variant", "stage_name",
           "variant_name", "STAGES"]


class Stage(enum.IntEnum):
    """enum bosch_stage"""
    ANCHORS = 0
    PROBE = 1
    ALLOC = 2
    GROUP = 3


STAGES = ("anchors", "probe", "alloc", "group")


class Variant(enum.IntEnum):
    """enum bosch_variant"""
    FULL = 0
    PROBE_ONLY = 1
    GROUP_ONLY = 2
    LAYER_LEVEL = 3


def stage_name(stage: int) -> str:
    """'anchors', 'probe', 'alloc', 'group' ('unknown' otherwise)."""
    return text(lib.bosch_stage_name(int(stage)))


def variant_name(variant: int) -> str | None:
    name = lib.bosch_variant_name(int(variant))
    return None if name is None else text(name)



# ----------------------------------------------------------------------------
# Plain Python records
# ----------------------------------------------------------------------------
@dataclass
class Progress:
    """What a progress callback receives (a copy; safe to keep)."""
    stage: int
    stage_name: str
    evaluations: int
    budget: int
    best_score: float          # best normalised score S^ so far (NaN if none)
    layer_ratios: list[float]  # per-layer SWA ratios of the working mask
    elapsed: float             # seconds
    rate: float = math.nan     # evaluations per second of this process (replays excluded)
    eta: float = math.nan      # seconds until the budget is spent at that rate (NaN: unknown)
    replayed: int = 0          # evaluations answered from a resumed journal so far
    # the working mask, the one the next candidates are drawn around (units
    # bytes, 1 = SWA; None before the search has one): give it to
    # bosch.backend.Evaluator.set_reference
    working_mask: bytes | None = None
    # the best feasible mask so far (the incumbent, scored by best_score;
    # None before one): the better reference for that prefix cache
    best_mask: bytes | None = None

    def __repr__(self) -> str:
        return ("bosch.Progress(%s, %d/%d evaluations, best_score=%.6g, %.1f s)"
                % (self.stage_name, self.evaluations, self.budget, self.best_score,
                   self.elapsed))


@dataclass
class HistoryRecord:
    """One evaluation of the history, in evaluation order."""
    index: int
    stage: int
    stage_name: str
    score: float               # raw S(z)
    mask: list[int]
    # Evaluator wall time in seconds (ask-to-tell time in ask/tell mode); NaN when
    # unknown. Not compared: it varies from run to run.
    wall_s: float = field(default=math.nan, compare=False)
    # The request the score answers (bosch_result_history_request): the
    # fidelity in (0, 1] (below 1: a screened score) and the draw (>= 1: a
    # confirmation draw). 1.0 and 0 for an ordinary evaluation.
    fidelity: float = 1.0
    draw: int = 0

    @property
    def swa_units(self) -> int:
        return sum(self.mask)


class _ResultHandle:
    """Owns a bosch_result snapshot (freed when garbage-collected)."""

    __slots__ = ("h",)

    def __init__(self, h):
        self.h = h

    # One owner per C snapshot: copies share it, pickles drop it.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_ResultHandle, (None,))

    def __del__(self):
        h, self.h = self.h, None
        if h:
            try:
                lib.bosch_result_free(h)
            except Exception:  # interpreter shutdown
                pass


@dataclass
class Result:
    """Snapshot of the best mask and the run's statistics (bosch_get_result).

    ``status`` is BOSCH_OK (0) while running, else the positive stop reason or
    the negative error that ended the run; ``status_name`` its symbolic name.
    When ``feasible`` is False the mask is the best of any kind (or all-full)
    and the scores are NaN.
    """
    status: int
    status_name: str
    feasible: bool
    units: int
    layers: int
    mask: list[int]
    head_mask: list[int]
    score: float               # raw S(z)
    normalized_score: float    # S^(z)
    objective: float           # S^ - alpha * (ratio - rho)^2
    anchors: tuple[float, float]  # (S_full, S_allSWA)
    ratio: float
    layer_ratios: list[float]
    evaluations: dict[str, int]   # per stage name
    total_evaluations: int
    history: list[HistoryRecord]
    # Evaluations answered from a resumed journal (counted above too). Not
    # compared: a resumed run equals an uninterrupted one.
    replayed: int = field(default=0, compare=False)
    # Confirmation draws (option "confirm") averaged into `score` (0: confirm
    # off, or the run ended before confirming).
    confirmations: int = 0
    # Standard error of that mean (sd / sqrt(n)); NaN below 2 draws. Not
    # compared (NaN != NaN): it follows from the history's draws, which are.
    score_stderr: float = field(default=math.nan, compare=False)
    # The raw score the search itself saw for the mask (its draw 0; equals
    # `score` without confirmation draws).
    search_score: float = math.nan
    # Budget spent in full-evaluation equivalents (a fidelity-f evaluation
    # counts f; equals total_evaluations without screening).
    cost: float = 0.0
    _handle: _ResultHandle | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status >= 0

    @property
    def swa_units(self) -> int:
        return sum(self.mask)

    @property
    def stop_reason(self) -> StopReason | None:
        return StopReason(self.status) if self.status in StopReason._value2member_map_ else None

    def __repr__(self) -> str:
        # A summary: the history (every record with its mask) is in
        # .history; printing it all made print(result) of a 300-evaluation
        # search 200 KB long.
        score = ("score=%.6g (normalised %.6g)" % (self.score, self.normalized_score)
                 if self.feasible else "infeasible")
        return ("bosch.Result(%s, %s, swa_units=%d/%d, ratio=%.4f, evaluations=%d, "
                "history=%d records)" % (self.status_name, score, self.swa_units, self.units,
                                         self.ratio, self.total_evaluations, len(self.history)))

    def kv_saving(self, context: int, window: int, sink: int = 0) -> float:
        """Estimated KV-cache saving of the mask (fraction of the full cache)."""
        if self._handle is not None and self._handle.h:
            return lib.bosch_result_kv_saving(self._handle.h, int(context), int(window),
                                              int(sink))
        return kv_saving(self.ratio, context, window, sink)

    def write_history(self, path) -> None:
        """Write the evaluation history as JSON Lines (bosch_result_write_history)."""
        if self._handle is None or not self._handle.h:
            raise ValueError("this Result has no library snapshot to write from")
        import os
        p = os.fsencode(os.fspath(path))
        check_status(lib.bosch_result_write_history(self._handle.h, p))


def _read_result(rh: _ResultHandle, query_heads: int, with_history: bool = True) -> Result:
    h = rh.h
    st = lib.bosch_result_status(h)
    units = lib.bosch_result_units(h)
    layers = lib.bosch_result_layers(h)
    buf = (ctypes.c_uint8 * units)()
    check_status(lib.bosch_result_mask(h, buf, units))
    hbuf = (ctypes.c_uint8 * query_heads)()
    check_status(lib.bosch_result_head_mask(h, hbuf, query_heads))
    lr = (ctypes.c_double * layers)()
    check_status(lib.bosch_result_layer_ratios(h, lr, layers))
    history = []
    if with_history:
        n = lib.bosch_result_history_size(h)
        mbuf = (ctypes.c_uint8 * units)()
        score = ctypes.c_double()
        stage = ctypes.c_int()
        fid = ctypes.c_double()
        draw = ctypes.c_uint32()
        for i in range(n):
            check_status(lib.bosch_result_history_entry(h, i, mbuf, ctypes.byref(score),
                                                        ctypes.byref(stage)))
            check_status(lib.bosch_result_history_request(h, i, ctypes.byref(fid),
                                                          ctypes.byref(draw)))
            history.append(HistoryRecord(index=i, stage=stage.value,
                                         stage_name=stage_name(stage.value), score=score.value,
                                         mask=buffer_to_list(mbuf),
                                         wall_s=lib.bosch_result_history_wall(h, i),
                                         fidelity=fid.value, draw=draw.value))
    return Result(
        status=st, status_name=err_name(st), feasible=bool(lib.bosch_result_feasible(h)),
        units=units, layers=layers, mask=buffer_to_list(buf), head_mask=buffer_to_list(hbuf),
        score=lib.bosch_result_score(h), normalized_score=lib.bosch_result_normalized_score(h),
        objective=lib.bosch_result_objective(h),
        anchors=(lib.bosch_result_anchor(h, 0), lib.bosch_result_anchor(h, 1)),
        ratio=lib.bosch_result_ratio(h), layer_ratios=list(lr),
        evaluations={STAGES[s]: lib.bosch_result_evaluations(h, s) for s in range(len(STAGES))},
        total_evaluations=lib.bosch_result_evaluations(h, -1), history=history,
        replayed=lib.bosch_result_replayed(h),
        confirmations=lib.bosch_result_confirmations(h),
        score_stderr=lib.bosch_result_score_stderr(h),
        search_score=lib.bosch_result_search_score(h), cost=lib.bosch_result_cost(h),
        _handle=rh)


def _read_progress(p, units: int = 0) -> Progress:
    n = lib.bosch_progress_layers(p)
    lr = (ctypes.c_double * n)()
    if n:
        check_status(lib.bosch_progress_layer_ratios(p, lr, n))
    st = lib.bosch_progress_stage(p)
    working = best = None
    if units:
        buf = (ctypes.c_uint8 * units)()
        if lib.bosch_progress_working_mask(p, buf, units) == 0:
            working = bytes(buf)
        if lib.bosch_progress_best_mask(p, buf, units) == 0:
            best = bytes(buf)
    return Progress(stage=st, stage_name=stage_name(st),
                    evaluations=lib.bosch_progress_evaluations(p),
                    budget=lib.bosch_progress_budget(p),
                    best_score=lib.bosch_progress_best_score(p), layer_ratios=list(lr),
                    elapsed=lib.bosch_progress_elapsed(p), rate=lib.bosch_progress_rate(p),
                    eta=lib.bosch_progress_eta(p), replayed=lib.bosch_progress_replayed(p),
                    working_mask=working, best_mask=best)
