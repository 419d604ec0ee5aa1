"""bosch.text: libbosch-text (bosch/text.h) - the BPE tokenizer of the
Qwen2/Qwen3, Llama 3, Llama 2 / Mistral and SmolLM2 families, their chat
formats (Qwen3's, ChatML, Llama 3's), text tasks (JSON Lines) and RULER's
needle-in-a-haystack tasks.

libbosch-text is loaded when this module is first imported (see
``bosch._lib`` for the lookup); it needs neither libtorch nor the search
core, so a host with its own inference engine can tokenize and build tasks
with it alone. Importing this module without the library raises
:class:`bosch.LibraryNotFoundError` (an ImportError) listing what was tried.

    tok = bosch.text.Tokenizer("Qwen3-8B/tokenizer.json")
    ids = tok.encode("Hello")                   # list of ids
    tok.chat_style                              # ChatStyle.QWEN3, from its added tokens
    task = bosch.text.TextTask.ruler(tok, "niah_single_1", context=4096, samples=10)
    task.prompt(0), task.answers(0), task.target(0)
"""

from __future__ import annotations

import ctypes
import enum
import os

from . import _lib
from ._handle import Handle
from ._lib import ChatMessage, RulerParams, c_int32_p, text as _str
from .errors import ErrorCode, check_status, error_for_status

tlib, library_path = _lib.load_text()

__all__ = ["Tokenizer", "TextTask", "chat_format", "match_all", "RULER_TASKS", "TokenizeFlag",
           "ChatFlag", "ChatStyle", "library_path", "create_error"]


class TokenizeFlag(enum.IntFlag):
    """enum bosch_tokenizer_flags."""
    NO_SPECIAL = 1 << 0
    SKIP_SPECIAL = 1 << 1
    ADD_SPECIAL = 1 << 2


class ChatFlag(enum.IntFlag):
    """enum bosch_chat_flags."""
    GENERATION_PROMPT = 1 << 0
    THINKING = 1 << 1


class ChatStyle(enum.IntEnum):
    """enum bosch_chat_style: the chat formats libbosch-text renders."""
    NONE = 0
    QWEN3 = 1
    CHATML = 2
    LLAMA3 = 3

    @classmethod
    def of(cls, style) -> "ChatStyle":
        """A ChatStyle from itself or its name ("qwen3", "chatml", "llama3")."""
        if isinstance(style, str):
            s = ChatStyle(tlib.bosch_chat_style_parse(style.encode()))
            if s == cls.NONE:
                raise ValueError(f"unknown chat style {style!r} (qwen3, chatml, llama3)")
            return s
        return cls(int(style))

    @property
    def label(self) -> str | None:
        """"qwen3", "chatml", "llama3" (bosch_chat_style_name); None for NONE."""
        p = tlib.bosch_chat_style_name(int(self))
        return None if p is None else _str(p)


def _ruler_names() -> tuple[str, ...]:
    out = []
    while (name := tlib.bosch_text_ruler_task_name(len(out))) is not None:
        out.append(_str(name))
    return tuple(out)


#: RULER's NIAH task names (bosch_text_ruler_task_name).
RULER_TASKS = _ruler_names()


def _path(p) -> bytes:
    return os.fsencode(os.fspath(p))


def _bytes(s) -> bytes:
    if isinstance(s, str):
        return s.encode("utf-8")
    return bytes(s)


def create_error() -> tuple[int, str]:
    """(bosch_text_create_status(), bosch_text_create_error()) of this thread."""
    return int(tlib.bosch_text_create_status()), _str(tlib.bosch_text_create_error())


def _creator_error():
    status, msg = create_error()
    return error_for_status(status if status < 0 else ErrorCode.E_NOMEM, msg or None)


def _take_string(ptr: ctypes.c_void_p, n: int) -> str:
    """Copies and frees a string the library allocated (bosch_text_free)."""
    try:
        return ctypes.string_at(ptr.value, n).decode("utf-8", errors="replace") if n else ""
    finally:
        tlib.bosch_text_free(ptr)


def _take_ids(ptr, n: int) -> list[int]:
    """Copies and frees an id array the library allocated (bosch_text_free;
    free(NULL) is a no-op)."""
    try:
        return ptr[:n] if n else []
    finally:
        tlib.bosch_text_free(ctypes.cast(ptr, ctypes.c_void_p))


def _id_array(ids):
    vals = [int(i) for i in ids]
    if any(v < -2**31 or v >= 2**31 for v in vals):
        raise ValueError("token ids must be 32-bit integers")
    return (ctypes.c_int32 * len(vals))(*vals), len(vals)


class Tokenizer(Handle):
    """A Hugging Face tokenizer.json (bosch_tokenizer_open); immutable and
    thread-safe. ``Tokenizer.from_json(text)`` reads one from memory."""

    _kind = "tokenizer"

    def __init__(self, path=None, *, _handle=None):
        if _handle is None:
            if path is None:
                raise TypeError("Tokenizer(path) or Tokenizer.from_json(json)")
            _handle = tlib.bosch_tokenizer_open(_path(path))
            if not _handle:
                raise _creator_error()
        super().__init__(_handle)

    @classmethod
    def from_json(cls, json) -> "Tokenizer":
        data = _bytes(json)
        h = tlib.bosch_tokenizer_from_json(data, len(data))
        if not h:
            raise _creator_error()
        return cls(_handle=h)

    def _free(self, h) -> None:
        tlib.bosch_tokenizer_free(h)

    def __repr__(self) -> str:
        if self.closed:
            return "bosch.text.Tokenizer(closed)"
        return f"bosch.text.Tokenizer(vocab_size={self.vocab_size})"

    @property
    def vocab_size(self) -> int:
        """One past the largest id (vocabulary and added tokens)."""
        return int(tlib.bosch_tokenizer_vocab_size(self._handle))

    def encode(self, text, special: bool = True, add_special: bool = False) -> list[int]:
        """Token ids of `text` (str, or bytes of UTF-8). ``special=False``
        reads added tokens in the text as plain text (BOSCH_TOKENIZE_NO_SPECIAL);
        ``add_special=True`` adds the BOS/EOS of the post-processor's template
        as Hugging Face's encode does (BOSCH_TOKENIZE_ADD_SPECIAL)."""
        data = _bytes(text)
        ids = c_int32_p()
        n = ctypes.c_size_t(0)
        flags = (0 if special else int(TokenizeFlag.NO_SPECIAL)) | \
            (int(TokenizeFlag.ADD_SPECIAL) if add_special else 0)
        check_status(tlib.bosch_tokenizer_encode(self._handle, data, len(data), flags,
                                                 ctypes.byref(ids), ctypes.byref(n)),
                     lambda: "bosch_tokenizer_encode failed")
        return _take_ids(ids, n.value)

    def decode(self, ids, skip_special: bool = False) -> str:
        """Text of `ids` (invalid UTF-8 comes out as U+FFFD); InvalidArgumentError
        for an id outside the vocabulary."""
        arr, n = _id_array(ids)
        out = ctypes.c_void_p()
        length = ctypes.c_size_t(0)
        flags = int(TokenizeFlag.SKIP_SPECIAL) if skip_special else 0
        status = tlib.bosch_tokenizer_decode(self._handle, arr, n, flags, ctypes.byref(out),
                                             ctypes.byref(length))
        if status < 0:
            if out.value:
                tlib.bosch_text_free(out)
            check_status(status, lambda: "bosch_tokenizer_decode: an id outside the "
                                         "vocabulary, or no memory")
        return _take_string(out, length.value)

    def token_id(self, token: str) -> int | None:
        """The id of a stored token string (byte-level alphabet, or an added
        token's content); None when there is none."""
        i = tlib.bosch_tokenizer_token_id(self._handle, _bytes(token))
        return None if i < 0 else int(i)

    def token(self, token_id: int) -> str | None:
        p = tlib.bosch_tokenizer_token(self._handle, int(token_id))
        return None if p is None else _str(p)

    def is_special(self, token_id: int) -> bool:
        return bool(tlib.bosch_tokenizer_is_special(self._handle, int(token_id)))

    def is_ordinary(self, token_id: int) -> bool:
        """An id of the BPE vocabulary proper (not an added token)."""
        return bool(tlib.bosch_tokenizer_is_ordinary(self._handle, int(token_id)))

    def stop_ids(self, rows: int | None = None) -> list[int]:
        """The ids among a model's first `rows` output rows (default:
        vocab_size) that end a greedy continuation as RULER's match metric
        ends it (bosch_tokenizer_stop_ids): the special tokens and the rows
        with no token. The ``stop`` of :meth:`bosch.backend.Model.generate`."""
        rows = self.vocab_size if rows is None else int(rows)
        if rows < 0:
            raise ValueError("rows must not be negative")
        ids = c_int32_p()
        n = ctypes.c_size_t(0)
        check_status(tlib.bosch_tokenizer_stop_ids(self._handle, rows, ctypes.byref(ids),
                                                   ctypes.byref(n)),
                     lambda: "bosch_tokenizer_stop_ids failed")
        return _take_ids(ids, n.value)

    @property
    def template(self) -> tuple[list[int], list[int]]:
        """The special ids ``encode(add_special=True)`` puts before and after the
        text (bosch_tokenizer_template): ([128000], []) for Llama 3."""
        pre, post = c_int32_p(), c_int32_p()
        npre, npost = ctypes.c_size_t(0), ctypes.c_size_t(0)
        check_status(tlib.bosch_tokenizer_template(self._handle, ctypes.byref(pre),
                                                   ctypes.byref(npre), ctypes.byref(post),
                                                   ctypes.byref(npost)))
        return pre[:npre.value] if npre.value else [], post[:npost.value] if npost.value else []

    @property
    def chat_style(self) -> ChatStyle:
        """The chat format of the tokenizer's family, from its added tokens
        (bosch_chat_style_for); ChatStyle.NONE when it has none."""
        return ChatStyle(tlib.bosch_chat_style_for(self._handle))

    def ordinary_ids(self, start: int = 0, stop: int | None = None) -> list[int]:
        """The ordinary ids in [start, stop) (stop: vocab_size): a NIAH filler."""
        stop = self.vocab_size if stop is None else int(stop)
        h = self._handle
        return [i for i in range(int(start), stop) if tlib.bosch_tokenizer_is_ordinary(h, i)]


def chat_format(messages, generation_prompt: bool = True, thinking: bool = False,
                style=ChatStyle.QWEN3) -> str:
    """Renders `messages` (dicts with "role" and "content", or (role, content)
    pairs) in `style` (a ChatStyle or its name; default Qwen3's:
    bosch_chat_format_qwen3; else bosch_chat_format, e.g. with
    ``tokenizer.chat_style``). `thinking` applies to Qwen3's only."""
    style = ChatStyle.of(style)
    if style == ChatStyle.NONE:
        raise ValueError("chat_format: ChatStyle.NONE renders nothing (the tokenizer's family "
                         "has no chat format libbosch-text knows)")
    pairs = []
    for m in messages:
        role, content = (m["role"], m["content"]) if isinstance(m, dict) else m
        pairs.append((_bytes(role), _bytes(content)))
    arr = (ChatMessage * max(1, len(pairs)))(*[ChatMessage(r, c) for r, c in pairs])
    flags = (int(ChatFlag.GENERATION_PROMPT) if generation_prompt else 0) | \
        (int(ChatFlag.THINKING) if thinking else 0)
    out = ctypes.c_void_p()
    n = ctypes.c_size_t(0)
    check_status(tlib.bosch_chat_format(int(style), arr, len(pairs), flags, ctypes.byref(out),
                                        ctypes.byref(n)),
                 lambda: f"bosch_chat_format ({style.label}): unknown role or bad message")
    return _take_string(out, n.value)


def match_all(output: str, answers) -> float:
    """RULER's string_match_all: the share of `answers` found in `output`,
    ignoring ASCII case (bosch_text_match_all)."""
    enc = [_bytes(a) for a in answers]
    arr = (ctypes.c_char_p * max(1, len(enc)))(*enc)
    return float(tlib.bosch_text_match_all(_bytes(output), arr, len(enc)))


class TextTask(Handle):
    """Text samples: a prompt (text or chat messages), an optional answer
    prefix, the answer strings and max_new_tokens (bosch_text_task).
    ``TextTask.read_jsonl(path)`` or ``TextTask.ruler(tokenizer, ...)``;
    immutable. ``len(task)`` is the number of samples."""

    _kind = "text task"

    def __init__(self, *, _handle):
        super().__init__(_handle)

    def _free(self, h) -> None:
        tlib.bosch_text_task_free(h)

    @classmethod
    def read_jsonl(cls, path) -> "TextTask":
        """{"text": ..., "answers": [...]} or {"messages": [...], "answers": [...]}
        per line (optional "answer_prefix", "max_new_tokens")."""
        h = tlib.bosch_text_task_read_jsonl(_path(path))
        if not h:
            raise _creator_error()
        return cls(_handle=h)

    @classmethod
    def ruler(cls, tokenizer: Tokenizer, task: str = "niah_single_1", context: int = 4096,
              samples: int = 10, seed: int = 0, depth_min: float = 0.0,
              depth_max: float = 1.0, chat: bool = True) -> "TextTask":
        """RULER's NIAH task `task` (one of RULER_TASKS) with prompts of at
        most `context` tokens of `tokenizer` (bosch_text_ruler_create); with
        `chat`, one user turn in the chat format of the tokenizer's family
        (``tokenizer.chat_style``; a tokenizer with none is refused)."""
        p = RulerParams()
        tlib.bosch_text_ruler_params_init(ctypes.byref(p))
        p.struct_size = ctypes.sizeof(RulerParams)
        task_b = _bytes(task)
        p.task = task_b
        p.context = int(context)
        p.samples = int(samples)
        p.seed = int(seed)
        p.depth_min = float(depth_min)
        p.depth_max = float(depth_max)
        p.chat = 1 if chat else 0
        h = tlib.bosch_text_ruler_create(tokenizer._handle, ctypes.byref(p))
        if not h:
            raise _creator_error()
        return cls(_handle=h)

    def write_jsonl(self, path) -> None:
        check_status(tlib.bosch_text_task_write_jsonl(self._handle, _path(path)),
                     lambda: f"bosch_text_task_write_jsonl: cannot write {os.fspath(path)}")

    def __len__(self) -> int:
        return int(tlib.bosch_text_task_samples(self._handle))

    @property
    def samples(self) -> int:
        return len(self)

    def _index(self, i: int) -> int:
        n = len(self)
        i = int(i)
        if not 0 <= i < n:
            raise IndexError(f"sample {i} out of range (0..{n - 1})")
        return i

    def chat_style(self, i: int) -> ChatStyle:
        """The chat format of sample i (ChatStyle.NONE for plain text)."""
        return ChatStyle(tlib.bosch_text_task_chat_style(self._handle, self._index(i)))

    def set_chat_style(self, style) -> None:
        """Renders every sample given as messages in `style` (a ChatStyle or
        its name), e.g. a JSON Lines task for ``tokenizer.chat_style``."""
        style = ChatStyle.of(style)
        check_status(tlib.bosch_text_task_set_chat_style(self._handle, int(style)),
                     lambda: f"bosch_text_task_set_chat_style: {style!r}")

    def prompt(self, i: int, thinking: bool = False) -> str:
        """The full prompt of sample i as the model reads it (chat messages
        rendered in the sample's chat format with the generation prompt,
        Qwen3's non-thinking unless `thinking`, then the answer prefix)."""
        out = ctypes.c_void_p()
        n = ctypes.c_size_t(0)
        flags = int(ChatFlag.THINKING) if thinking else 0  # the generation prompt is always on
        check_status(tlib.bosch_text_task_prompt(self._handle, self._index(i), flags,
                                                 ctypes.byref(out), ctypes.byref(n)))
        return _take_string(out, n.value)

    def answers(self, i: int) -> list[str]:
        h, i = self._handle, self._index(i)
        return [_str(tlib.bosch_text_task_answer(h, i, j))
                for j in range(tlib.bosch_text_task_answers(h, i))]

    def target(self, i: int) -> str:
        """The teacher-forced continuation (" a, b")."""
        return _str(tlib.bosch_text_task_target(self._handle, self._index(i)))

    def max_new_tokens(self, i: int) -> int:
        """max_new_tokens of sample i (0: not given)."""
        return int(tlib.bosch_text_task_max_new_tokens(self._handle, self._index(i)))

    def __repr__(self) -> str:
        return "bosch.text.TextTask(closed)" if self.closed else \
            f"bosch.text.TextTask(samples={len(self)})"
