"""Baseline selections (baselines.h). Every function returns a feasible mask
(list of 0/1 per unit) for the problem's constraints."""

from __future__ import annotations

import ctypes

from ._lib import lib
from ._masks import buffer_to_list, double_array
from .errors import check_status
from .problem import Problem

__all__ = ["baseline_layers", "baseline_static", "baseline_static_heads", "LAYER_PATTERNS",
           "REDUCTIONS"]

#: enum bosch_layer_pattern
LAYER_PATTERNS = {"rand": 0, "intr": 1, "bme": 2}
#: enum bosch_reduce
REDUCTIONS = {"mean": 0, "max": 1, "sum": 2}


def _code(value, table: dict, what: str) -> int:
    if isinstance(value, str):
        try:
            return table[value.lower()]
        except KeyError:
            raise ValueError(f"unknown {what} {value!r} (one of {', '.join(table)})") from None
    return int(value)


def baseline_layers(problem: Problem, pattern="rand", seed: int = 0) -> list[int]:
    """Layer-level pattern: 'rand' (seeded), 'intr' (interleaved) or 'bme'."""
    out = (ctypes.c_uint8 * problem.n_units)()
    check_status(lib.bosch_baseline_layers(problem._handle, _code(pattern, LAYER_PATTERNS,
                                                                  "pattern"), int(seed), out))
    return buffer_to_list(out)


def baseline_static(problem: Problem, unit_scores) -> list[int]:
    """Static ranking: the lowest-scored units become SWA (ties: lower index).
    NaN/inf scores raise BadScoreError."""
    n = problem.n_units
    scores = double_array(unit_scores, n, "unit_scores")
    out = (ctypes.c_uint8 * n)()
    check_status(lib.bosch_baseline_static(problem._handle, scores, out))
    return buffer_to_list(out)


def baseline_static_heads(problem: Problem, head_scores, reduce="mean") -> list[int]:
    """Static ranking from one score per query head, reduced per unit
    ('mean', 'max' or 'sum')."""
    scores = double_array(head_scores, problem.n_query_heads, "head_scores")
    out = (ctypes.c_uint8 * problem.n_units)()
    check_status(lib.bosch_baseline_static_heads(problem._handle, scores,
                                                 _code(reduce, REDUCTIONS, "reduction"), out))
    return buffer_to_list(out)
