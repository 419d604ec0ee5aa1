"""bosch.backend.Checkpoint: a model directory opened in one call
(bosch_torch_checkpoint_open) - the model, its tokenizer, the settings its
bosch.json suggests and the task to score on, as the bosch command opens
them."""

from __future__ import annotations

import ctypes
import os

from ._handle import Handle
from ._lib import CheckpointParams
from ._lib import text as _str
from . import backend as _backend

ROLES = ("calib", "heldout")


class Checkpoint(Handle):
    """A model directory: ``model`` (:class:`Model`), ``tokenizer``
    (:class:`bosch.text.Tokenizer` or None), ``task`` (:class:`Task`), what
    was chosen (``task_source``, ``tokenizer_path``, ``description``) and
    what bosch.json suggests (``suggested``: window, sink, metric, budget;
    ``suggested_files``: calib, heldout, heldout_multi, heldout_two_hop).

    The checkpoint owns its model, tokenizer and task: they are usable while
    it is open and closed with it. Open with :meth:`open`.
    """

    _kind = "checkpoint"

    def __init__(self, *, _handle):
        super().__init__(_handle)
        h = self._h
        self.path = _str(_backend.tlib.bosch_torch_checkpoint_dir(h))
        self.model = _backend.Model._lent_by(_backend.tlib.bosch_torch_checkpoint_model(h), self,
                                             self.path)
        tok = _backend.tlib.bosch_torch_checkpoint_tokenizer(h)
        self.tokenizer = None
        if tok:
            from .text import Tokenizer
            self.tokenizer = Tokenizer.__new__(Tokenizer)
            self.tokenizer._lent = True
            Handle.__init__(self.tokenizer, tok, borrows=(self,))
        task = _backend.Task.__new__(_backend.Task)
        task._lent = True
        Handle.__init__(task, _backend.tlib.bosch_torch_checkpoint_task(h), borrows=(self,))
        self.task = task

    @classmethod
    def open(cls, path=None, *, device="auto", dtype="auto", tokenizer=None, task=None,
             role: str = "calib", context: int = 1024, samples: int = 8, needles: int = 1,
             key_len: int = 2, value_len: int = 2, seed: int = 0,
             threads: int | None = None) -> "Checkpoint":
        """Opens `path` (default: the shipped organism, :func:`organism_dir`).

        ``task``: None (bosch.json's task for ``role``, "calib" or
        "heldout", else the built-in NIAH), "niah", "ruler:NAME" or a JSON
        Lines file (token ids or text); ``context``, ``samples``,
        ``needles``, ``key_len``, ``value_len``, ``seed``: generated tasks
        (NIAH, RULER). ``tokenizer``: a tokenizer.json (default: the
        directory's, when it has one). ``device``, ``dtype``, ``threads``:
        as :class:`Model`. Raises the library's error (bad bosch.json,
        model, tokenizer or task), naming what failed.
        """
        if path is None:
            path = _backend.organism_dir()
            if path is None:
                raise FileNotFoundError("no path given and the organism was not found "
                                        "(set BOSCH_ORGANISM)")
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        if threads is not None:
            _backend.set_threads(threads)
        p = CheckpointParams()
        _backend.tlib.bosch_torch_checkpoint_params_init(ctypes.byref(p))
        keep = []  # the bytes the struct points to, alive through the call

        def text_field(value):
            if value is None:
                return None
            b = os.fsencode(value) if not isinstance(value, bytes) else value
            keep.append(b)
            return b

        if not isinstance(device, str):
            device = {0: "auto", 1: "cpu", 2: "cuda"}[int(_backend.Device(device))]
        p.device = text_field(device)
        p.dtype = _backend._code(dtype, _backend._DTYPES, _backend.DType, "dtype")
        p.tokenizer = text_field(tokenizer)
        p.task = text_field(task)
        p.role = ROLES.index(role)
        for name, value in (("context", context), ("samples", samples), ("needles", needles),
                            ("key_len", key_len), ("value_len", value_len), ("seed", seed)):
            if int(value) < 0:
                raise ValueError(f"{name} must be >= 0")
            setattr(p, name, int(value))
        h = _backend.tlib.bosch_torch_checkpoint_open(_backend._path(path), ctypes.byref(p))
        if not h:
            raise _backend._creator_error()
        return cls(_handle=h)

    def _free(self, h) -> None:
        _backend.tlib.bosch_torch_checkpoint_free(h)

    @property
    def task_source(self) -> str:
        """"niah", "ruler:NAME" or the task file's path."""
        return _str(_backend.tlib.bosch_torch_checkpoint_task_source(self._handle))

    @property
    def tokenizer_path(self) -> str:
        """The tokenizer file ("" when there is none)."""
        return _str(_backend.tlib.bosch_torch_checkpoint_tokenizer_path(self._handle))

    @property
    def description(self) -> str:
        """The model as the bosch command prints it ("f32 on cpu, 3.4 MiB of
        parameters, 2 CPU threads"; MoE and fixed sliding layers when present)."""
        return _str(_backend.tlib.bosch_torch_checkpoint_describe(self._handle))

    @property
    def suggested(self) -> dict:
        """bosch.json's numbers: window, sink, budget (ints), metric ("exact"
        or "logprob"), each only when suggested."""
        out = {}
        for key in ("window", "sink", "budget", "metric"):
            v = ctypes.c_int64()
            if _backend.tlib.bosch_torch_checkpoint_suggested(self._handle, key.encode(),
                                                              ctypes.byref(v)) == 1:
                out[key] = _backend.METRICS[v.value] if key == "metric" else int(v.value)
        return out

    @property
    def suggested_files(self) -> dict:
        """bosch.json's task files (calib, heldout, heldout_multi,
        heldout_two_hop), resolved against the directory."""
        out = {}
        for key in ("calib", "heldout", "heldout_multi", "heldout_two_hop"):
            f = _backend.tlib.bosch_torch_checkpoint_suggested_file(self._handle, key.encode())
            if f:
                out[key] = _str(f)
        return out

    def evaluator(self, window: int | None = None, sink: int | None = None, metric=None,
                  **options) -> "_backend.Evaluator":
        """An :class:`Evaluator` of the model on the task, with bosch.json's
        window, sink and metric where not given (else 128 - a quarter of the
        context for a built-in NIAH shorter than 512 tokens, as the bosch
        command does -, 4 and "exact"). ``options``: batch, buckets,
        prefix_cache."""
        sug = self.suggested
        if window is None:
            window = sug.get("window", 128)
            if "window" not in sug and self.task_source == "niah":
                window = min(window, max(1, self.task.prompt_len // 4))
        sink = sug.get("sink", 4) if sink is None else sink
        metric = sug.get("metric", "exact") if metric is None else metric
        return _backend.Evaluator(self.model, self.task, window=window, sink=sink, metric=metric,
                                  **options)

    def __repr__(self) -> str:
        if self.closed:
            return "bosch.backend.Checkpoint(closed)"
        return (f"bosch.backend.Checkpoint({self.path!r}, {self.description}; task "
                f"{self.task_source!r}: {len(self.task)} samples of up to "
                f"{self.task.prompt_len} tokens; suggested {self.suggested})")
