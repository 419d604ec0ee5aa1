#!/usr/bin/env python3
"""Parity of libbosch-torch with Hugging Face transformers' Qwen3ForCausalLM.

Needs a Python with torch and transformers (5.x; 4.5x with Qwen3 should
work), and a built libbosch-torch. For each configuration it builds a
randomly initialised Qwen3ForCausalLM, saves it with save_pretrained
(safetensors), and compares libbosch-torch's logits (through ctypes, in a
child process) with transformers' on the same random tokens:

  tiny     2 layers, hidden 64, 4 heads / 2 KV heads, head_dim 16, vocab 264
  1.7b     Qwen3-1.7B's layer shapes: hidden 2048, 16 heads, 8 KV heads,
           head_dim 128, intermediate 6144, 28 layers, tied embeddings;
           vocabulary reduced (--vocab, default 8192). About 1.4e9 parameters:
           ~6 GB in f32 (x2 while saving); use --layers to cut it down.

The reference. transformers has no per-head sliding window, so the reference
runs inside transformers' own forward with an attention function registered
in its AttentionInterface (tools/parity/reference.py): eager attention with
a per-head mask built from the same unit masks, window and sink as
bosch_torch_model_forward (query t sees key s iff s <= t and, for a sliding
unit, s > t - window or s < sink). Before it is trusted, every run checks it
against transformers' stock eager attention: all full, stock
use_sliding_window with every layer sliding (sink 0) and stock layer_types
when a case uses them ("ref=..." lines; they must agree to 1e-5).

Cases (--cases, comma-separated, or "all"); W = --window, S = --sink, T = --len:
  full        masks NULL (all full)            zeros      explicit all-0 masks
  swa         every unit sliding, W            swa-sink   every unit, W, sink S
  mixed       per-element random unit masks,   mixed-sink the same, sink S, logits
              some sliding, some full, W                  at a subset of positions
  w1          every unit, window 1             w1-sink    mixed, window 1, sink 1
  wT-1        every unit, window T-1           wT         every unit, window T (= full)
  wbig        mixed, window T+5, sink S (= full)
  sink-big    mixed, window 2, sink T (= full) sink-gt-w  mixed, window W/4, sink W/2+1
  types       a hybrid checkpoint (config.json layer_types: odd layers
              "sliding_attention" over --layer-types or W), masks NULL
  types-mixed the hybrid checkpoint with mixed unit masks, window W/2+1, sink S
              (the backend ignores the masks of the sliding layers)
The (= full) cases are also compared with the all-full reference.

f32 (--dtype f32): pass when the max abs logit difference is below --tol.

bf16 (--dtype bf16; f16 alike), judged against transformers' own bf16
error: the same bf16 weights are loaded in transformers (from_pretrained of
the saved checkpoint) in bf16 and in f32; d_hf is the distance of
transformers-bf16 from transformers-f32, d_ours that of libbosch-torch-bf16
from transformers-f32, both as the max abs and the RMS difference over every
logit. A case passes when d_ours <= --factor x d_hf + --slack for both
measures (--tol is not used for bf16); ours vs transformers-bf16 is printed
for information. The checkpoint is also opened in f32 by the backend and
compared with transformers-f32 under --tol ("upcast" lines).
Measured on CPU (torch 2.15 + transformers 5.25 against Debian's libtorch
1.13): d_hf 0.03-0.04 max / 0.007 RMS (tiny), 0.066 / 0.013 (1.7b shapes, 2
layers); d_ours / d_hf 0.96-1.30 (max) and 0.99-1.23 (RMS). The excess is
libtorch 1.13's bf16 silu, which rounds twice (torch >= 2 computes it in
f32 and rounds once): tools/ref_qwen3.py in bf16 reproduces d_hf exactly
under torch 2.15 and d_ours exactly under torch 1.13. The default factor
1.5 leaves that margin. Its resolution is coarse: mask, window or sink
errors fail it (and the f32 cases by orders of magnitude), but precision
slips do not move d_ours much at these shapes: injected into transformers'
bf16 run (1.7b shapes), RMSNorm statistics in bf16 gave 1.23x d_hf (max),
x * sigmoid(x) in bf16 1.08x, RoPE's inv_freq rounded to bf16 1.16x.

Scores (--scores): the evaluator's LOGPROB and EXACT scores (bosch_torch_
evaluator_open + bosch_torch_batch_eval on a JSONL task of random prompts of
different lengths; some answers are the model's own greedy continuation, so
that EXACT is not trivially 0) for several masks (all full, all sliding,
mixed, mixed with layer 0 full: the prefix cache) at sink 0 and S, against
the same computed from transformers' logits (tools/parity/scores.py);
LOGPROB within --score-tol, EXACT equal. MATCH too when the vocabulary fits
the byte-level test tokenizer (tiny): a text task and a tokenizer.json of
256 byte tokens plus special tokens, greedy continuations decoded with Hugging
Face tokenizers, answers taken from the reference's own continuations.

--suite ci runs the whole matrix CI needs on a CPU (CI_SUITE below; about
3 minutes on 2 cores, half of it libtorch 1.13's slow bf16 CPU kernels):
tiny f32 every case + scores + MATCH, tiny bf16, and the 1.7b shapes with 2
layers and a 4096 vocabulary in f32 (+ scores) and bf16. Other options
(--device, --lib, --factor, ...) apply to every run of the suite.

libbosch-torch runs in a child process (this script re-invoked with
--backend, which imports ctypes only, tools/parity/child.py): a pip PyTorch
and the libtorch that libbosch-torch was built against must not share one
process.

Usage:
  python3 tools/hf_parity.py [--lib build-torch/lib/torch/libbosch-torch.so.0]
        [--suite ci] [--configs tiny,1.7b] [--dtype f32|bf16|f16] [--device cpu|cuda]
        [--batch 2] [--len 64] [--vocab 8192] [--layers 28] [--swa 16]
        [--layer-types 16] [--cases all] [--window 16] [--sink 3] [--scores]
        [--tol 1e-4] [--factor 1.5] [--slack 1e-3] [--score-tol 1e-4] [--keep DIR]
--swa W adds the case swa with window W; --layer-types W the case types with
the config's window W (the options of earlier versions). Exit status 0 when
every check passes, 1 otherwise, 2 for a missing --lib, 77 when torch or
transformers cannot be imported (meson's skip).
"""
import argparse
import copy
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {
    "tiny": dict(vocab_size=264, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 tie_word_embeddings=False, rope_theta=10000.0, rms_norm_eps=1e-6),
    "1.7b": dict(vocab_size=8192, hidden_size=2048, intermediate_size=6144,
                 num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8,
                 head_dim=128, tie_word_embeddings=True, rope_theta=1000000.0,
                 rms_norm_eps=1e-6),
}

CASES = ["full", "zeros", "swa", "swa-sink", "mixed", "mixed-sink", "w1", "w1-sink", "wT-1",
         "wT", "wbig", "sink-big", "sink-gt-w", "types", "types-mixed"]

# The CI matrix: (config, dtype, cases, scores, overrides of the options).
CI_SUITE = [
    ("tiny", "f32", "all", True, dict(len=40, window=8, sink=3)),
    ("tiny", "bf16", "full,swa,mixed-sink,w1-sink,types-mixed", False,
     dict(len=40, window=8, sink=3)),
    ("1.7b", "f32", "full,swa,mixed-sink,w1-sink,wT-1,wbig,types-mixed", True,
     dict(len=48, window=16, sink=4, layers=2, vocab=4096)),
    ("1.7b", "bf16", "full,mixed-sink", False,
     dict(len=48, window=16, sink=4, layers=2, vocab=4096)),
]

REF_TOL = 1e-5  # the registered reference against stock transformers


# ---------------------------------------------------------------------------
# Cases

class Case:
    def __init__(self, name, masks=None, window=1, sink=0, variant="base", positions=None,
                 same_as_full=False):
        self.name, self.masks, self.window, self.sink = name, masks, window, sink
        self.variant = variant            # checkpoint: "base" or "types" (hybrid)
        self.positions = positions        # logits at these positions (None: all)
        self.same_as_full = same_as_full  # the window covers the sequence


def mixed_masks(B, units, rng):
    """Per batch element a different random mask with both kinds of units."""
    if units < 2:
        return [[rng.randrange(2)] * units for _ in range(B)]
    out = []
    while len(out) < B:
        m = [rng.randrange(2) for _ in range(units)]
        if 0 < sum(m) < units and (m not in out or len(out) >= 2 ** units - 2):
            out.append(m)
    return out


def make_cases(names, args, L, G, rng):
    B, T, W, S, U = args.batch, args.len, args.window, args.sink, L * G
    every = [[1] * U] * B
    mixed = mixed_masks(B, U, rng)
    table = {
        "full": dict(),
        "zeros": dict(masks=[[0] * U] * B, window=W),
        "swa": dict(masks=every, window=W),
        "swa-sink": dict(masks=every, window=W, sink=S),
        "mixed": dict(masks=mixed, window=W),
        "mixed-sink": dict(masks=mixed, window=W, sink=S,
                           positions=sorted({0, 1, T // 3, T // 2, T - 2, T - 1})),
        "w1": dict(masks=every, window=1),
        "w1-sink": dict(masks=mixed, window=1, sink=1),
        "wT-1": dict(masks=every, window=T - 1),
        "wT": dict(masks=every, window=T, same_as_full=True),
        "wbig": dict(masks=mixed, window=T + 5, sink=S, same_as_full=True),
        "sink-big": dict(masks=mixed, window=2, sink=T, same_as_full=True),
        "sink-gt-w": dict(masks=mixed, window=max(1, W // 4), sink=W // 2 + 1),
        "types": dict(variant="types"),
        "types-mixed": dict(masks=mixed, window=W // 2 + 1, sink=S, variant="types"),
    }
    return [Case(n, **table[n]) for n in names]


def case_names(args):
    if args.cases == "all":
        return list(CASES)
    names = [n for n in args.cases.split(",") if n] if args.cases else ["full"]
    if args.swa and "swa" not in names:
        names.append("swa")
    if args.layer_types and "types" not in names:
        names.append("types")
    for n in names:
        if n not in CASES:
            raise SystemExit("unknown case %r (cases: %s)" % (n, ", ".join(CASES)))
    return names


# ---------------------------------------------------------------------------
# Output

class Report:
    def __init__(self):
        self.failed = []

    def line(self, run, check, text, ok):
        print("%-12s %-20s %s %s" % (run, check, text, "ok" if ok else "FAIL"), flush=True)
        if not ok:
            self.failed.append("%s %s" % (run, check))


def distances(a, b):
    """(max abs, RMS) of a - b."""
    d = (a - b).double()
    return d.abs().max().item(), d.pow(2).mean().sqrt().item()


# ---------------------------------------------------------------------------
# The backend (child process)

def run_backend(args, ckpt, dtype, forwards, evals, tmp, tag):
    """Runs the child on one checkpoint; {"forwards": {name: tensor or error},
    "scores": {name: list or error}} or a string when the child failed."""
    req = dict(ckpt=ckpt, device=args.device, dtype=dtype, forwards=forwards, evals=evals,
               result=os.path.join(tmp, tag + "-result.json"))
    path = os.path.join(tmp, tag + "-request.json")
    with open(path, "w") as f:
        json.dump(req, f)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--backend", args.lib, path])
    if r.returncode != 0:
        return "backend failed (exit %d)" % r.returncode
    with open(req["result"]) as f:
        res = json.load(f)
    out = {"forwards": {}, "scores": res["scores"]}
    for fw in forwards:
        err = res["forwards"][fw["name"]]
        out["forwards"][fw["name"]] = err or read_logits(fw["out"])
    return out


def read_logits(path):
    import torch
    with open(path, "rb") as f:
        raw = f.read()
    return torch.tensor(struct.unpack("<%df" % (len(raw) // 4), raw))


def forward_request(case, tokens, tmp, tag):
    return dict(name=case.name, tokens=tokens, masks=case.masks, window=case.window,
                sink=case.sink, positions=case.positions,
                out=os.path.join(tmp, "%s-%s.bin" % (tag, case.name)))


# ---------------------------------------------------------------------------
# One run: a configuration in one dtype

class Run:
    """The models of one (configuration, dtype): per variant ("base",
    "types") the saved checkpoint, the reference model (f32) and, for bf16,
    the bf16 model; all with the registered attention."""

    def __init__(self, name, spec, args, tmp):
        self.name, self.spec, self.args, self.tmp = name, spec, args, tmp
        self.tag = "%s-%s" % (name, args.dtype)
        self.L, self.G = spec["num_hidden_layers"], spec["num_key_value_heads"]
        self.ckpt, self.ref, self.low = {}, {}, {}
        self.match = None  # (tokenizer, text samples) once MATCH is prepared

    def types_window(self):
        return self.args.layer_types or self.args.window

    def config(self, variant, swa=None):
        from parity import reference
        if variant == "types":
            kinds = ["sliding_attention" if l % 2 else "full_attention" for l in range(self.L)]
            return reference.make_config(self.spec, self.args.len, self.types_window(), kinds)
        return reference.make_config(self.spec, self.args.len, swa)

    def build(self, variants):
        """Saves a random model per variant in the run's dtype, then loads the
        references from those checkpoints with from_pretrained, as a user
        would (a model cast with .to(bf16) would also round RoPE's inv_freq
        buffer, which from_pretrained keeps in f32)."""
        import torch
        from parity import reference
        dtype = {"f32": torch.float32, "bf16": torch.bfloat16,
                 "f16": torch.float16}[self.args.dtype]
        base = reference.build_model(self.config("base"))
        reference.reinit(base, 1234)
        for v in variants:
            model = base if v == "base" else reference.like(base, self.config(v))
            path = os.path.join(self.tmp, "%s-%s" % (self.tag, v))
            model.to(dtype).save_pretrained(path, safe_serialization=True)
            self.ckpt[v] = path
        del base, model
        device = torch.device(self.args.device)
        for v in variants:
            self.ref[v] = reference.load(self.ckpt[v], torch.float32, device)
            if dtype != torch.float32:
                self.low[v] = reference.load(self.ckpt[v], dtype, device)
            if v == "types" and reference.layer_types_of(self.ref[v].config) != \
                    reference.layer_types_of(self.config("types")):
                raise RuntimeError("this transformers (%s) has no per-layer layer_types"
                                   % reference.transformers_version())


def stock_logits(model, tokens, cfg=None):
    """transformers' stock eager attention on `model`'s weights (under
    another config when given)."""
    from parity import reference
    m = reference.like(model, cfg) if cfg is not None else model
    reference.set_attention(m, "eager")
    try:
        return reference.logits(m, tokens)
    finally:
        reference.set_attention(m, reference.NAME)


def check_reference(run, tokens, report):
    """The registered attention against stock eager attention: all full,
    stock all-sliding (sink 0), stock layer_types; in every dtype used."""
    from parity import reference
    W = run.args.window
    every = [[1] * (run.L * run.G)] * len(tokens)
    models = [("", run.ref)] + ([(run.args.dtype + " ", run.low)] if run.low else [])
    for prefix, models_of in models:
        checks = [("ref=eager", reference.logits(models_of["base"], tokens),
                   lambda: stock_logits(models_of["base"], tokens)),
                  ("ref=stock-swa%d" % W, reference.logits(models_of["base"], tokens, every, W),
                   lambda: stock_logits(models_of["base"], tokens, run.config("base", W)))]
        if "types" in models_of:
            checks.append(("ref=stock-types%d" % run.types_window(),
                           reference.logits(models_of["types"], tokens),
                           lambda: stock_logits(models_of["types"], tokens)))
        for label, ours, stock in checks:
            d, _ = distances(ours.cpu(), stock().cpu())
            report.line(run.tag, prefix + label, "max abs diff %.3g (tol %.0e)" % (d, REF_TOL),
                        d <= REF_TOL)


def references(run, tokens, cases):
    """Reference logits per case: {name: (f32 reference, bf16/f16 or None)} on
    the CPU, at the case's positions."""
    from parity import reference
    out = {}
    for c in cases:
        pick = (lambda x: x) if c.positions is None else (lambda x: x[:, c.positions])
        ref = pick(reference.logits(run.ref[c.variant], tokens, c.masks, c.window,
                                    c.sink)).cpu()
        low = None
        if c.variant in run.low:
            low = pick(reference.logits(run.low[c.variant], tokens, c.masks, c.window,
                                        c.sink)).cpu()
        out[c.name] = (ref, low)
    return out


def compare_f32(run, cases, refs, full_ref, got, report, label=""):
    for c in cases:
        ours = got["forwards"][c.name] if isinstance(got, dict) else got
        check = label + c.name
        if isinstance(ours, str):
            report.line(run.tag, check, ours, False)
            continue
        ref = refs[c.name][0]
        ours = ours.view(ref.shape)
        d, rms = distances(ours, ref)
        text = "max abs diff %.3g rms %.3g (max |logit| %.3g, tol %.0e)" % (
            d, rms, ref.abs().max().item(), run.args.tol)
        good = d < run.args.tol
        if c.same_as_full and full_ref is not None:
            df, _ = distances(ours, full_ref)
            text += "; vs full %.3g" % df
            good = good and df < run.args.tol
        report.line(run.tag, check, text, good)


def compare_low(run, cases, refs, got, report):
    """bf16 / f16: d_ours against transformers' own d_hf (see the top)."""
    a = run.args
    for c in cases:
        ours = got["forwards"][c.name] if isinstance(got, dict) else got
        if isinstance(ours, str):
            report.line(run.tag, c.name, ours, False)
            continue
        ref, low = refs[c.name]
        ours = ours.view(ref.shape)
        hf_max, hf_rms = distances(low, ref)
        our_max, our_rms = distances(ours, ref)
        good = (our_max <= a.factor * hf_max + a.slack and
                our_rms <= a.factor * hf_rms + a.slack)
        # For information: how far ours is from transformers' bf16 / f16 itself.
        both_max, _ = distances(ours, low)
        report.line(run.tag, c.name,
                    "d_hf max %.3g rms %.3g | d_ours max %.3g rms %.3g | ratio %.2f %.2f "
                    "(factor %.2g; ours vs hf-%s max %.3g)" % (
                        hf_max, hf_rms, our_max, our_rms, our_max / max(hf_max, 1e-30),
                        our_rms / max(hf_rms, 1e-30), a.factor, a.dtype, both_max), good)


# ---------------------------------------------------------------------------
# Scores

def score_masks(L, G, rng):
    """All full, all sliding, a mixed mask with layer 0 full (the prefix
    cache starts above it) and one with a sliding unit in layer 0."""
    U = L * G
    cached = [0] * G + [rng.randrange(2) for _ in range(U - G)]
    cached[-1] = 1
    low = [rng.randrange(2) for _ in range(U)]
    low[0], low[-1] = 1, 0
    return [[0] * U, [1] * U, cached, low]


def prepare_scores(run, rng, report):
    """Writes the tasks; returns (evaluator requests, reference scores,
    argmax gaps), each keyed by the evaluation's name."""
    from parity import scores
    a, model, U = run.args, run.ref["base"], run.L * run.G
    V = run.spec["vocab_size"]
    T = a.len
    lengths = [max(2, int(T * f)) for f in (0.2, 0.35, 0.5, 0.65, 0.8, 0.95)]
    answer_lens = [3, 4, 2, 5, 3, 4]
    kinds = ["full", "swa", "random", "full", "full", "random"]
    samples = scores.token_task(model, V, lengths, answer_lens, kinds, a.window, U, rng)
    task = os.path.join(run.tmp, run.tag + "-task.jsonl")
    scores.write_jsonl(task, samples)
    masks = score_masks(run.L, run.G, rng)
    evals, expect, gaps = [], {}, {}
    # Evaluator settings vary so that batching and length buckets are covered.
    settings = {0: [("logprob", None, None), ("exact", 3, 2)],
                a.sink: [("logprob", len(masks), 1), ("exact", None, None)]}
    for sink, entries in settings.items():
        ref, gap = scores.token_scores(model, samples, masks, a.window, sink)
        for metric, batch, buckets in entries:
            name = "%s-sink%d" % (metric, sink)
            evals.append(dict(name=name, task=task, metric=metric, window=a.window, sink=sink,
                              masks=masks, batch=batch, buckets=buckets))
            expect[name] = ref[metric]
            gaps[name] = gap
    if not 256 + 3 <= V <= 1024:
        # The byte-level test tokenizer covers 259 ids: with many more rows
        # the random model's greedy continuations stop at once.
        print("%-12s score match: skipped (vocabulary %d, MATCH needs 259..1024)"
              % (run.tag, V))
        return evals, expect, gaps
    try:
        import tokenizers  # noqa: F401 (the MATCH reference decodes with it)
    except ImportError:
        report.line(run.tag, "score match", "cannot import tokenizers", False)
        return evals, expect, gaps
    evals += prepare_match(run, masks[:3], rng, expect, gaps)
    return evals, expect, gaps


def prepare_match(run, masks, rng, expect, gaps):
    """The MATCH evaluations (returned); their reference scores and greedy
    top-2 gaps go into expect and gaps."""
    from parity import scores
    a, model, U = run.args, run.ref["base"], run.L * run.G
    tok_path = os.path.join(run.tmp, run.tag + "-tokenizer.json")
    with open(tok_path, "w") as f:
        f.write(scores.tokenizer_json())
    with open(tok_path) as f:
        tok = scores.TextTokenizer(f.read())
    samples = scores.text_task(model, tok, 6, 10, a.window, U, rng)
    path = os.path.join(run.tmp, run.tag + "-text.jsonl")
    scores.write_jsonl(path, samples)
    evals = []
    for sink in (0, a.sink):
        name = "match-sink%d" % sink
        evals.append(dict(name=name, text=path, tokenizer=tok_path, metric="match",
                          window=a.window, sink=sink, masks=masks,
                          dump=os.path.join(run.tmp, run.tag + "-text-task.jsonl")))
        expect[name], gaps[name] = scores.match_scores(model, tok, samples, masks, a.window,
                                                       sink)
    run.match = (tok, samples)
    return evals


def compare_scores(run, got, expect, gaps, report):
    """LOGPROB within --score-tol; EXACT and MATCH equal (the gap printed says
    how close the nearest argmax was to flipping)."""
    for name, ref in expect.items():
        ours = got["scores"].get(name, "missing") if isinstance(got, dict) else got
        if isinstance(ours, str):
            report.line(run.tag, "score " + name, ours, False)
            continue
        diffs = [abs(o - r) for o, r in zip(ours, ref)]
        tol = run.args.score_tol if name.startswith("logprob") else 1e-12
        text = "ours %s ref %s max diff %.3g" % (fmt(ours), fmt(ref), max(diffs))
        if not name.startswith("logprob"):
            text += " (smallest argmax gap %.3g)" % gaps[name]
        report.line(run.tag, "score " + name, text, max(diffs) <= tol)
    if run.match and isinstance(got, dict):
        check_text_task(run, report)


def check_text_task(run, report):
    """The prompts as libbosch-text encoded them against Hugging Face
    tokenizers' encoding of the same text (the MATCH reference uses the
    latter)."""
    tok, samples = run.match
    path = os.path.join(run.tmp, run.tag + "-text-task.jsonl")
    if not os.path.exists(path):
        report.line(run.tag, "text task ids", "no task dump", False)
        return
    with open(path) as f:
        ours = [json.loads(l)["prompt"] for l in f if l.strip()]
    ref = [tok.encode(s["text"]) for s in samples]
    report.line(run.tag, "text task ids", "%d prompts %s" % (
        len(ref), "equal" if ours == ref else "differ"), ours == ref)


def fmt(xs):
    return "[" + " ".join("%.5g" % x for x in xs) + "]"


# ---------------------------------------------------------------------------

def run_config(name, spec, args, tmp, report, with_scores):
    """Every check of one configuration in one dtype."""
    import torch
    run = Run(name, spec, args, tmp)
    names = case_names(args)
    variants = ["base"] + (["types"] if any(n.startswith("types") for n in names) else [])
    try:
        run.build(variants)
    except RuntimeError as exc:
        report.line(run.tag, "build", str(exc), False)
        return
    rng = random.Random(5)
    tokens = [[rng.randrange(spec["vocab_size"]) for _ in range(args.len)]
              for _ in range(args.batch)]
    cases = make_cases(names, args, run.L, run.G, rng)
    check_reference(run, tokens, report)
    refs = references(run, tokens, cases)
    full_ref = None
    if any(c.same_as_full for c in cases):
        full_ref = refs["full"][0] if "full" in refs else refs_full(run, tokens)
    scored = ([], {}, {})
    if with_scores and args.dtype == "f32":
        scored = prepare_scores(run, rng, report)
    elif with_scores:
        print("%-12s scores: compared in f32 runs only" % run.tag)
    if args.device == "cuda":
        torch.cuda.empty_cache()
    for v in variants:
        vc = [c for c in cases if c.variant == v]
        check_backend(run, v, vc, tokens, refs, full_ref if v == "base" else None,
                      scored if v == "base" else ([], {}, {}), report)


def check_backend(run, variant, cases, tokens, refs, full_ref, scored, report):
    """The backend on one checkpoint: the cases' logits, and the scores of
    the evaluations `scored` = (requests, reference scores, argmax gaps)."""
    evals, expect, gaps = scored
    if not cases and not evals:
        return
    a, tag = run.args, run.tag + "-" + variant
    fws = [forward_request(c, tokens, run.tmp, tag) for c in cases]
    got = run_backend(a, run.ckpt[variant], a.dtype, fws, evals, run.tmp, tag)
    if a.dtype == "f32":
        compare_f32(run, cases, refs, full_ref, got, report)
    else:
        compare_low(run, cases, refs, got, report)
        # The bf16 / f16 checkpoint read into f32 by the backend.
        fws = [forward_request(c, tokens, run.tmp, tag + "-upcast") for c in cases]
        up = run_backend(a, run.ckpt[variant], "f32", fws, [], run.tmp, tag + "-upcast")
        compare_f32(run, cases, refs, None, up, report, label="upcast ")
    if evals:
        compare_scores(run, got, expect, gaps, report)


def refs_full(run, tokens):
    from parity import reference
    return reference.logits(run.ref["base"], tokens).cpu()


def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="build-torch/lib/torch/libbosch-torch.so.0")
    ap.add_argument("--suite", default="", choices=["", "ci"],
                    help="run a predefined matrix (ci: what CI runs on a CPU)")
    ap.add_argument("--configs", default="tiny,1.7b")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                    help="f16 as bf16 (where the backend's device has f16 kernels)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--len", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=8192, help="vocabulary of the 1.7b shapes")
    ap.add_argument("--layers", type=int, default=0, help="override the layer count (0 = keep)")
    ap.add_argument("--swa", type=int, default=0, help="also run the case swa with this window")
    ap.add_argument("--layer-types", type=int, default=0,
                    help="also run the case types: odd layers slide over this window "
                         "through config.json's layer_types")
    ap.add_argument("--cases", default="", help="comma-separated cases, or all (default full)")
    ap.add_argument("--window", type=int, default=0,
                    help="window of the cases (default --swa, else --layer-types, else len/4)")
    ap.add_argument("--sink", type=int, default=3, help="sink of the cases with a sink")
    ap.add_argument("--scores", action="store_true",
                    help="also compare the evaluator's scores (f32)")
    ap.add_argument("--tol", type=float, default=1e-4, help="f32: max abs logit difference")
    ap.add_argument("--factor", type=float, default=1.5,
                    help="bf16/f16: d_ours may be this many times d_hf")
    ap.add_argument("--slack", type=float, default=1e-3, help="bf16/f16: absolute slack")
    ap.add_argument("--score-tol", type=float, default=1e-4, help="LOGPROB difference")
    ap.add_argument("--keep", default="", help="write the checkpoints here and keep them")
    args = ap.parse_args(argv)
    args.window = args.window or args.swa or args.layer_types or max(2, args.len // 4)
    return args


def plan(args):
    """(config name, spec, args, scores) for every run."""
    runs = []
    entries = CI_SUITE if args.suite == "ci" else [
        (n, args.dtype, args.cases, args.scores, {}) for n in args.configs.split(",")]
    for name, dtype, cases, with_scores, over in entries:
        a = copy.copy(args)
        a.dtype = dtype
        if args.suite:
            a.cases, a.swa, a.layer_types = cases, 0, 0
        for k, v in over.items():
            setattr(a, k, v)
        if name not in CONFIGS:
            raise SystemExit("unknown config %r" % name)
        spec = dict(CONFIGS[name])
        if name == "1.7b":
            spec["vocab_size"] = a.vocab
        if a.layers:
            spec["num_hidden_layers"] = a.layers
        runs.append((name, spec, a, with_scores))
    return runs


def main(argv):
    if len(argv) > 1 and argv[1] == "--backend":
        from parity import child
        return child.main(argv[2], argv[3])
    args = options(argv[1:])
    try:
        import torch
        import transformers
        from transformers import Qwen3Config, Qwen3ForCausalLM  # noqa: F401 (>= 4.51)
        from parity import reference
    except ImportError as exc:
        print("skipped: %s" % exc)
        return 77
    if not os.path.exists(args.lib):
        sys.stderr.write("libbosch-torch not found: %s (--lib)\n" % args.lib)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # an f32 reference, also on a GPU
    torch.backends.cudnn.allow_tf32 = False
    reference.register()
    transformers.utils.logging.disable_progress_bar()  # no "Writing model shards" bars
    print("torch %s, transformers %s, %d threads" % (
        torch.__version__, transformers.__version__, torch.get_num_threads()), flush=True)
    tmp = args.keep or tempfile.mkdtemp(prefix="bosch-hf-parity-")
    os.makedirs(tmp, exist_ok=True)
    report = Report()
    start = time.time()
    try:
        for name, spec, a, with_scores in plan(args):
            t0 = time.time()
            run_config(name, spec, a, tmp, report, with_scores)
            print("%s-%s: %.0f s" % (name, a.dtype, time.time() - t0), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failed (%.0f s)" % ("FAIL" if report.failed else "ok", len(report.failed),
                                      time.time() - start))
    for f in report.failed:
        print("  failed: " + f)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
