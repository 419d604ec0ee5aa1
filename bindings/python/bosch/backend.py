"""bosch.backend: libbosch-torch (bosch/torch.h), the libtorch backend - a
Qwen3 checkpoint in the Hugging Face layout, tasks (token ids, synthetic
NIAH, text and RULER tasks through :mod:`bosch.text`), the evaluator that
scores unit masks (plugged into :class:`bosch.Optimizer` with no Python in
the loop) and the static head scores of the baselines.

Named ``backend`` so that it never shadows the ``torch`` package; it does
not import PyTorch. libbosch-torch (and libbosch-text, which it links) is
loaded when this module is first imported; without it the import raises
:class:`bosch.LibraryNotFoundError` (an ImportError) listing what was tried.
``bosch.backend_available()`` tells without raising.

    from bosch import backend
    with backend.Model("models/organism", device="cpu") as model:
        task = backend.Task.read_jsonl("models/organism/calib.jsonl")
        ev = backend.Evaluator(model, task, window=32, sink=4, metric="logprob")
        s_full, s_swa = ev.anchors()
        opt = bosch.Optimizer(model.problem(ratio=0.5), seed=0, budget=100)
        result = opt.optimize(batch_evaluator=ev)       # bosch_torch_batch_eval in C

One call opens a model directory the way the bosch command does (model,
tokenizer, bosch.json's suggestions, the default task):

    with backend.Checkpoint.open("models/organism", device="cpu") as ck:
        ev = ck.evaluator()                 # bosch.json's window, sink, metric
        result = bosch.Optimizer(ck.model.problem(ratio=0.5), seed=0,
                                 budget=ck.suggested.get("budget", 200)).optimize(evaluator=ev)

Lifetimes: an :class:`Evaluator` keeps its model and task alive, and a
task made from text keeps its tokenizer; ``close()`` on a model, task or
tokenizer first closes what borrows it.
"""

from __future__ import annotations

import ctypes
import enum
import os
from collections import namedtuple

from . import _json, _lib
from ._handle import Handle
from ._lib import text as _str
from ._masks import double_array, mask_bytes, uint32_array
from .errors import ErrorCode, check_status, error_for_status
from .problem import Problem

tlib, library_path = _lib.load_torch()

__all__ = ["Checkpoint", "Model", "Task", "Evaluator", "Device", "DType", "Metric", "Scorer",
           "SCORERS", "METRICS", "ModelShape", "StaticScores", "Generation", "TaskSample",
           "cuda_available", "cuda_device_count", "set_threads", "get_threads", "create_error", "dtype_name",
           "library_path", "model_defaults", "organism_dir"]


class Device(enum.IntEnum):
    """enum bosch_torch_device (strings "auto", "cpu", "cuda", "cuda:N" are accepted too)."""
    AUTO = 0
    CPU = 1
    CUDA = 2


class DType(enum.IntEnum):
    """enum bosch_torch_dtype."""
    AUTO = 0
    F32 = 1
    BF16 = 2
    F16 = 3


class Metric(enum.IntEnum):
    """enum bosch_torch_metric."""
    EXACT = 0
    LOGPROB = 1
    MATCH = 2


class Scorer(enum.IntEnum):
    """enum bosch_torch_scorer."""
    LOCALITY = 0
    RETRIEVAL = 1
    ECHO_INDUCTION = 2
    FISHER = 3
    DUO_ON_THE_FLY = 4


#: Metric names, in Metric order.
METRICS = ("exact", "logprob", "match")
#: Static scorer names (bosch_torch_scorer_name), in Scorer order.
SCORERS = tuple(_str(tlib.bosch_torch_scorer_name(int(s))) for s in Scorer)

_DTYPES = {"auto": 0, "f32": 1, "float32": 1, "bf16": 2, "bfloat16": 2, "f16": 3,
           "float16": 3, "half": 3}

#: (layers, kv_groups, heads_per_group, vocab) of a model.
ModelShape = namedtuple("ModelShape", "layers kv_groups heads_per_group vocab")
#: Static scores: ``heads`` one per query head (head h of layer l at
#: l * query_heads + h), ``units`` one per (layer, KV group), the max of its heads.
StaticScores = namedtuple("StaticScores", "heads units")
#: Model.generate's result: the new ``tokens``, the KV bytes held and those
#: of a full cache of the same capacity, prefill and decode seconds.
Generation = namedtuple("Generation",
                        "tokens kv_bytes kv_bytes_full prefill_seconds decode_seconds")
#: Task.sample's result: ``prompt`` and ``answer`` ids, and ``max_new``, the
#: tokens the match metric generates at most.
TaskSample = namedtuple("TaskSample", "prompt answer max_new")


def _path(p) -> bytes:
    return os.fsencode(os.fspath(p))


def _code(value, names, enum_type, what: str) -> int:
    if isinstance(value, str):
        key = value.lower()
        table = names if isinstance(names, dict) else {n: i for i, n in enumerate(names)}
        if key not in table:
            raise ValueError(f"unknown {what} {value!r} (one of {', '.join(table)})")
        return table[key]
    return int(enum_type(value))


def create_error() -> tuple[int, str]:
    """(bosch_torch_create_status(), bosch_torch_create_error()) of this thread."""
    return int(tlib.bosch_torch_create_status()), _str(tlib.bosch_torch_create_error())


def _creator_error():
    status, msg = create_error()
    return error_for_status(status if status < 0 else ErrorCode.E_NOMEM, msg or None)


def cuda_available() -> bool:
    """Whether this libbosch-torch can use CUDA (a CUDA build and a visible device)."""
    return bool(tlib.bosch_torch_cuda_available())


def cuda_device_count() -> int:
    """CUDA devices this process sees (bosch_torch_cuda_device_count); 0 without CUDA."""
    return int(tlib.bosch_torch_cuda_device_count())


def dtype_name(dtype) -> str | None:
    """"auto", "f32", "bf16", "f16" (bosch_torch_dtype_name); None for others."""
    p = tlib.bosch_torch_dtype_name(int(dtype))
    return None if p is None else _str(p)


def set_threads(n: int) -> None:
    """libtorch's intra-op threads for the whole process
    (bosch_torch_set_threads: at::set_num_threads, what OMP_NUM_THREADS sets
    at start-up)."""
    if int(n) < 1:
        raise ValueError("threads must be >= 1")
    check_status(tlib.bosch_torch_set_threads(int(n)),
                 lambda: f"bosch_torch_set_threads({int(n)})")


def get_threads() -> int:
    """libtorch's intra-op threads (bosch_torch_threads)."""
    return int(tlib.bosch_torch_threads())


def model_defaults(path) -> dict:
    """The model directory's bosch.json as it is written (suggested window,
    sink, metric, task files...), {} when there is none; not checked, but
    for a key given twice (a ValueError, as the library refuses it).
    :meth:`Checkpoint.open` reads and checks it as the library does
    (``Checkpoint.suggested``, ``Checkpoint.suggested_files``)."""
    file = os.path.join(os.fspath(path), "bosch.json")
    try:
        with open(file, encoding="utf-8") as f:
            data = _json.loads(f.read(), file)
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def organism_dir() -> str | None:
    """The shipped test model (models/organism): $BOSCH_ORGANISM, else
    <prefix>/share/libbosch/organism beside the loaded libbosch, else the
    source tree's models/organism above a build's lib/; None if not found."""
    cands = [os.environ.get("BOSCH_ORGANISM")]
    d = os.path.dirname(_lib.library_file)
    for up in ("..", "../..", "../../.."):
        cands.append(os.path.join(d, up, "share", "libbosch", "organism"))
        cands.append(os.path.join(d, up, "models", "organism"))
    for c in filter(None, cands):
        if os.path.isfile(os.path.join(c, "config.json")):
            return os.path.normpath(c)
    return None


class Model(Handle):
    """A Qwen3 checkpoint (config.json + model.safetensors) on a device.

    ``device``: "auto" (CUDA device 0 when available), "cpu", "cuda",
    "cuda:N" or a :class:`Device`; ``dtype``: "auto" (bf16 on CUDA, f32 on
    the CPU), "f32", "bf16", "f16" or a :class:`DType`; ``threads``: sets
    libtorch's intra-op threads first (:func:`set_threads`, process-wide).
    One thread at a time may use a model.
    """

    _kind = "model"

    def __init__(self, path, device="auto", dtype="auto", threads: int | None = None):
        if threads is not None:
            set_threads(threads)
        dt = _code(dtype, _DTYPES, DType, "dtype")
        if isinstance(device, str):
            h = tlib.bosch_torch_model_open_device(_path(path), device.encode(), dt)
        else:
            h = tlib.bosch_torch_model_open(_path(path), int(Device(device)), dt)
        if not h:
            raise _creator_error()
        super().__init__(h)
        self._adopt(path)

    @classmethod
    def _lent_by(cls, h, owner, path) -> "Model":
        """The model a checkpoint holds: usable while `owner` is open, freed by it."""
        m = cls.__new__(cls)
        m._lent = True
        Handle.__init__(m, h, borrows=(owner,))
        m._adopt(path)
        return m

    def _adopt(self, path) -> None:
        h = self._h
        self.path = os.fspath(path)
        L, G, Hg, V = (ctypes.c_uint32() for _ in range(4))
        self._check(tlib.bosch_torch_model_shape(h, ctypes.byref(L), ctypes.byref(G),
                                                 ctypes.byref(Hg), ctypes.byref(V)))
        self.shape = ModelShape(L.value, G.value, Hg.value, V.value)

    def _free(self, h) -> None:
        tlib.bosch_torch_model_free(h)

    def _check(self, status: int) -> int:
        return check_status(status, lambda: self.last_error)

    @property
    def last_error(self) -> str:
        """Message of the last failing forward() / scores() ("" if none)."""
        return _str(tlib.bosch_torch_model_last_error(self._h)) if self._h else ""

    def __repr__(self) -> str:
        if self.closed:
            return "bosch.backend.Model(closed)"
        s = self.shape
        return (f"bosch.backend.Model({self.path!r}, layers={s.layers}, kv_groups={s.kv_groups}, "
                f"heads_per_group={s.heads_per_group}, vocab={s.vocab}, device={self.device!r}, "
                f"dtype={self.dtype!r})")

    # -- shape and placement ------------------------------------------------------
    layers = property(lambda self: self.shape.layers)
    kv_groups = property(lambda self: self.shape.kv_groups)
    heads_per_group = property(lambda self: self.shape.heads_per_group)
    vocab = property(lambda self: self.shape.vocab)
    #: Decision units (layers x kv_groups): the length of a mask.
    units = property(lambda self: self.shape.layers * self.shape.kv_groups)
    query_heads = property(lambda self: self.units * self.shape.heads_per_group)

    @property
    def device(self) -> str:
        """libtorch's name of the device ("cpu", "cuda:0")."""
        return _str(tlib.bosch_torch_model_device(self._handle))

    def _memory(self) -> tuple[int, int]:
        nbytes, dt = ctypes.c_uint64(0), ctypes.c_int(0)
        self._check(tlib.bosch_torch_model_memory(self._handle, ctypes.byref(nbytes),
                                                  ctypes.byref(dt)))
        return nbytes.value, dt.value

    @property
    def identity(self) -> str:
        """What identifies the model's scores: hashes of its config fields and
        weight tensors (bosch_torch_model_identity)."""
        return _str(tlib.bosch_torch_model_identity(self._handle))

    @property
    def param_bytes(self) -> int:
        """Bytes of the parameters on the device (tied embeddings counted once)."""
        return self._memory()[0]

    @property
    def dtype(self) -> str:
        """The dtype in use ("f32", "bf16", "f16"; never "auto")."""
        return dtype_name(self._memory()[1])

    @property
    def sliding_window(self) -> int:
        """The config's sliding window W of a hybrid checkpoint (layers that
        always slide over W tokens, no sink), 0 when no layer slides."""
        return int(tlib.bosch_torch_model_sliding_window(self._handle))

    @property
    def max_positions(self) -> int:
        """The config's max_position_embeddings (0: not given): generate()
        refuses a prompt + max_new beyond it."""
        return int(tlib.bosch_torch_model_max_positions(self._handle))

    @property
    def sliding_layers(self) -> list[bool]:
        """Per layer: whether the config makes it sliding (those units are
        fixed SWA in :meth:`problem`)."""
        out = []
        for layer in range(self.layers):
            rc = tlib.bosch_torch_model_layer_sliding(self._handle, layer)
            check_status(rc, lambda: f"bosch_torch_model_layer_sliding({layer})")
            out.append(bool(rc))
        return out

    @property
    def experts(self) -> tuple[int, int, int]:
        """A mixture-of-experts model (Qwen3MoeForCausalLM): (experts per
        sparse layer, experts per token, sparse layers); (0, 0, 0) for a
        dense model."""
        e, k, n = (ctypes.c_uint32() for _ in range(3))
        self._check(tlib.bosch_torch_model_experts(self._handle, ctypes.byref(e),
                                                   ctypes.byref(k), ctypes.byref(n)))
        return e.value, k.value, n.value

    def problem(self, ratio: float | None = None, units: int | None = None) -> Problem:
        """A bosch.Problem of the model's shape (target ratio 0.5 unless given),
        with the units of the config's sliding layers fixed to SWA."""
        h = tlib.bosch_torch_model_problem(self._handle)
        if not h:
            raise _creator_error()
        return Problem(0, 0, ratio=ratio, units=units, _handle=h)

    # -- computation --------------------------------------------------------------
    def forward(self, tokens, masks=None, window: int = 1, sink: int = 0, positions=None):
        """One forward pass (bosch_torch_model_forward): `tokens` batch x len
        ids (nested sequences or a 2-D array), `masks` one unit mask per
        sequence (None: all full), SWA of `window` tokens plus `sink`;
        logits at `positions` (default: the last one). Returns a numpy
        float32 array [batch, npos, vocab] when numpy is importable, else
        nested lists."""
        rows = [[int(t) for t in row] for row in tokens]
        batch = len(rows)
        if batch == 0 or not rows[0]:
            raise ValueError("tokens: at least one non-empty sequence")
        length = len(rows[0])
        if any(len(r) != length for r in rows):
            raise ValueError("tokens: every sequence must have the same length")
        tok = (ctypes.c_int32 * (batch * length))(*[t for r in rows for t in r])
        pos_list = [length - 1] if positions is None else [int(p) for p in positions]
        pos = (ctypes.c_int32 * len(pos_list))(*pos_list)
        mbuf = None
        if masks is not None:
            raw, n = _mask_matrix(masks, self.units)
            if n != batch:
                raise ValueError(f"masks: expected {batch} masks (one per sequence), got {n}")
            mbuf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
        vocab = self.vocab
        out = (ctypes.c_float * (batch * len(pos_list) * vocab))()
        self._check(tlib.bosch_torch_model_forward(self._handle, tok, batch, length, mbuf,
                                                   int(window), int(sink), pos, len(pos_list),
                                                   out))
        try:
            import numpy as np
        except ImportError:
            flat = list(out)
            npos = len(pos_list)
            return [[flat[(b * npos + p) * vocab:(b * npos + p + 1) * vocab]
                     for p in range(npos)] for b in range(batch)]
        return np.frombuffer(out, dtype=np.float32).reshape(batch, len(pos_list), vocab)

    def generate(self, prompt, mask=None, window: int = 1, sink: int = 0, max_new: int = 32,
                 stop=(), reference: bool = False) -> "Generation":
        """Greedy continuation of `prompt` (token ids) through the hybrid KV
        cache (bosch_torch_generate): each KV head keeps every position
        (full) or its `sink` first and last `window` positions (`mask`, one
        unit mask: nonzero = SWA; None = all full). At most `max_new` new
        tokens; a token of `stop` ends it (kept; a tokenizer's
        :meth:`~bosch.text.Tokenizer.stop_ids` stop as the match metric
        does). Returns a :class:`Generation` (tokens, KV bytes held and of a
        full cache, prefill and decode seconds). ``reference=True``: the
        same continuation by the masked forward over the whole sequence per
        token, no cache (bosch_torch_generate_reference; bytes and times 0),
        what the cache must reproduce."""
        ids = [int(t) for t in prompt]
        if not ids:
            raise ValueError("prompt: at least one token")
        stops = [int(t) for t in stop]
        mbuf, units = None, 0
        if mask is not None:
            raw, n = _mask_matrix([mask], self.units)
            mbuf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
            units = self.units
        p = (ctypes.c_int32 * len(ids))(*ids)
        sb = (ctypes.c_int32 * max(1, len(stops)))(*stops)
        out = (ctypes.c_int32 * max(1, int(max_new)))()
        n_out = ctypes.c_size_t()
        info = _lib.Generation(struct_size=ctypes.sizeof(_lib.Generation))
        args = (self._handle, mbuf, units, int(window), int(sink), p, len(ids), int(max_new),
                sb, len(stops), out, ctypes.byref(n_out))
        if reference:
            self._check(tlib.bosch_torch_generate_reference(*args))
        else:
            self._check(tlib.bosch_torch_generate(*args, ctypes.byref(info)))
        return Generation(list(out[:n_out.value]), info.kv_bytes, info.kv_bytes_full,
                          info.prefill_seconds, info.decode_seconds)

    def scores(self, task: "Task", scorer="locality", window: int = 1024,
               sink: int = 0) -> StaticScores:
        """A static head score on every sample of `task` (bosch_torch_model_scores):
        `scorer` one of SCORERS ("locality", "retrieval", "echo-induction",
        "fisher") or a :class:`Scorer`. Higher = keep full; feed ``.units`` to
        :func:`bosch.baseline_static` or ``.heads`` to
        :func:`bosch.baseline_static_heads`."""
        code = _code(scorer, SCORERS, Scorer, "scorer")
        heads = (ctypes.c_double * self.query_heads)()
        units = (ctypes.c_double * self.units)()
        self._check(tlib.bosch_torch_model_scores(self._handle, task._handle, code, int(window),
                                                  int(sink), heads, units))
        return StaticScores(list(heads), list(units))


class Task(Handle):
    """Token-id samples: a prompt followed by an answer span (immutable; may
    be shared by evaluators). ``len(task)`` is the number of samples."""

    _kind = "task"

    def __init__(self, *, _handle, borrows=()):
        super().__init__(_handle, borrows)

    def _free(self, h) -> None:
        tlib.bosch_torch_task_free(h)

    @classmethod
    def _made(cls, h, borrows=()) -> "Task":
        if not h:
            raise _creator_error()
        return cls(_handle=h, borrows=borrows)

    @classmethod
    def read_jsonl(cls, path) -> "Task":
        """{"prompt": [ids], "answer": [ids]} per line (bosch_torch_task_read_jsonl)."""
        return cls._made(tlib.bosch_torch_task_read_jsonl(_path(path)))

    @classmethod
    def niah(cls, vocab: int, context: int, samples: int, needles: int = 1, key_len: int = 2,
             value_len: int = 2, depth_min: float = 0.0, depth_max: float = 1.0,
             seed: int = 0) -> "Task":
        """Synthetic needle-in-a-haystack over ids [3, vocab), markers 0, 1, 2
        (bosch_torch_task_create_niah)."""
        return cls._made(tlib.bosch_torch_task_create_niah(
            int(vocab), int(context), int(samples), int(needles), int(key_len), int(value_len),
            float(depth_min), float(depth_max), int(seed)))

    @classmethod
    def niah_ids(cls, filler, context: int, samples: int, markers=(0, 1, 2), needles: int = 1,
                 key_len: int = 2, value_len: int = 2, depth_min: float = 0.0,
                 depth_max: float = 1.0, seed: int = 0) -> "Task":
        """The same task over the ids of `filler` (e.g. ``tokenizer.ordinary_ids()``)
        with markers (KEY, VAL, QRY) (bosch_torch_task_create_niah_ids)."""
        ids = [int(i) for i in filler]
        arr = (ctypes.c_int32 * max(1, len(ids)))(*ids)
        k, v, q = (int(m) for m in markers)
        return cls._made(tlib.bosch_torch_task_create_niah_ids(
            arr, len(ids), k, v, q, int(context), int(samples), int(needles), int(key_len),
            int(value_len), float(depth_min), float(depth_max), int(seed)))

    @classmethod
    def from_text(cls, text_task, tokenizer, thinking: bool = False) -> "Task":
        """A :class:`bosch.text.TextTask` encoded with `tokenizer`
        (bosch_torch_task_from_text); the task keeps the tokenizer alive."""
        flags = 2 if thinking else 0  # BOSCH_CHAT_THINKING
        return cls._made(tlib.bosch_torch_task_from_text(text_task._handle, tokenizer._handle,
                                                         flags), borrows=(tokenizer,))

    @classmethod
    def from_text_jsonl(cls, path, tokenizer, thinking: bool = False) -> "Task":
        """A text JSON Lines file ({"text"|"messages", "answers"}) encoded with `tokenizer`."""
        from .text import TextTask
        with TextTask.read_jsonl(path) as tt:
            return cls.from_text(tt, tokenizer, thinking)

    @classmethod
    def ruler(cls, tokenizer, task: str = "niah_single_1", context: int = 4096,
              samples: int = 10, seed: int = 0, **params) -> "Task":
        """RULER's NIAH task `task` generated with `tokenizer` and encoded
        (bosch_text_ruler_create + bosch_torch_task_from_text); `params`:
        depth_min, depth_max, chat."""
        from .text import TextTask
        with TextTask.ruler(tokenizer, task, context, samples, seed, **params) as tt:
            return cls.from_text(tt, tokenizer)

    def write_jsonl(self, path) -> None:
        check_status(tlib.bosch_torch_task_write_jsonl(self._handle, _path(path)),
                     lambda: f"bosch_torch_task_write_jsonl: cannot write {os.fspath(path)}")

    def __len__(self) -> int:
        return int(tlib.bosch_torch_task_samples(self._handle))

    @property
    def samples(self) -> int:
        return len(self)

    @property
    def prompt_len(self) -> int:
        """Tokens of the longest prompt."""
        return int(tlib.bosch_torch_task_prompt_len(self._handle))

    def sample(self, i: int) -> "TaskSample":
        """Sample i: its prompt and answer ids, and the tokens the match
        metric generates for it at most (bosch_torch_task_sample)."""
        n = len(self)
        if not 0 <= int(i) < n:
            raise IndexError(f"sample {i} out of range (0..{n - 1})")
        p, a = ctypes.POINTER(ctypes.c_int32)(), ctypes.POINTER(ctypes.c_int32)()
        np_, na = ctypes.c_size_t(), ctypes.c_size_t()
        mx = ctypes.c_uint32()
        check_status(tlib.bosch_torch_task_sample(self._handle, int(i), ctypes.byref(p),
                                                  ctypes.byref(np_), ctypes.byref(a),
                                                  ctypes.byref(na), ctypes.byref(mx)))
        return TaskSample(list(p[:np_.value]), list(a[:na.value]), mx.value)

    def prompt_len_of(self, i: int) -> int:
        n = len(self)
        if not 0 <= int(i) < n:
            raise IndexError(f"sample {i} out of range (0..{n - 1})")
        return int(tlib.bosch_torch_task_prompt_len_of(self._handle, int(i)))

    def __repr__(self) -> str:
        return "bosch.backend.Task(closed)" if self.closed else \
            f"bosch.backend.Task(samples={len(self)}, prompt_len={self.prompt_len})"


def _mask_matrix(masks, units: int) -> tuple[bytes, int]:
    """n masks as n*units bytes of 0/1: a sequence of masks (each bytes, a
    sequence of 0/1 or a '0'/'1' string), a 2-D array, or bytes of n*units."""
    if hasattr(masks, "ndim") and hasattr(masks, "shape"):  # numpy-like
        if masks.ndim == 1:
            masks = [masks]
        elif masks.ndim != 2:
            raise ValueError("masks: expected a 2-D array (n x units)")
    if isinstance(masks, (bytes, bytearray, memoryview)):
        raw = bytes(masks)
        if units == 0 or len(raw) % units:
            raise ValueError(f"masks: {len(raw)} bytes is not a multiple of {units} units")
        return mask_bytes(raw, len(raw)), len(raw) // units
    if isinstance(masks, str):
        return mask_bytes(masks, units), 1
    rows = list(masks)
    if rows and (isinstance(rows[0], int)
                 or type(rows[0]).__name__.startswith(("int", "uint", "bool"))):
        raise TypeError("masks: expected a sequence of masks; score() takes a single mask")
    return b"".join(mask_bytes(m, units, f"masks[{i}]") for i, m in enumerate(rows)), len(rows)


class Evaluator(Handle):
    """Scores unit masks of `model` on `task` (bosch_torch_evaluator_open):
    SWA of `window` tokens plus `sink`, `metric` "exact" | "logprob" |
    "match" (or a :class:`Metric`). ``batch`` candidates per forward,
    ``buckets`` length buckets (0: the default), ``prefix_cache``.

    Pass it to ``Optimizer.optimize(batch_evaluator=ev)`` (or ``evaluator=``):
    the library then calls bosch_torch_batch_eval itself; as
    ``request_batch_evaluator=ev`` (or ``request_evaluator=``) it calls
    bosch_torch_request_batch_eval, which reads each request's fidelity and
    draw (for ``screen_fidelity`` and ``confirm``). Calling it
    (``ev(masks)``) scores a batch from Python.
    """

    _kind = "evaluator"

    def __init__(self, model: Model, task: Task, window: int, sink: int = 0, metric="exact",
                 batch: int | None = None, buckets: int | None = None,
                 prefix_cache: bool | None = None):
        code = _code(metric, METRICS, Metric, "metric")
        if int(window) < 1 or int(sink) < 0:
            raise ValueError("window must be >= 1 and sink >= 0")
        h = tlib.bosch_torch_evaluator_open(model._handle, task._handle, int(window), int(sink),
                                            code)
        if not h:
            raise _creator_error()
        super().__init__(h, borrows=(model, task))
        self.model, self.task = model, task
        self._screen = None  # set_screen_task's task, kept alive
        self.window, self.sink, self.metric = int(window), int(sink), METRICS[code]
        self.units = model.units
        if batch is not None:
            self.set_batch(batch)
        if buckets is not None:
            self.set_buckets(buckets)
        if prefix_cache is not None:
            self.set_prefix_cache(prefix_cache)

    def _free(self, h) -> None:
        tlib.bosch_torch_evaluator_free(h)

    @property
    def last_error(self) -> str:
        return _str(tlib.bosch_torch_evaluator_last_error(self._h)) if self._h else ""

    def _check(self, status: int) -> int:
        return check_status(status, lambda: self.last_error)

    def __repr__(self) -> str:
        return "bosch.backend.Evaluator(closed)" if self.closed else (
            f"bosch.backend.Evaluator(units={self.units}, window={self.window}, "
            f"sink={self.sink}, metric={self.metric!r})")

    def set_batch(self, candidates: int) -> "Evaluator":
        """Candidates scored per forward pass (default 1)."""
        self._check(tlib.bosch_torch_evaluator_set_batch(self._handle, int(candidates)))
        return self

    def set_buckets(self, buckets: int) -> "Evaluator":
        """Length buckets for prompts of different lengths (0: default 8, 1: one)."""
        self._check(tlib.bosch_torch_evaluator_set_buckets(self._handle, int(buckets)))
        return self

    def set_forward_samples(self, samples: int) -> "Evaluator":
        """At most `samples` samples of a candidate per forward pass
        (bosch_torch_evaluator_set_forward_samples; 0, the default: a length
        bucket). 1: every sample's value is the same bit for bit whichever
        samples a request is scored on, so a request cut into parts (MPI
        ranks, :meth:`sample_values`) scores exactly as whole."""
        self._check(tlib.bosch_torch_evaluator_set_forward_samples(self._handle, int(samples)))
        return self

    def request_samples(self, fidelity: float = 1.0) -> int:
        """The samples a request at `fidelity` is scored on
        (bosch_torch_request_samples); ValueError outside (0, 1]."""
        k = tlib.bosch_torch_request_samples(float(fidelity), self._handle)
        if k == 0:
            raise ValueError(f"fidelity {fidelity!r} is outside (0, 1]")
        return int(k)

    def sample_values(self, mask, fidelity: float = 1.0, draw: int = 0, first: int = 0,
                      count: int | None = None) -> list[float]:
        """The values of samples [first, first + count) of one request
        (bosch_torch_sample_eval; count None: to the last). A request's score
        is the sum of its samples' values, added in order, over their count."""
        raw = mask_bytes(mask, self.units)
        k = self.request_samples(fidelity)
        n = k - int(first) if count is None else int(count)
        out = (ctypes.c_double * max(1, n))()
        buf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
        status = tlib.bosch_torch_sample_eval(buf, float(fidelity), int(draw), int(first),
                                              max(0, n), self.units, out, self._handle)
        if status != 0:
            check_status(status if status < 0 else ErrorCode.E_EVALUATOR, lambda: self.last_error)
        return list(out)[:max(0, n)]

    def set_screen_task(self, task: "Task | None") -> "Evaluator":
        """Length as a fidelity (bosch_torch_evaluator_set_screen_task):
        requests below fidelity 1 (the optimizer's ``screen_fidelity``) are
        scored on every sample of `task`, the same samples rendered shorter
        (e.g. ``bosch.text.TextTask.ruler`` with the same seed and samples at
        a shorter context); requests at fidelity 1 stay on the evaluator's
        task. `task` is checked against it (sample count, answers, shorter
        prompts) and kept alive while set; None removes it."""
        self._check(tlib.bosch_torch_evaluator_set_screen_task(
            self._handle, None if task is None else task._handle))
        if self._screen is not None:
            self._screen._dependents.discard(self)
        if task is not None:
            task._dependents.add(self)  # closed after this evaluator
        self._screen = task
        return self

    def set_prefix_cache(self, on: bool = True) -> "Evaluator":
        self._check(tlib.bosch_torch_evaluator_set_prefix_cache(self._handle, 1 if on else 0))
        return self

    def set_reference(self, mask=None) -> "Evaluator":
        """The mask whose hidden states the prefix cache holds
        (bosch_torch_evaluator_set_reference; None = all full, the default):
        candidates start at the highest cached layer not above their first
        layer differing from it. Give it the search's incumbent. Scores do
        not change; the cache is rebuilt on the next evaluation."""
        if mask is None:
            self._check(tlib.bosch_torch_evaluator_set_reference(self._handle, None, 0))
            return self
        raw, n = _mask_matrix([mask], self.units)
        buf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
        self._check(tlib.bosch_torch_evaluator_set_reference(self._handle, buf, len(raw)))
        return self

    def noise(self) -> float:
        """The evaluator's numerical noise (bosch_torch_evaluator_noise): how
        far its scores move by rounding alone, measured once (four
        evaluations of the task) from the anchors scored through two
        attention paths. Give it to
        :meth:`bosch.Optimizer.set_anchor_tolerance`."""
        out = ctypes.c_double(0.0)
        self._check(tlib.bosch_torch_evaluator_noise(self._handle, ctypes.byref(out)))
        return out.value

    def identify(self, optimizer) -> "Evaluator":
        """Sets the optimizer's run identity to this evaluator's model, task,
        metric, window, sink and dtype (bosch_torch_evaluator_identify): a
        journal resumed with any of them changed is refused."""
        check_status(tlib.bosch_torch_evaluator_identify(self._handle, optimizer._handle),
                     optimizer._last_error)
        return self

    def score_batch(self, masks) -> list[float]:
        """Scores of n masks (see :func:`_mask_matrix` for the accepted forms)."""
        raw, n = _mask_matrix(masks, self.units)
        if n == 0:
            return []
        buf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
        out = (ctypes.c_double * n)()
        status = tlib.bosch_torch_batch_eval(buf, n, self.units, out, self._handle)
        if status != 0:
            check_status(status if status < 0 else ErrorCode.E_EVALUATOR, lambda: self.last_error)
        return list(out)

    def score_requests(self, masks, fidelities, draws) -> list[float]:
        """Scores of n requests (bosch_torch_request_batch_eval): mask i on
        k = max(1, ceil(fidelities[i] * samples)) samples from sample
        (draws[i] * k) mod samples on, cyclically. InvalidArgumentError for a
        fidelity outside (0, 1]."""
        raw, n = _mask_matrix(masks, self.units)
        fid = double_array(list(fidelities), n, "fidelities")
        drw = uint32_array(list(draws), n, "draws")
        if n == 0:
            return []
        fn = _lib.torch_request_batch_eval_pointer()
        buf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
        out = (ctypes.c_double * n)()
        status = fn(buf, fid, drw, n, self.units, out, self._handle)
        if status != 0:
            check_status(status if status < 0 else ErrorCode.E_EVALUATOR, lambda: self.last_error)
        return list(out)

    def __call__(self, masks) -> list[float]:
        return self.score_batch(masks)

    def score(self, mask) -> float:
        """The score of one mask (bytes, a sequence of 0/1, a '0'/'1' string)."""
        return self.score_batch([mask_bytes(mask, self.units)])[0]

    def anchors(self) -> tuple[float, float]:
        """(S_full, S_allSWA): the scores of the all-full and all-SWA masks, in
        one batch (what the optimizer's anchors stage evaluates)."""
        full, swa = self.score_batch([bytes(self.units), b"\x01" * self.units])
        return full, swa

    # Hook of Optimizer.set_batch_evaluator: the C function and its user data.
    def _c_batch_evaluator(self):
        return _lib.torch_batch_eval_pointer(), self._handle

    # Hook of Optimizer.set_request_batch_evaluator / set_request_evaluator:
    # bosch_torch_request_batch_eval (fidelity f: ceil(f * samples) samples,
    # starting at draws[i] * k, cyclically) and its user data.
    def _c_request_batch_evaluator(self):
        return _lib.torch_request_batch_eval_pointer(), self._handle

    # Hook of bosch.mpi: (samples, sample_eval) callbacks for requests in parts.
    def _c_sample_evaluator(self):
        return _lib.torch_sample_pointers()

    def _c_last_error(self) -> str:
        return self.last_error


from ._checkpoint import Checkpoint  # noqa: E402  (builds on Model, Task, Evaluator above)
