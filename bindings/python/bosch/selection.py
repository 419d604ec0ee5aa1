"""bosch.Selection: result files of a head selection (selection.h).

A selection is what ``bosch search`` and ``bosch baseline`` write to
PREFIX.json (the "bosch-mask" format, docs/result-format.md): the unit mask
(1 = SWA) with the model shape, the scores, the KV-cache saving, the
settings, the evaluation counts. Files are read and written by libbosch
itself, so a file written here is byte-identical to one written by the C
library or the ``bosch`` command for the same content.

    sel = bosch.Selection.read("qwen-75.json")
    sel.mask, sel.method, sel.scores["normalized"], sel.settings["window"]
    sel.write_tsv("full_attention_heads.tsv")   # DuoAttention, per KV head
"""

from __future__ import annotations

import ctypes
import enum
import math
import os

from ._handle import Handle
from ._lib import lib, text
from ._masks import buffer_to_list, mask_buffer
from .errors import ErrorCode, check_status, error_for_status

__all__ = ["Selection", "ScoreKind", "SCORE_KINDS", "read_selection", "write_history",
           "FORMAT", "FORMAT_VERSION"]

#: The "format" member of every file, and the newest format_version read and written.
FORMAT = "bosch-mask"
FORMAT_VERSION = 1


class ScoreKind(enum.IntEnum):
    """enum bosch_score_kind."""
    RAW = 0
    NORMALIZED = 1
    OBJECTIVE = 2
    FULL = 3
    ALL_SWA = 4


#: Names of the score block's members, in ScoreKind order.
SCORE_KINDS = ("raw", "normalized", "objective", "full", "all_swa")

_STAGES = ("anchors", "probe", "alloc", "group")
_SETTING_STRING, _SETTING_INT, _SETTING_DOUBLE, _SETTING_BOOL = 1, 2, 3, 4


def _path(p) -> bytes:
    return os.fsencode(os.fspath(p))


def _opt_text(ptr):
    return None if ptr is None else text(ptr)


def _creator_error():
    return error_for_status(lib.bosch_create_status(), text(lib.bosch_create_error()))


class Selection(Handle):
    """A result file's content, owned by libbosch (bosch_selection).

    ``Selection(layers, kv_groups, heads_per_group)`` is an all-full
    selection with no other field set; :meth:`read` reads a file;
    :meth:`from_result` takes a search result. Fields are properties;
    unset ones read as None (NaN for numbers) and are left out of the file.
    """

    def __init__(self, layers: int, kv_groups: int, heads_per_group: int = 1, *, _handle=None):
        self._h = None
        if _handle is None:
            for name, v in (("layers", layers), ("kv_groups", kv_groups),
                            ("heads_per_group", heads_per_group)):
                if int(v) != v or not 0 < int(v) <= 0xFFFFFFFF:
                    raise ValueError(f"{name} must be a positive 32-bit integer, got {v!r}")
            _handle = lib.bosch_selection_create(int(layers), int(kv_groups), int(heads_per_group))
            if not _handle:
                raise _creator_error()
        self._h = _handle

    # -- creators -------------------------------------------------------------
    @classmethod
    def read(cls, path) -> "Selection":
        """Reads a bosch-mask JSON file (bosch_selection_read_json). Raises
        BoschIOError (unreadable), JournalCorruptError (BOSCH_E_CORRUPT: not
        JSON, a member of a wrong type, length or content; the message names
        it) or JournalMismatchError (a newer format_version)."""
        h = lib.bosch_selection_read_json(_path(path))
        if not h:
            raise _creator_error()
        return cls(0, 0, _handle=h)

    @classmethod
    def from_result(cls, result, problem) -> "Selection":
        """The selection of a search result (a :class:`bosch.Result` taken
        with its handle, i.e. from ``Optimizer.result()``) on `problem`."""
        rh = getattr(result, "_handle", None)
        if rh is None or not rh.h:
            raise ValueError("the result holds no library snapshot")
        h = lib.bosch_selection_from_result(rh.h, problem._handle)
        if not h:
            raise _creator_error()
        return cls(0, 0, _handle=h)

    # -- lifetime ---------------------------------------------------------------
    _kind = "selection"  # Handle: close(), with, __del__, _handle

    def _free(self, h) -> None:
        lib.bosch_selection_free(h)

    def _check(self, status: int) -> int:
        return check_status(status, lambda: text(lib.bosch_selection_last_error(self._h)))

    def __repr__(self) -> str:
        if not self._h:
            return "bosch.Selection(closed)"
        return (f"bosch.Selection(layers={self.layers}, kv_groups={self.kv_groups}, "
                f"heads_per_group={self.heads_per_group}, method={self.method!r}, "
                f"ratio={self.ratio:.4f})")

    # -- shape and mask -----------------------------------------------------------
    @property
    def layers(self) -> int:
        return lib.bosch_selection_layers(self._handle)

    @property
    def kv_groups(self) -> int:
        return lib.bosch_selection_kv_groups(self._handle)

    @property
    def heads_per_group(self) -> int:
        return lib.bosch_selection_heads_per_group(self._handle)

    @property
    def units(self) -> int:
        return lib.bosch_selection_units(self._handle)

    @property
    def mask(self) -> list[int]:
        """One entry per unit, 1 = SWA. Set from bytes, a sequence of ints or
        bools or one '0'/'1' string; anything else is a TypeError."""
        buf = (ctypes.c_uint8 * self.units)()
        self._check(lib.bosch_selection_mask(self._handle, buf, self.units))
        return buffer_to_list(buf)

    @mask.setter
    def mask(self, value) -> None:
        n = self.units
        self._check(lib.bosch_selection_set_mask(self._handle, mask_buffer(value, n), n))

    @property
    def swa_units(self) -> int:
        return lib.bosch_selection_swa_units(self._handle)

    @property
    def ratio(self) -> float:
        return lib.bosch_selection_ratio(self._handle)

    @property
    def layer_ratios(self) -> list[float]:
        n = self.layers
        out = (ctypes.c_double * n)()
        self._check(lib.bosch_selection_layer_ratios(self._handle, out, n))
        return list(out)

    def overlap(self, other: "Selection") -> tuple[float, list[float]]:
        """The overlap of the full units of this selection and `other` (same
        shape; bosch_selection_overlap): the Jaccard index |F_a & F_b| /
        |F_a | F_b| of their full units over the model, and per layer (a
        layer all SWA in both: 1)."""
        n = self.layers
        per = (ctypes.c_double * n)()
        overall = ctypes.c_double()
        self._check(lib.bosch_selection_overlap(self._handle, other._handle, per, n,
                                                ctypes.byref(overall)))
        return overall.value, list(per)

    # -- descriptive fields ---------------------------------------------------------
    def _set_text(self, fn, value) -> None:
        self._check(fn(self._handle, None if value is None else str(value).encode()))

    method = property(lambda self: _opt_text(lib.bosch_selection_method(self._handle)),
                      lambda self, v: self._set_text(lib.bosch_selection_set_method, v),
                      doc='How the mask was made ("bosch", "baseline:KIND"); None when unset.')
    status = property(lambda self: _opt_text(lib.bosch_selection_status(self._handle)),
                      lambda self, v: self._set_text(lib.bosch_selection_set_status, v),
                      doc='Why the run ended ("BOSCH_DONE", ...); None when unset.')
    model_path = property(lambda self: _opt_text(lib.bosch_selection_model_path(self._handle)),
                          lambda self, v: self._set_text(lib.bosch_selection_set_model_path, v),
                          doc="The model directory; None when unset.")
    metric = property(lambda self: _opt_text(lib.bosch_selection_metric(self._handle)),
                      lambda self, v: self._set_text(lib.bosch_selection_set_metric, v),
                      doc='The score\'s metric ("exact", "logprob"); None when unset.')

    @property
    def library_version(self) -> str | None:
        """library_version of a file read (None for a selection made here)."""
        return _opt_text(lib.bosch_selection_library_version(self._handle))

    @property
    def target_ratio(self) -> float:
        """Target SWA ratio; NaN when unset (set NaN or None to unset)."""
        return lib.bosch_selection_target_ratio(self._handle)

    @target_ratio.setter
    def target_ratio(self, rho) -> None:
        self._check(lib.bosch_selection_set_target_ratio(
            self._handle, math.nan if rho is None else float(rho)))

    @property
    def importance(self) -> list[float] | None:
        """Per-unit importance (higher = keep full), None when not recorded."""
        n = self.units
        out = (ctypes.c_double * n)()
        rc = lib.bosch_selection_importance(self._handle, out, n)
        if rc == ErrorCode.E_NOT_FOUND:
            return None
        self._check(rc)
        return list(out)

    @importance.setter
    def importance(self, values) -> None:
        if values is None:
            self._check(lib.bosch_selection_set_importance(self._handle, None, 0))
            return
        vals = [float(v) for v in values]
        arr = (ctypes.c_double * len(vals))(*vals)
        self._check(lib.bosch_selection_set_importance(self._handle, arr, len(vals)))

    # -- scores ------------------------------------------------------------------------
    def score(self, kind) -> float:
        """One score by ScoreKind or name ("raw", "normalized", ...); NaN when unknown."""
        return lib.bosch_selection_score(self._handle, self._score_kind(kind))

    def set_score(self, kind, value) -> None:
        v = math.nan if value is None else float(value)
        self._check(lib.bosch_selection_set_score(self._handle, self._score_kind(kind), v))

    @staticmethod
    def _score_kind(kind) -> int:
        if isinstance(kind, str):
            if kind not in SCORE_KINDS:
                raise ValueError(f"unknown score {kind!r} (one of {', '.join(SCORE_KINDS)})")
            return SCORE_KINDS.index(kind)
        return int(kind)

    @property
    def scores(self) -> dict[str, float]:
        """The score block as a dict of name -> value (NaN when unknown)."""
        return {name: self.score(i) for i, name in enumerate(SCORE_KINDS)}

    # -- KV saving -----------------------------------------------------------------------
    @property
    def kv_saving(self) -> dict | None:
        """{"context", "window", "sink", "fraction"}, or None when not recorded."""
        c, w, s = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        f = ctypes.c_double()
        rc = lib.bosch_selection_kv_saving(self._handle, ctypes.byref(c), ctypes.byref(w),
                                           ctypes.byref(s), ctypes.byref(f))
        if rc == ErrorCode.E_NOT_FOUND:
            return None
        self._check(rc)
        return {"context": c.value, "window": w.value, "sink": s.value, "fraction": f.value}

    def set_kv_saving(self, context: int, window: int, sink: int) -> None:
        for name, v in (("context", context), ("window", window), ("sink", sink)):
            if int(v) != v or not 0 <= int(v) < 2 ** 63:
                raise ValueError(f"{name} must be an integer in [0, 2^63), got {v!r}")
        self._check(lib.bosch_selection_set_kv_saving(self._handle, int(context), int(window),
                                                      int(sink)))

    # -- settings --------------------------------------------------------------------------
    def set_setting(self, key: str, value) -> None:
        """Sets a setting; its type follows the value's (bool, int, float, str).
        "group.name" keys go into a nested object of the file."""
        k = str(key).encode()
        if isinstance(value, bool):
            rc = lib.bosch_selection_setting_set_bool(self._handle, k, int(value))
        elif isinstance(value, int):
            if not -2 ** 63 <= value < 2 ** 63:
                raise ValueError(f"setting {key!r}: integer out of the int64 range")
            rc = lib.bosch_selection_setting_set_int(self._handle, k, value)
        elif isinstance(value, float):
            rc = lib.bosch_selection_setting_set_double(self._handle, k, value)
        elif isinstance(value, str):
            rc = lib.bosch_selection_setting_set_string(self._handle, k, value.encode())
        else:
            raise TypeError(f"setting {key!r}: expected bool, int, float or str, "
                            f"got {type(value).__name__}")
        self._check(rc)

    def setting(self, key: str, default=None):
        """The value of one setting (bool, int, float or str), or `default`."""
        h, k = self._handle, str(key).encode()
        t = lib.bosch_selection_setting_type(h, k)
        if t == ErrorCode.E_NOT_FOUND:
            return default
        if t == _SETTING_STRING:
            return text(lib.bosch_selection_setting_string(h, k))
        if t == _SETTING_INT:
            out = ctypes.c_int64()
            self._check(lib.bosch_selection_setting_int(h, k, ctypes.byref(out)))
            return out.value
        if t == _SETTING_DOUBLE:
            out = ctypes.c_double()
            self._check(lib.bosch_selection_setting_double(h, k, ctypes.byref(out)))
            return out.value
        if t == _SETTING_BOOL:
            out = ctypes.c_int()
            self._check(lib.bosch_selection_setting_bool(h, k, ctypes.byref(out)))
            return bool(out.value)
        self._check(t)
        return default

    @property
    def settings(self) -> dict:
        """Every setting, in order ("group.name" keys flat)."""
        h = self._handle
        keys = [text(lib.bosch_selection_setting_key(h, i))
                for i in range(lib.bosch_selection_setting_count(h))]
        return {k: self.setting(k) for k in keys}

    # -- evaluations ---------------------------------------------------------------------------
    @property
    def evaluations(self) -> dict[str, int] | None:
        """{"anchors", "probe", "alloc", "group" (when recorded), "total",
        "replayed"}, or None when no counts are recorded."""
        h = self._handle
        out = ctypes.c_uint64()
        rc = lib.bosch_selection_evaluations(h, -1, ctypes.byref(out))
        if rc == ErrorCode.E_NOT_FOUND:
            return None
        self._check(rc)
        counts = {}
        for i, name in enumerate(_STAGES):
            if lib.bosch_selection_evaluations(h, i, ctypes.byref(out)) == 0:
                counts[name] = out.value
        self._check(lib.bosch_selection_evaluations(h, -1, ctypes.byref(out)))
        counts["total"] = out.value
        self._check(lib.bosch_selection_replayed(h, ctypes.byref(out)))
        counts["replayed"] = out.value
        return counts

    def set_evaluations(self, total: int, replayed: int = 0, per_stage=None) -> None:
        """Evaluation counts; per_stage: 4 counts (anchors, probe, alloc, group)
        or a dict of them, None for a run without stages (a baseline)."""
        arr = None
        if per_stage is not None:
            if isinstance(per_stage, dict):
                per_stage = [per_stage.get(name, 0) for name in _STAGES]
            vals = [int(v) for v in per_stage]
            if len(vals) != len(_STAGES) or any(v < 0 for v in vals):
                raise ValueError("per_stage: expected 4 non-negative counts")
            arr = (ctypes.c_uint64 * 4)(*vals)
        if int(total) < 0 or int(replayed) < 0:
            raise ValueError("counts must be >= 0")
        self._check(lib.bosch_selection_set_evaluations(self._handle, arr, int(total),
                                                        int(replayed)))

    # -- files ------------------------------------------------------------------------------------
    def write_json(self, path) -> None:
        """PREFIX.json (the bosch-mask format)."""
        self._check(lib.bosch_selection_write_json(self._handle, _path(path)))

    def write_tsv(self, path) -> None:
        """One line per layer, one column per KV group, 1 = full, 0 = SWA
        (DuoAttention's full_attention_heads.tsv)."""
        self._check(lib.bosch_selection_write_tsv(self._handle, _path(path)))

    def write_svg(self, path) -> None:
        """Heatmap of the mask."""
        self._check(lib.bosch_selection_write_svg(self._handle, _path(path)))

    def write(self, prefix) -> None:
        """PREFIX.json, PREFIX.tsv and PREFIX.svg, as the bosch command writes them."""
        prefix = os.fspath(prefix)
        self.write_json(prefix + ".json")
        self.write_tsv(prefix + ".tsv")
        self.write_svg(prefix + ".svg")

    # -- exports for inference code (docs/export.md) ---------------------------------------------
    @property
    def is_layer_level(self) -> bool:
        """Every layer all SWA or all full (what a per-layer sliding window serves)."""
        return bool(lib.bosch_selection_is_layer_level(self._handle))

    def project_layers(self) -> "Selection":
        """The nearest layer-level selection with the same SWA ratio
        (bosch_selection_project_layers; method "layer-projection:METHOD",
        sink 0, no scores)."""
        h = lib.bosch_selection_project_layers(self._handle)
        if not h:
            raise _creator_error()
        return Selection(0, 0, _handle=h)

    def export_duo(self, directory) -> None:
        """A DuoAttention / kvpress attention-pattern directory
        (full_attention_heads.tsv + config.json; bosch_selection_export_duo).
        Needs a KV-saving record (:meth:`set_kv_saving`) for window and sink."""
        self._check(lib.bosch_selection_export_duo(self._handle, _path(directory)))

    def export_hf(self, source_config, out_config=None) -> None:
        """A Hugging Face config.json sliding the SWA layers of a layer-level
        selection: `source_config` (the model's config.json) with
        use_sliding_window, sliding_window and layer_types set, written to
        `out_config` (default: over `source_config`; bosch_selection_export_hf)."""
        out = source_config if out_config is None else out_config
        self._check(lib.bosch_selection_export_hf(self._handle, _path(source_config), _path(out)))

    def export_hf_dir(self, model_dir, out_dir, config_only: bool = False) -> tuple[int, int]:
        """A directory that loads as the model with this layer-level
        selection's sliding layers (bosch_selection_export_hf_dir, what
        ``bosch export --format hf`` writes): out_dir/config.json,
        out_dir/bosch-mask.json and a link to every other file of
        `model_dir` (none with `config_only`). Returns (files linked, files
        kept because they are not links). Project a head-level selection
        first (:meth:`project_layers`)."""
        linked, kept = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(lib.bosch_selection_export_hf_dir(
            self._handle, _path(model_dir), _path(out_dir), 1 if config_only else 0,
            ctypes.byref(linked), ctypes.byref(kept)))
        return linked.value, kept.value

    def export_trtllm(self, path, max_seq_len: int = 0, model_config=None) -> None:
        """TensorRT-LLM's per-layer windows of this layer-level selection
        (bosch_selection_export_trtllm): a YAML file for trtllm-serve's
        --extra_llm_api_options, kv_cache_config.max_attention_window with
        the window on sliding layers and `max_seq_len` (0: the
        max_position_embeddings of `model_config`, a config.json) on full
        ones. Project a head-level selection first (:meth:`project_layers`)."""
        self._check(lib.bosch_selection_export_trtllm(
            self._handle, _path(model_config) if model_config is not None else None,
            int(max_seq_len), _path(path)))


def read_selection(path) -> Selection:
    """Selection.read(path)."""
    return Selection.read(path)


def write_history(path, masks, scores, stages, s_full: float, s_allswa: float) -> None:
    """Evaluations made without an optimizer as JSON Lines in
    bosch_result_write_history's format (bosch_history_write): one record
    per (mask, score, stage name); "normalized" when s_full > s_allswa."""
    masks, scores, stages = list(masks), [float(s) for s in scores], list(stages)
    n = len(masks)
    if len(scores) != n or len(stages) != n:
        raise ValueError("masks, scores and stages must have the same length")
    if n == 0:
        raise ValueError("at least one record is needed (its mask gives the units)")
    units = len(masks[0])
    data = b"".join(bytes(mask_buffer(m, units, f"masks[{i}]")) for i, m in enumerate(masks))
    names = (ctypes.c_char_p * n)(*[str(s).encode() for s in stages])
    sc = (ctypes.c_double * n)(*scores)
    check_status(lib.bosch_history_write(_path(path), units, n, data, sc, names, float(s_full),
                                         float(s_allswa)))
