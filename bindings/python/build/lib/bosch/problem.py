"""bosch.Problem (shape and constraints), repair and mask helpers."""

from __future__ import annotations

import ctypes

from ._handle import Handle
from ._lib import lib
from ._masks import buffer_to_list, double_array, mask_buffer, out_buffer, uint32_array
from .errors import ErrorCode, InfeasibleError, check_status, error_for_status

__all__ = ["Problem", "repair", "kv_saving", "FIX_NONE", "FIX_FULL", "FIX_SWA"]

FIX_NONE = 0
FIX_FULL = 1
FIX_SWA = 2

_FIX_BY_NAME = {None: FIX_NONE, "none": FIX_NONE, "free": FIX_NONE,
                "full": FIX_FULL, "swa": FIX_SWA}
_FIX_NAMES = {FIX_NONE: None, FIX_FULL: "full", FIX_SWA: "swa"}


def _fix_code(fix) -> int:
    if isinstance(fix, bool):
        raise TypeError("fix must be 'full', 'swa' or None")
    if isinstance(fix, int):
        if fix in _FIX_NAMES:
            return fix
        raise ValueError(f"invalid fix value {fix!r}")
    key = fix.lower() if isinstance(fix, str) else fix
    try:
        return _FIX_BY_NAME[key]
    except (KeyError, TypeError):
        raise ValueError(f"fix must be 'full', 'swa' or None, got {fix!r}") from None


class Problem(Handle):
    """A model shape (layers x kv_groups units, heads_per_group query heads per
    unit) and the constraints on the mask.

    ``ratio`` sets the target SWA ratio (the library default is 0.5);
    ``units`` sets an exact number of SWA units instead (it wins when both are given).

    Masks are one entry per unit, unit u = (layer u // kv_groups, group u % kv_groups),
    1 = sliding-window (SWA), 0 = full attention.
    """

    def __init__(self, layers: int, kv_groups: int, heads_per_group: int = 1,
                 ratio: float | None = None, units: int | None = None, *, _handle=None):
        if _handle is not None:
            self._h = _handle
        else:
            for name, v in (("layers", layers), ("kv_groups", kv_groups),
                            ("heads_per_group", heads_per_group)):
                if int(v) != v or not 0 < int(v) <= 0xFFFFFFFF:
                    raise ValueError(f"{name} must be a positive 32-bit integer, got {v!r}")
            self._h = lib.bosch_problem_create(int(layers), int(kv_groups), int(heads_per_group))
            if not self._h:
                raise error_for_status(ErrorCode.E_INVALID,
                                       f"bosch_problem_create({layers}, {kv_groups}, "
                                       f"{heads_per_group}) failed: invalid shape "
                                       "(zero, or more than 2^24 units) or out of memory")
        if ratio is not None:
            self.target_ratio = ratio
        if units is not None:
            self.target_units = units

    # -- lifetime ---------------------------------------------------------
    _kind = "problem"  # Handle: close(), with, __del__, _handle

    def _free(self, h) -> None:
        lib.bosch_problem_free(h)

    def clone(self) -> "Problem":
        h = lib.bosch_problem_clone(self._handle)
        if not h:
            raise error_for_status(ErrorCode.E_NOMEM, "bosch_problem_clone failed")
        return Problem(0, 0, _handle=h)

    __copy__ = clone

    def __deepcopy__(self, memo):
        return self.clone()

    # -- shape --------------------------------------------------------------
    @property
    def layers(self) -> int:
        return lib.bosch_problem_layers(self._handle)

    @property
    def kv_groups(self) -> int:
        return lib.bosch_problem_kv_groups(self._handle)

    @property
    def heads_per_group(self) -> int:
        return lib.bosch_problem_heads_per_group(self._handle)

    @property
    def n_units(self) -> int:
        """Number of decision units (layers * kv_groups)."""
        return lib.bosch_problem_units(self._handle)

    @property
    def n_query_heads(self) -> int:
        """Number of query heads (n_units * heads_per_group)."""
        return lib.bosch_problem_query_heads(self._handle)

    def __repr__(self) -> str:
        if not self._h:
            return "<bosch.Problem (closed)>"
        return (f"bosch.Problem(layers={self.layers}, kv_groups={self.kv_groups}, "
                f"heads_per_group={self.heads_per_group}, target_units={self.target_units}, "
                f"target_ratio={self.target_ratio:g})")

    # -- target ---------------------------------------------------------------
    @property
    def target_ratio(self) -> float:
        """Target SWA ratio (rho as set, or n_swa / units after an exact count)."""
        return lib.bosch_problem_target_ratio(self._handle)

    @target_ratio.setter
    def target_ratio(self, rho: float) -> None:
        check_status(lib.bosch_problem_set_target_ratio(self._handle, float(rho)))

    @property
    def target_units(self) -> int:
        """Exact number of SWA units of every final mask."""
        return lib.bosch_problem_target_units(self._handle)

    @target_units.setter
    def target_units(self, n: int) -> None:
        n = int(n)
        if n < 0:
            raise error_for_status(ErrorCode.E_INVALID, f"target units must be >= 0, got {n}")
        check_status(lib.bosch_problem_set_target_units(self._handle, n))

    def set_target_ratio(self, rho: float) -> "Problem":
        self.target_ratio = rho
        return self

    def set_target_units(self, n: int) -> "Problem":
        self.target_units = n
        return self

    # -- constraints ----------------------------------------------------------
    def fix_unit(self, layer: int, group: int, fix) -> "Problem":
        """Fix unit (layer, group) to 'full' or 'swa'; None (or 'none') frees it."""
        check_status(lib.bosch_problem_fix_unit(self._handle, _u32(layer, "layer"),
                                                _u32(group, "group"), _fix_code(fix)))
        return self

    def unit_fix(self, layer: int, group: int) -> str | None:
        """'full', 'swa' or None (free)."""
        st = check_status(lib.bosch_problem_unit_fix(self._handle, _u32(layer, "layer"),
                                                     _u32(group, "group")))
        return _FIX_NAMES.get(st)

    def set_layer_bounds(self, layer: int, min_ratio: float = 0.0,
                         max_ratio: float = 1.0) -> "Problem":
        """Keep layer's SWA count within [ceil(min*G), floor(max*G)]."""
        check_status(lib.bosch_problem_set_layer_bounds(self._handle, _u32(layer, "layer"),
                                                        float(min_ratio), float(max_ratio)))
        return self

    def check(self) -> None:
        """Raise InfeasibleError (message = the library's reason) when no mask
        meets every constraint; return None otherwise."""
        why = ctypes.create_string_buffer(512)
        st = lib.bosch_problem_check(self._handle, why, len(why))
        if st < 0:
            msg = why.value.decode("utf-8", errors="replace") or None
            raise error_for_status(st, msg)

    @property
    def feasible(self) -> bool:
        """True when some mask meets every constraint (bosch_problem_check)."""
        try:
            self.check()
        except InfeasibleError:
            return False
        return True

    # -- masks ------------------------------------------------------------------
    def unit_index(self, layer: int, group: int) -> int:
        return int(layer) * self.kv_groups + int(group)

    def is_feasible(self, mask) -> bool:
        """bosch_mask_is_feasible: fixed units, layer bounds and exact target count."""
        buf = mask_buffer(mask, self.n_units)
        return bool(lib.bosch_mask_is_feasible(self._handle, buf))

    def expand_heads(self, mask) -> list[int]:
        """One entry per query head (GQA tying): head h of layer l = unit (l, h // hpg)."""
        buf = mask_buffer(mask, self.n_units)
        out = out_buffer(self.n_query_heads)
        check_status(lib.bosch_mask_expand_heads(self._handle, buf, out))
        return buffer_to_list(out)

    def repair(self, mask, priority=None, layer_counts=None) -> tuple[list[int], int]:
        return repair(self, mask, priority, layer_counts)


def _u32(v, what: str) -> int:
    v = int(v)
    if not 0 <= v <= 0xFFFFFFFF:
        raise error_for_status(ErrorCode.E_INVALID, f"{what} out of range: {v}")
    return v


def repair(problem: Problem, mask, priority=None, layer_counts=None) -> tuple[list[int], int]:
    """Nearest feasible mask (Hamming distance) to `mask`.

    `priority`: one float per unit; higher = preferred for SWA (ties go to
    the lower unit index). `layer_counts`: exact SWA count per layer instead
    of the global target. Returns ``(mask, changed)`` with mask a list of 0/1.
    """
    n = problem.n_units
    buf = mask_buffer(mask, n)
    prio = None if priority is None else double_array(priority, n, "priority")
    counts = None if layer_counts is None else uint32_array(layer_counts, problem.layers,
                                                            "layer_counts")
    out = out_buffer(n)
    changed = check_status(lib.bosch_repair(problem._handle, buf, prio, counts, out))
    return buffer_to_list(out), changed


def kv_saving(swa_ratio: float, context: int, window: int, sink: int = 0) -> float:
    """Estimated KV-cache saving: ratio * (1 - (sink + window) / context), clamped at 0."""
    return lib.bosch_kv_saving(float(swa_ratio), int(context), int(window), int(sink))

