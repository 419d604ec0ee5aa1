"""bosch.Testbed: synthetic head-selection landscapes (testbed.h).

Experimental tier (docs/abi.md): not covered by the ABI promise; it may
change or go in any release."""

from __future__ import annotations

import ctypes
import enum
import math

from ._handle import Handle
from ._lib import lib
from ._masks import buffer_to_list, double_array, mask_bytes, uint32_array
from .errors import ErrorCode, check_status, error_for_status

__all__ = ["Testbed", "TESTBED_PARAMS", "Family"]

#: Landscape parameters (bosch_testbed_set / bosch_testbed_get names).
TESTBED_PARAMS = ("total_cost", "heavy_fraction", "layer_sensitivity", "entanglement",
                  "backup_strength", "synergy_fraction", "cross_layer", "noise",
                  "fidelity_noise", "fidelity_correlation")


class Family(enum.IntEnum):
    """Landscape families (enum bosch_testbed_family; include/bosch/testbed.h)."""
    ENERGY = 0
    CIRCUITS = 1
    QUBO = 2
    NK2 = 3
    NK4 = 4
    COVERAGE = 5
    LAYER_CONCAVE = 6

    @property
    def label(self) -> str:
        """The library's name ("circuits", "layer-concave", ...)."""
        return lib.bosch_testbed_family_name(int(self)).decode()


class Testbed(Handle):
    """A synthetic landscape S(z) = exp(-E(z)) (+ deterministic noise) over
    unit masks of a `layers` x `kv_groups` model.

    Keyword parameters are set in order after creation (see
    TESTBED_PARAMS; setting one regenerates the landscape from the seed).

    Use it as the evaluator of an Optimizer for a run without Python in the
    loop: ``opt.optimize(evaluator=tb)`` or ``opt.optimize(batch_evaluator=tb)``
    pass bosch_testbed_eval / bosch_testbed_batch_eval with this testbed as
    user data; ``opt.optimize(request_evaluator=tb)`` /
    ``request_batch_evaluator=tb`` pass bosch_testbed_request_eval /
    bosch_testbed_request_batch_eval (they read the fidelity and draw of
    each request, see :meth:`score_request`). Calling the testbed object
    (``tb(mask)``) scores in Python.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, layers: int, kv_groups: int, seed: int = 0, family=None, **params):
        """`family`: a Family (or its name, e.g. "circuits"); None is the
        energy landscape above (bosch_testbed_create)."""
        self._h = None
        for name, v in (("layers", layers), ("kv_groups", kv_groups)):
            if int(v) != v or not 0 < int(v) <= 0xFFFFFFFF:
                raise ValueError(f"{name} must be a positive 32-bit integer, got {v!r}")
        if int(seed) < 0:
            raise ValueError("seed must be >= 0")
        if family is None:
            h = lib.bosch_testbed_create(int(layers), int(kv_groups), int(seed))
        else:
            if isinstance(family, str):
                names = {f.label: f for f in Family}
                if family not in names:
                    raise ValueError(f"unknown testbed family {family!r} (one of "
                                     f"{', '.join(names)})")
                family = names[family]
            h = lib.bosch_testbed_create_family(int(Family(family)), int(layers),
                                                int(kv_groups), int(seed))
        if not h:
            raise error_for_status(ErrorCode.E_INVALID,
                                   f"bosch_testbed_create({layers}, {kv_groups}) failed: "
                                   "zero size, more than 2^24 units, or out of memory")
        self._h = h
        self.layers = int(layers)
        self.kv_groups = int(kv_groups)
        self.seed = int(seed)
        self._units = lib.bosch_testbed_units(h)
        for name, value in params.items():
            self.set(name, value)

    # -- lifetime ------------------------------------------------------------------
    _kind = "testbed"  # Handle: close(), with, __del__, _handle

    def _free(self, h) -> None:
        lib.bosch_testbed_free(h)

    def __repr__(self) -> str:
        return (f"bosch.Testbed(layers={self.layers}, kv_groups={self.kv_groups}, "
                f"seed={self.seed})")

    @property
    def n_units(self) -> int:
        return self._units

    # -- parameters ------------------------------------------------------------------
    def set(self, param: str, value: float) -> "Testbed":
        """Set a landscape parameter (regenerates the landscape)."""
        check_status(lib.bosch_testbed_set(self._handle, param.encode(), float(value)))
        return self

    def get(self, param: str) -> float:
        """Value of a parameter; OptionError for an unknown name."""
        v = lib.bosch_testbed_get(self._handle, param.encode())
        if math.isnan(v):
            raise error_for_status(ErrorCode.E_OPTION, f"unknown testbed parameter {param!r}")
        return v

    def set_params(self, **params) -> "Testbed":
        for name, value in params.items():
            self.set(name, value)
        return self

    @property
    def params(self) -> dict[str, float]:
        return {name: self.get(name) for name in TESTBED_PARAMS}

    # -- scoring -------------------------------------------------------------------------
    def score(self, mask) -> float:
        """S(z) with noise (what a search sees)."""
        out = ctypes.c_double()
        check_status(lib.bosch_testbed_score(self._handle, mask_bytes(mask, self._units),
                                             ctypes.byref(out)))
        return out.value

    __call__ = score

    def score_clean(self, mask) -> float:
        """S(z) without noise."""
        out = ctypes.c_double()
        check_status(lib.bosch_testbed_score_clean(self._handle, mask_bytes(mask, self._units),
                                                   ctypes.byref(out)))
        return out.value

    def score_batch(self, masks) -> list[float]:
        """Scores of many masks in one C call (bosch_testbed_batch_eval)."""
        masks = list(masks)
        n = len(masks)
        if n == 0:
            return []
        data = b"".join(mask_bytes(m, self._units) for m in masks)
        scores = (ctypes.c_double * n)()
        check_status(lib.bosch_testbed_batch_eval(data, n, self._units, scores, self._handle))
        return list(scores)

    def score_request(self, mask, fidelity: float = 1.0, draw: int = 0) -> float:
        """The score of a request (bosch_testbed_score_request): draw d >= 1
        adds noise drawn independently of draw 0, and fidelity f < 1 a
        further Gaussian of standard deviation fidelity_noise * sqrt(1/f - 1),
        of which a share fidelity_correlation is a smooth function of the
        mask (neighbouring masks share it). Fidelity 1, draw 0 is :meth:`score`. InvalidArgumentError for a
        fidelity outside (0, 1]."""
        draw = int(draw)
        if not 0 <= draw <= 0xFFFFFFFF:
            raise ValueError(f"draw must be in [0, 2^32), got {draw}")
        out = ctypes.c_double()
        check_status(lib.bosch_testbed_score_request(self._handle, mask_bytes(mask, self._units),
                                                     float(fidelity), draw, ctypes.byref(out)))
        return out.value

    def score_requests(self, masks, fidelities, draws) -> list[float]:
        """Scores of many requests in one C call (bosch_testbed_request_batch_eval);
        fidelities[i] and draws[i] belong to masks[i]."""
        masks = list(masks)
        n = len(masks)
        fid = double_array(list(fidelities), n, "fidelities")
        drw = uint32_array(list(draws), n, "draws")
        if n == 0:
            return []
        data = b"".join(mask_bytes(m, self._units) for m in masks)
        scores = (ctypes.c_double * n)()
        check_status(lib.bosch_testbed_request_batch_eval(data, fid, drw, n, self._units, scores,
                                                          self._handle))
        return list(scores)

    def unit_cost(self, unit: int) -> float:
        """Cost c_u of unit u alone."""
        unit = int(unit)
        if not 0 <= unit < self._units:
            raise IndexError(f"unit {unit} out of range [0, {self._units})")
        return lib.bosch_testbed_unit_cost(self._handle, unit)

    def unit_costs(self) -> list[float]:
        return [lib.bosch_testbed_unit_cost(self._handle, u) for u in range(self._units)]

    def interactions(self) -> list[tuple[int, int, float]]:
        """Every interaction pair (u, v, J_uv)."""
        out = []
        u, v, j = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_double()
        for i in range(lib.bosch_testbed_interactions(self._handle)):
            check_status(lib.bosch_testbed_interaction(self._handle, i, ctypes.byref(u),
                                                       ctypes.byref(v), ctypes.byref(j)))
            out.append((u.value, v.value, j.value))
        return out

    def optimum(self, problem) -> tuple[list[int], float]:
        """Exact optimum by brute force over the masks feasible for `problem`
        (same shape): (mask as list of 0/1, noisy score). TooLargeError beyond
        2^26 feasible masks."""
        buf = (ctypes.c_uint8 * self._units)()
        score = ctypes.c_double()
        check_status(lib.bosch_testbed_optimum(self._handle, problem._handle, buf,
                                               ctypes.byref(score)))
        return buffer_to_list(buf), score.value

    @property
    def family(self) -> "Family":
        """The landscape family (bosch_testbed_family)."""
        return Family(check_status(lib.bosch_testbed_family(self._handle)))

    def exact_optimum(self, problem) -> tuple[list[int], float]:
        """The proven optimum of the noise-free score over the masks feasible
        for `problem` (bosch_testbed_exact_optimum: any size for
        layer-concave and for circuits without fixed units, brute force
        otherwise): (mask as list of 0/1, clean score). TooLargeError when
        brute force would exceed 2^26 masks."""
        buf = (ctypes.c_uint8 * self._units)()
        score = ctypes.c_double()
        check_status(lib.bosch_testbed_exact_optimum(self._handle, problem._handle, buf,
                                                     ctypes.byref(score)))
        return buffer_to_list(buf), score.value

    def problem(self, ratio: float | None = None, units: int | None = None,
                heads_per_group: int = 1):
        """A Problem of the testbed's shape."""
        from .problem import Problem
        return Problem(self.layers, self.kv_groups, heads_per_group, ratio=ratio, units=units)
