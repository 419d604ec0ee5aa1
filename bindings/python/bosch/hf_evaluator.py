"""bosch.hf.Evaluator: scores masks of a transformers model on a task, with
libbosch-torch's definitions, so that either is the other's independent
check (issue 39). Reached as ``bosch.hf.Evaluator`` / ``bosch.hf.Task``.

A sample is a prompt (token ids) and an answer (ids); text tasks also carry
the answer strings and the continuation length of the match metric.
  logprob  mean over the answer tokens of log softmax(logits)[token], under
           teacher forcing (prompt + answer[:-1]);
  exact    1 when every answer position's argmax is the answer token, else 0;
  match    the prompt continued greedily (at most max_new tokens; a special
           token ends it, kept; a row the tokenizer has no token for ends it,
           dropped), decoded without special tokens, scored by the share of
           the answer strings it contains (bosch.text.match_all).
A mask's score is the mean of its samples' values, added in ascending
sample order. A request (fidelity f, draw d) is scored on k = max(1,
ceil(f x samples)) samples from (d x k) mod samples on, cyclically, as
libbosch-torch's bosch_torch_request_batch_eval.

Batching: `batch` candidates per forward (each row its own mask); length
buckets: samples padded on the right to the longest of their bucket (causal
attention: pads never change earlier positions).
"""
from __future__ import annotations

import math
import os
from typing import NamedTuple

from . import _json
from . import hf as _hf
from ._masks import mask_bytes

__all__ = ["Sample", "Task", "Evaluator"]

METRICS = ("exact", "logprob", "match")


class Sample(NamedTuple):
    prompt: list
    answer: list
    answers: list = []
    max_new: int = 0  # 0: len(answer) + 16

    def generation_length(self) -> int:
        return self.max_new if self.max_new > 0 else len(self.answer) + 16


class Task:
    """Samples of token ids, and the tokenizer of a text task (match)."""

    def __init__(self, samples, tokenizer=None):
        self.samples = [s if isinstance(s, Sample) else Sample(*s) for s in samples]
        if not self.samples:
            raise ValueError("a task needs at least one sample")
        for i, s in enumerate(self.samples):
            if not s.prompt or not s.answer:
                raise ValueError("sample %d: empty prompt or answer" % i)
        self.tokenizer = tokenizer

    def __len__(self) -> int:
        return len(self.samples)

    @classmethod
    def from_text(cls, text_task, tokenizer, thinking: bool = False) -> "Task":
        """A bosch.text.TextTask encoded as libbosch-torch encodes it
        (bosch_torch_task_from_text): the rendered prompt with its chat
        markup as special ids, the target as plain text."""
        samples = []
        for i in range(len(text_task)):
            samples.append(Sample(tokenizer.encode(text_task.prompt(i, thinking)),
                                  tokenizer.encode(text_task.target(i), special=False),
                                  text_task.answers(i), text_task.max_new_tokens(i)))
        return cls(samples, tokenizer)

    @classmethod
    def read_jsonl(cls, path, tokenizer=None) -> "Task":
        """Token JSON Lines ({"prompt": [..], "answer": [..]}), or, with a
        tokenizer, a text task file (bosch.text.TextTask.read_jsonl). A key
        given twice in a line is a ValueError, as libbosch-torch's."""
        name = os.fspath(path)
        with open(name) as f:
            lines = [(i, l) for i, l in enumerate(f, 1) if l.strip()]
        first = _json.loads(lines[0][1], f"{name}:{lines[0][0]}") if lines else {}
        if isinstance(first.get("prompt"), list):
            rows = [_json.loads(l, f"{name}:{i}") for i, l in lines]
            return cls([Sample(r["prompt"], r["answer"]) for r in rows])
        if tokenizer is None:
            raise ValueError("%s: a text task needs a tokenizer" % os.fspath(path))
        from .text import TextTask
        with TextTask.read_jsonl(path) as tt:
            return cls.from_text(tt, tokenizer)


def request_span(samples: int, fidelity: float, draw: int) -> list[int]:
    """The samples of a request, ascending (libbosch-torch's rule)."""
    if not 0.0 < fidelity <= 1.0:
        raise ValueError("fidelity %g is outside (0, 1]" % fidelity)
    k = min(samples, max(1, math.ceil(fidelity * samples * (1.0 - 1e-12))))
    if k == samples:
        return list(range(samples))
    first = (draw % samples) * k % samples
    return sorted((first + j) % samples for j in range(k))


class Evaluator:
    """Scores unit masks of `model` (a transformers causal LM) on `task`
    with sliding windows of `window` tokens plus `sink` (bosch.hf.apply's
    rule), by `metric`. ``ev(masks)`` is a batch evaluator for
    ``Optimizer.optimize(batch_evaluator=ev)``; ``ev.requests`` a request
    batch evaluator (``set_request_batch_evaluator``)."""

    def __init__(self, model, task: Task, window: int, sink: int = 0, metric: str = "logprob",
                 batch: int = 1, buckets: int = 1):
        import torch  # noqa: F401
        if metric not in METRICS:
            raise ValueError("metric: one of %s" % ", ".join(METRICS))
        if metric == "match" and task.tokenizer is None:
            raise ValueError("the match metric needs a task made from text (Task.from_text)")
        cfg = model.config
        vocab = cfg.vocab_size
        for i, s in enumerate(task.samples):
            for t in list(s.prompt) + list(s.answer):
                if not 0 <= t < vocab:
                    raise ValueError("sample %d: token %d outside the vocabulary [0, %d)"
                                     % (i, t, vocab))
        self.model, self.task, self.metric = model, task, metric
        self.window, self.sink = int(window), int(sink)
        if self.window < 1 or self.sink < 0:
            raise ValueError("window must be >= 1 and sink >= 0")
        self.batch = max(1, int(batch))
        self.buckets = max(1, int(buckets))
        self.L, self.G = cfg.num_hidden_layers, cfg.num_key_value_heads
        self.units = self.L * self.G
        self.device = next(model.parameters()).device
        self._stop = None
        self._screen = None  # set_screen_task: an Evaluator of the screen task

    # -- masks -----------------------------------------------------------------------
    def _rows(self, masks):
        return [list(mask_bytes(m, self.units)) for m in masks]

    def _apply(self, rows):
        """The model attends with one unit mask per batch row."""
        import torch
        from .selection import Selection
        sel = Selection(self.L, self.G, self.model.config.num_attention_heads // self.G)
        _hf.apply(self.model, sel, window=self.window, sink=self.sink, backend="sdpa")
        R = self.model.config.num_attention_heads // self.G
        per = torch.tensor(rows, dtype=torch.bool).view(len(rows), self.L, self.G)
        for l, m in enumerate(_hf.applied(self.model).modules_by_layer()):
            m._bosch_units["head_sliding"] = per[:, l].repeat_interleave(R, dim=1)

    # -- metrics ---------------------------------------------------------------------
    def _buckets(self, idx):
        """Consecutive-length groups of the samples `idx` (at most self.buckets)."""
        order = sorted(idx, key=lambda i: (self._seq_len(i), i))
        n = min(self.buckets, len(order))
        size = math.ceil(len(order) / n)
        return [order[j:j + size] for j in range(0, len(order), size)]

    def _seq_len(self, i):
        s = self.task.samples[i]
        return len(s.prompt) + (len(s.answer) - 1 if self.metric != "match" else 0)

    def _teacher_forced(self, rows, idx):
        """{(candidate, sample): value} for logprob / exact."""
        import torch
        vals = {}
        for group in self._buckets(idx):
            T = max(self._seq_len(i) for i in group)
            for c0 in range(0, len(rows), self.batch):
                cands = list(range(c0, min(len(rows), c0 + self.batch)))
                seqs, masks = [], []
                for c in cands:
                    for i in group:
                        s = self.task.samples[i]
                        ids = list(s.prompt) + list(s.answer[:-1])
                        seqs.append(ids + [0] * (T - len(ids)))
                        masks.append(rows[c])
                self._apply(masks)
                try:
                    with torch.no_grad():
                        logits = self.model(torch.tensor(seqs, device=self.device),
                                            use_cache=False).logits.float()
                finally:
                    _hf.remove(self.model)
                r = 0
                for c in cands:
                    for i in group:
                        s = self.task.samples[i]
                        P, A = len(s.prompt), len(s.answer)
                        lg = logits[r, P - 1:P - 1 + A]
                        ans = torch.tensor(s.answer, device=lg.device)
                        if self.metric == "logprob":
                            lp = torch.log_softmax(lg, dim=-1).gather(1, ans.view(-1, 1))
                            vals[c, i] = lp.double().mean().item()
                        else:
                            vals[c, i] = 1.0 if bool((lg.argmax(-1) == ans).all()) else 0.0
                        r += 1
        return vals

    def _stops(self):
        if self.task.tokenizer is None:
            raise ValueError("continuations need a task made from text (Task.from_text)")
        if self._stop is None:
            tok = self.task.tokenizer
            V = self.model.config.vocab_size
            special = {i for i in range(V) if tok.is_special(i)}
            missing = {i for i in range(V) if tok.token(i) is None}
            self._stop = (special, missing)
        return self._stop

    def continuation(self, mask, i: int) -> str:
        """Sample i's greedy continuation under `mask`, decoded as the match
        metric reads it (special tokens left out)."""
        import torch
        special, missing = self._stops()
        s = self.task.samples[int(i)]
        self._apply(self._rows([mask]))
        try:
            ids = torch.tensor([s.prompt], device=self.device)
            # attention_mask given: generate() would take token 0 for padding
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids),
                                      max_new_tokens=s.generation_length(), do_sample=False,
                                      eos_token_id=None, pad_token_id=0)
        finally:
            _hf.remove(self.model)
        new = []
        for t in out[0, len(s.prompt):].tolist():
            if t in missing:  # an untrained row: ends it, cannot be decoded
                break
            new.append(t)
            if t in special:
                break
        return self.task.tokenizer.decode(new, skip_special=True)

    def _match(self, rows, idx):
        from .text import match_all
        return {(c, i): match_all(self.continuation(row, i), self.task.samples[i].answers)
                for c, row in enumerate(rows) for i in idx}

    # -- scoring ---------------------------------------------------------------------
    def sample_values(self, masks, samples=None) -> list[list[float]]:
        """Per mask, the values of `samples` (default all), in their order.
        A selection applied to the model before (bosch.hf.apply, e.g. while
        training it) is applied again afterwards."""
        rows = self._rows(masks)
        idx = list(range(len(self.task))) if samples is None else [int(i) for i in samples]
        if any(not 0 <= i < len(self.task) for i in idx):
            raise IndexError("sample out of range")
        before = _hf.applied(self.model)
        _hf.remove(self.model)
        try:
            vals = self._match(rows, sorted(set(idx))) if self.metric == "match" else \
                self._teacher_forced(rows, sorted(set(idx)))
        finally:
            if before is not None:
                _hf.reapply(self.model, before)
        return [[vals[c, i] for i in idx] for c in range(len(rows))]

    def __call__(self, masks) -> list[float]:
        """Scores of `masks` on every sample (a batch evaluator)."""
        return [sum(v) / len(v) for v in self.sample_values(masks)]

    def selection(self, result, problem, method: str = "bosch", anchors: bool = True):
        """The bosch.Selection of a search `result` on `problem` that this
        evaluator scored, recording what `bosch search` records, so that
        `bosch show` names its metric and `bosch export` finds its window:
        the method, the model's path (its config's name_or_path), the metric,
        the KV saving (the task's longest prompt as the context, the window
        and sink), the window, sink, metric and ratio settings; with
        `anchors`, the all-full and all-SWA scores (two evaluations) and the
        normalised score. Write it with ``sel.write(prefix)``."""
        from .selection import Selection
        sel = Selection.from_result(result, problem)
        if len(sel.mask) != self.units:
            raise ValueError("the result has %d units, this evaluator's model %d"
                             % (len(sel.mask), self.units))
        sel.method = method
        path = getattr(self.model.config, "_name_or_path", "") or ""
        if path:
            sel.model_path = path
        sel.metric = self.metric
        context = max(len(s.prompt) for s in self.task.samples)
        sel.set_kv_saving(context, self.window, self.sink)
        for key, value in (("window", self.window), ("sink", self.sink),
                           ("metric", self.metric), ("ratio", float(problem.target_ratio))):
            sel.set_setting(key, value)
        if anchors:
            full, swa = self([[0] * self.units, [1] * self.units])
            sel.set_score("full", full)
            sel.set_score("all_swa", swa)
            raw = sel.score("raw")
            if full > swa and raw == raw:
                sel.set_score("normalized", (raw - swa) / (full - swa))
        return sel

    def set_screen_task(self, task: "Task | None") -> "Evaluator":
        """Length as a fidelity, as libbosch-torch's
        bosch_torch_evaluator_set_screen_task: requests below fidelity 1 are
        scored on every sample of `task`, the same samples rendered shorter
        (as many, each with the same answers, no prompt longer, fewer tokens
        in all; else ValueError naming the sample, and nothing changes).
        None removes it."""
        if task is None:
            self._screen = None
            return self
        n = len(self.task)
        if len(task) != n:
            raise ValueError("the screen task has %d samples, the evaluator's task %d: a "
                             "screen task is the same samples rendered shorter" % (len(task), n))
        for i, (a, b) in enumerate(zip(self.task.samples, task.samples)):
            same = (list(a.answers) == list(b.answers) if a.answers or b.answers
                    else list(a.answer) == list(b.answer))
            if not same:
                raise ValueError("sample %d has other answers in the screen task than in the "
                                 "evaluator's task: not the same samples" % i)
            if len(b.prompt) > len(a.prompt):
                raise ValueError("sample %d of the screen task has %d prompt tokens, the "
                                 "evaluator's %d: a screen task is shorter"
                                 % (i, len(b.prompt), len(a.prompt)))
        if sum(len(s.prompt) for s in task.samples) >= sum(len(s.prompt)
                                                            for s in self.task.samples):
            raise ValueError("the screen task's prompts are no shorter than the evaluator's")
        self._screen = Evaluator(self.model, task, self.window, self.sink, self.metric,
                                 self.batch, self.buckets)
        return self

    def requests(self, masks, fidelities, draws) -> list[float]:
        """Request batch evaluator: mask i scored at fidelity i and draw i
        (below 1 with a screen task: on every screen sample)."""
        out = []
        for m, f, d in zip(masks, fidelities, draws):
            if self._screen is not None and 0.0 < float(f) < 1.0:
                v = self._screen.sample_values([m])[0]
            else:
                span = request_span(len(self.task), float(f), int(d))
                v = self.sample_values([m], span)[0]
            out.append(sum(v) / len(v))
        return out
