#!/usr/bin/env python3
"""Parity of libbosch-torch with Hugging Face transformers' Qwen3ForCausalLM,
Qwen3MoeForCausalLM, Qwen2ForCausalLM, LlamaForCausalLM and
MistralForCausalLM.

Needs a Python with torch and transformers (5.x; 4.5x with Qwen3 should
work for the dense configurations), and a built libbosch-torch. For each
configuration it builds a randomly initialised Qwen3ForCausalLM (or
Qwen3MoeForCausalLM), saves it with save_pretrained (safetensors), and
compares libbosch-torch's logits (through ctypes, in a child process) with
transformers' on the same random tokens:

  tiny     2 layers, hidden 64, 4 heads / 2 KV heads, head_dim 16, vocab 264
  1.7b     Qwen3-1.7B's layer shapes: hidden 2048, 16 heads, 8 KV heads,
           head_dim 128, intermediate 6144, 28 layers, tied embeddings;
           vocabulary reduced (--vocab, default 8192). About 1.4e9 parameters:
           ~6 GB in f32 (x2 while saving); use --layers to cut it down.
  moe-tiny Qwen3MoeForCausalLM: 3 layers as tiny; layers 0 and 2 sparse (8
           experts of moe_intermediate 32, top 2, norm_topk_prob), layer 1
           dense (mlp_only_layers [1], intermediate 96)
  30b-a3b  Qwen3-30B-A3B's layer shapes: hidden 2048, 32 heads, 4 KV heads,
           head_dim 128, experts of moe_intermediate 768, top 8,
           norm_topk_prob, dense intermediate 6144, 48 layers, untied; 16
           experts instead of 128 and the vocabulary reduced (--vocab). A
           sparse layer holds ~95e6 parameters: use --layers.
  llama-tiny   LlamaForCausalLM: 2 layers, hidden 96, 6 heads / 2 KV heads
           (GQA 3:1, as SmolLM2), head_dim 16, attention_bias and
           mlp_bias, tied embeddings; the suite also runs it with each rope
           kind transformers has for Llama (ROPE_KINDS: linear, dynamic,
           yarn, longrope, llama3, each where it differs from the default
           at the suite's length)
  smollm2  SmolLM2-135M's layer shapes (Llama): hidden 576, 9 heads / 3 KV
           heads, head_dim 64, intermediate 1536, tied, rope_theta 1e5;
           --layers and --vocab cut it down
  mistral-tiny MistralForCausalLM as tiny; "types" is its one window on
           every layer
  qwen2-tiny   Qwen2ForCausalLM as tiny with 3 layers (q/k/v biases);
           "types" slides from max_window_layers 1 on, its config.json
           without layer_types, as the hub's Qwen2.5 checkpoints
--set KEY=JSON overrides a field of the configs (e.g. mlp_only_layers=[0],
decoder_sparse_step=2, norm_topk_prob=false); mlp_only_layers past --layers
are dropped.

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

Mixture of experts. Qwen3MoeConfig has no layer_types: the types cases are
skipped for the MoE configurations (a "skipped" line), and its stock
use_sliding_window slides every layer (the ref=stock-swa check works as for
the dense ones). The reference runs transformers' eager experts (the loop
over experts); it is checked, in f32, against transformers' default
implementation (grouped_mm; "ref=experts-..."). Two checkpoints of the same
weights are saved: "base" with save_pretrained's default, the hub layout
(model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight, router
mlp.gate.weight), and config.json naming the expert count num_experts as
the hub's checkpoints do (transformers 5 writes num_local_experts); "fused"
with save_original_format=False, the layout transformers 5 holds in memory
(mlp.experts.gate_up_proj [E, 2 x moe_intermediate, H], gate rows first,
and mlp.experts.down_proj [E, H, moe_intermediate]), config.json as
written. The safetensors are read back to check that each holds its own
layout and the same numbers ("layout base", "layout fused"), and
transformers' models of both must give equal logits ("ref fused=base").
The cases named by --fused (default full,mixed-sink; the first case when
none of them runs; "none": no fused checkpoint) also run on the fused
checkpoint ("full@fused", ...).
Routing near ties. A token's experts are the top k of the router's
probabilities; where the k-th and (k+1)-th are nearly tied, rounding picks
either. Each MoE case line prints the smallest such gap in the f32
reference ("router gap", in router logits) and, in bf16 runs, at how many
(token, sparse layer) transformers' own bf16 run routes otherwise than its
f32 run. transformers' bf16 flips at gaps up to 0.017 (2 x 10^4 routings of
moe-tiny and the 30b-a3b shapes, 0.7-2% of them; a flip also changes that
token's routing in later layers, at any gap); one flipped token moves its
logits by up to ~1 (moe-tiny), so d_ours and d_hf depend on which side
happened to flip. A case that fails is therefore retried against f32
references that route up to --flips (default 2) near ties the other way
(router logit gap below 0.03 in bf16, 0.005 in f16, 1e-4 in f32), found
greedily (explain_flips): its line says which (layer, token) and the
distances from that reference, which must pass the same test. Faults
injected into a stand-in backend (transformers itself) stay failures (the
fused gate and up halves swapped, the experts shifted by one,
norm_topk_prob inverted: bf16 ratio 26-105), and so does a flip at a gap
above the dtype's bound (f32: 0.0041); the flips
found so far in libbosch-torch's bf16 runs, forced in the f32 reference,
bring d_ours back to d_hf's level (moe-tiny full: 0.827 -> 0.047 max,
gap 0.005).

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
MoE (same setup, CI options): f32 max abs diffs 0..2.7e-6 (moe-tiny,
30b-a3b shapes with 2 layers, both layouts). bf16: moe-tiny d_hf
0.038-0.042 max / 0.0085-0.0091 RMS; d_ours / d_hf 0.99-1.02 and 0.99-1.02
where neither side flips a routing, 20.9 / 2.9 (full) and 12.6 / 5.7
(mixed-sink) where libbosch-torch flips one near tie that transformers does
not (router logit gaps 0.005 and 0.0057, in layer 2): from the reference
with that token routed otherwise 1.20 / 0.99 and 0.84 / 0.99. 30b-a3b shapes
(2 layers, D S): transformers' bf16 routes 4-5 of 96 tokens otherwise than
its f32, and each flip moves that token's logits by 0.1-0.19 (one expert of
8), so both d_hf (0.10-0.19 max / 0.008-0.013 RMS) and d_ours are made of
flips, each side its own: d_ours / d_hf 0.86-1.38 (max), 0.87-1.12 (RMS);
at these shapes the bf16 test says little beyond "no gross error", the f32
and upcast lines carry the precision. A 1% error in one expert's down_proj
(moe-tiny) passes the bf16 test (ratio <= 1.22) and fails the upcast lines
(1.7e-2).

Scores (--scores): the evaluator's LOGPROB and EXACT scores (bosch_torch_
evaluator_open + bosch_torch_batch_eval on a JSONL task of random prompts of
different lengths; some answers are the model's own greedy continuation, so
that EXACT is not trivially 0) for several masks (all full, all sliding,
mixed, mixed with layer 0 full: the prefix cache) at sink 0 and S, against
the same computed from transformers' logits (tools/parity/scores.py);
LOGPROB within --score-tol, EXACT equal. MATCH too when the vocabulary fits
the byte-level test tokenizer (tiny, moe-tiny): a text task and a tokenizer.json of
256 byte tokens plus special tokens, greedy continuations decoded with Hugging
Face tokenizers, answers taken from the reference's own continuations.

--suite ci runs the whole matrix CI needs on a CPU (CI_SUITE below; on 2
otherwise idle cores 51-53 s for the dense entries and 75-77 s for the MoE
ones, up to 3 minutes each when the cores are busy): tiny f32 every case
+ scores + MATCH, tiny bf16, and the 1.7b shapes with 2 layers and a 4096
vocabulary in f32 (+ scores) and bf16; moe-tiny f32 every case + scores +
MATCH, moe-tiny f32 with decoder_sparse_step 2 and no top-k renormalisation
(layers D S D), moe-tiny bf16, and the 30b-a3b shapes with 2 layers (layer 0
dense through mlp_only_layers) and a 2048 vocabulary in f32 (+ scores) and
bf16; every MoE run also on the fused checkpoint; llama-tiny, mistral-tiny
and qwen2-tiny f32 every case + scores and bf16, the smollm2 shapes with 2
layers and a 2048 vocabulary in f32 and bf16, and llama-tiny f32 under each
rope kind (measured: 23 s for these, on 2 quiet cores). Other options (--device,
--lib, --factor, ...) apply to every run of the suite; --configs picks the
suite's entries of those configurations.

libbosch-torch runs in a child process (this script re-invoked with
--backend, which imports ctypes only, tools/parity/child.py): a pip PyTorch
and the libtorch that libbosch-torch was built against must not share one
process.

Usage:
  python3 tools/hf_parity.py [--lib build-torch/lib/torch/libbosch-torch.so.0]
        [--suite ci] [--configs tiny,1.7b,moe-tiny,30b-a3b] [--dtype f32|bf16|f16]
        [--device cpu|cuda] [--batch 2] [--len 64] [--vocab 8192] [--layers 28]
        [--set KEY=JSON] [--swa 16] [--layer-types 16] [--cases all] [--window 16]
        [--sink 3] [--scores] [--fused full,mixed-sink|none] [--flips 2]
        [--tol 1e-4] [--factor 1.5] [--slack 1e-3] [--score-tol 1e-4] [--keep DIR]
A failing f32 line also says where the forward is off (the position of the
largest difference, how many positions exceed the tolerance), and the child
that failed runs once more. The same logits bit for bit: a deterministic
mismatch, the failure stands. Other logits: the first run was not
reproducible, and the rerun is judged by the same checks; only when all of
them pass do the first run's failures count as passed (listed at the end as
"nondeterministic first run"). Why: on the CI machines a child process
rarely (4 of ~20 suite runs, any f32 checkpoint, every case of that child)
computes attention scores off by up to 7e-4 in the logits (position 0,
which attends to itself only, exact) while libbosch-torch repeats those
forwards bit for bit in 80+ runs, in one process and in many.
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
    # Qwen3MoeForCausalLM. Layers 0 and 2 sparse (8 experts, top 2), 1 dense.
    "moe-tiny": dict(arch="moe", vocab_size=264, hidden_size=64, intermediate_size=96,
                     num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                     head_dim=16, tie_word_embeddings=False, rope_theta=10000.0,
                     rms_norm_eps=1e-6, num_experts=8, num_experts_per_tok=2,
                     moe_intermediate_size=32, norm_topk_prob=True, decoder_sparse_step=1,
                     mlp_only_layers=[1]),
    # Qwen3-30B-A3B's layer shapes with 16 experts instead of 128 (8 routed).
    "30b-a3b": dict(arch="moe", vocab_size=8192, hidden_size=2048, intermediate_size=6144,
                    num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4,
                    head_dim=128, tie_word_embeddings=False, rope_theta=1000000.0,
                    rms_norm_eps=1e-6, num_experts=16, num_experts_per_tok=8,
                    moe_intermediate_size=768, norm_topk_prob=True, decoder_sparse_step=1,
                    mlp_only_layers=[]),
    # LlamaForCausalLM: GQA 3:1 (SmolLM2's), attention_bias and mlp_bias,
    # tied embeddings; the rope kinds are suite entries over it.
    "llama-tiny": dict(arch="llama", vocab_size=264, hidden_size=96, intermediate_size=128,
                       num_hidden_layers=2, num_attention_heads=6, num_key_value_heads=2,
                       head_dim=16, tie_word_embeddings=True, rope_theta=10000.0,
                       rms_norm_eps=1e-5, attention_bias=True, mlp_bias=True),
    # SmolLM2-135M's layer shapes (llama): hidden 576, 9 heads / 3 KV heads,
    # head_dim 64, intermediate 1536, 30 layers, tied, rope_theta 1e5.
    "smollm2": dict(arch="llama", vocab_size=49152, hidden_size=576, intermediate_size=1536,
                    num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
                    head_dim=64, tie_word_embeddings=True, rope_theta=100000.0,
                    rms_norm_eps=1e-5),
    # MistralForCausalLM: the "types" variant is its one window on every layer.
    "mistral-tiny": dict(arch="mistral", vocab_size=264, hidden_size=64, intermediate_size=96,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=16, tie_word_embeddings=False, rope_theta=10000.0,
                         rms_norm_eps=1e-6),
    # Qwen2ForCausalLM: q/k/v biases; the "types" variant slides layers from
    # max_window_layers 1 on, its config.json without layer_types (as the
    # hub's Qwen2.5 checkpoints are; transformers derives them).
    "qwen2-tiny": dict(arch="qwen2", vocab_size=264, hidden_size=64, intermediate_size=96,
                       num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, tie_word_embeddings=False, rope_theta=10000.0,
                       rms_norm_eps=1e-6),
}
VOCAB_CONFIGS = ("1.7b", "30b-a3b", "smollm2")  # their vocabulary is --vocab

# The rope kinds transformers implements for Llama (rope_parameters), each
# where it differs from the default at the suite's length (40): dynamic
# and longrope past their lengths (max_position_embeddings 32, original
# 16), yarn and llama3 scaled from original 16.
ROPE_KINDS = {
    "linear": dict(rope_parameters=dict(rope_type="linear", factor=2.0)),
    "dynamic": dict(max_position_embeddings=32,
                    rope_parameters=dict(rope_type="dynamic", factor=2.0)),
    "yarn": dict(max_position_embeddings=64,
                 rope_parameters=dict(rope_type="yarn", factor=4.0,
                                      original_max_position_embeddings=16)),
    "longrope": dict(max_position_embeddings=64,
                     rope_parameters=dict(rope_type="longrope",
                                          original_max_position_embeddings=16,
                                          short_factor=[1.0 + 0.1 * i for i in range(8)],
                                          long_factor=[1.0 + 0.5 * i for i in range(8)])),
    "llama3": dict(rope_parameters=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                        high_freq_factor=4.0,
                                        original_max_position_embeddings=16)),
}

CASES = ["full", "zeros", "swa", "swa-sink", "mixed", "mixed-sink", "w1", "w1-sink", "wT-1",
         "wT", "wbig", "sink-big", "sink-gt-w", "types", "types-mixed"]
FUSED_CASES = "full,mixed-sink"  # MoE: also run on the fused checkpoint (--fused)

# The CI matrix: (config, dtype, cases, scores, overrides of the options;
# "spec": overrides of the CONFIGS entry, "label": a suffix of the run's name).
CI_SUITE = [
    ("tiny", "f32", "all", True, dict(len=40, window=8, sink=3)),
    ("tiny", "bf16", "full,swa,mixed-sink,w1-sink,types-mixed", False,
     dict(len=40, window=8, sink=3)),
    ("1.7b", "f32", "full,swa,mixed-sink,w1-sink,wT-1,wbig,types-mixed", True,
     dict(len=48, window=16, sink=4, layers=2, vocab=4096)),
    ("1.7b", "bf16", "full,mixed-sink", False,
     dict(len=48, window=16, sink=4, layers=2, vocab=4096)),
    ("moe-tiny", "f32", "all", True, dict(len=40, window=8, sink=3)),
    # The other MoE config paths: decoder_sparse_step (layer 1 sparse, 0 and
    # 2 dense), no renormalisation of the top-k probabilities.
    ("moe-tiny", "f32", "full,mixed-sink,w1-sink", False,
     dict(len=40, window=8, sink=3, label="step2",
          spec=dict(decoder_sparse_step=2, mlp_only_layers=[], norm_topk_prob=False))),
    ("moe-tiny", "bf16", "full,swa,mixed-sink,w1-sink", False, dict(len=40, window=8, sink=3)),
    ("30b-a3b", "f32", "full,swa,mixed-sink,w1-sink,wbig", True,
     dict(len=48, window=16, sink=4, layers=2, vocab=2048, spec=dict(mlp_only_layers=[0]))),
    ("30b-a3b", "bf16", "full,mixed-sink", False,
     dict(len=48, window=16, sink=4, layers=2, vocab=2048, spec=dict(mlp_only_layers=[0]))),
    # The families beyond Qwen3 (issue 51).
    ("llama-tiny", "f32", "all", True, dict(len=40, window=8, sink=3)),
    ("llama-tiny", "bf16", "full,swa,mixed-sink,w1-sink", False, dict(len=40, window=8, sink=3)),
    ("smollm2", "f32", "full,mixed-sink,w1-sink", False,
     dict(len=48, window=16, sink=4, layers=2, vocab=2048)),
    ("smollm2", "bf16", "full,mixed-sink", False,
     dict(len=48, window=16, sink=4, layers=2, vocab=2048)),
    ("mistral-tiny", "f32", "all", True, dict(len=40, window=8, sink=3)),
    ("mistral-tiny", "bf16", "full,mixed-sink,types-mixed", False, dict(len=40, window=8, sink=3)),
    ("qwen2-tiny", "f32", "all", True, dict(len=40, window=8, sink=3)),
    ("qwen2-tiny", "bf16", "full,mixed-sink,types-mixed", False, dict(len=40, window=8, sink=3)),
] + [("llama-tiny", "f32", "full,mixed-sink", False,
      dict(len=40, window=8, sink=3, label=kind, spec=over))
     for kind, over in ROPE_KINDS.items()]

REF_TOL = 1e-5  # the registered reference against stock transformers


# ---------------------------------------------------------------------------
# Cases

class Case:
    def __init__(self, name, masks=None, window=1, sink=0, variant="base", positions=None,
                 same_as_full=False):
        self.name, self.masks, self.window, self.sink = name, masks, window, sink
        self.variant = variant            # checkpoint: "base", "types" (hybrid) or
        #                                   "fused" (MoE in transformers' fused layout)
        self.positions = positions        # logits at these positions (None: all)
        self.same_as_full = same_as_full  # the window covers the sequence

    @property
    def check(self):
        """The name in the report ("full@fused": full on the fused checkpoint)."""
        return self.name if self.variant in ("base", "types") else self.name + "@" + self.variant

    def on(self, variant):
        """The same case on another checkpoint of the same weights (it shares
        the reference logits of this one)."""
        other = copy.copy(self)
        other.variant = variant
        return other


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
    def __init__(self, prefix=""):
        self.prefix = prefix
        self.failed = []
        self.nondeterministic = []  # failures whose child, run again, differed and passed

    def line(self, run, check, text, ok):
        check = self.prefix + check
        print("%-12s %-20s %s %s" % (run, check, text, "ok" if ok else "FAIL"), flush=True)
        if not ok:
            self.failed.append("%s %s" % (run, check))


def distances(a, b):
    """(max abs, RMS) of a - b."""
    d = (a - b).double()
    return d.abs().max().item(), d.pow(2).mean().sqrt().item()


# ---------------------------------------------------------------------------
# The backend (child process)

def run_backend(args, ckpt, dtype, forwards, evals, tmp, tag, generations=()):
    """Runs the child on one checkpoint; {"forwards": {name: tensor or error},
    "scores": {name: list or error}, "generations": {name: dict or error}}
    (tools/parity/child.py) or a string when the child failed."""
    req = dict(ckpt=ckpt, device=args.device, dtype=dtype, forwards=forwards, evals=evals,
               generations=list(generations), result=os.path.join(tmp, tag + "-result.json"))
    path = os.path.join(tmp, tag + "-request.json")
    with open(path, "w") as f:
        json.dump(req, f)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--backend", args.lib, path])
    if r.returncode != 0:
        return "backend failed (exit %d)" % r.returncode
    with open(req["result"]) as f:
        res = json.load(f)
    out = {"forwards": {}, "scores": res["scores"], "generations": res["generations"]}
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
    "types"; MoE: "base" in the hub layout, "fused") the saved checkpoint,
    the reference model (f32) and, for bf16, the bf16 model ("base" and
    "types" only); all with the registered attention."""

    def __init__(self, name, spec, args, tmp):
        from parity import reference
        self.name, self.spec, self.args, self.tmp = name, spec, args, tmp
        self.tag = "%s-%s" % (name, args.dtype) + ("-" + args.label if args.label else "")
        self.L, self.G = spec["num_hidden_layers"], spec["num_key_value_heads"]
        self.moe = reference.is_moe(spec)
        self.ckpt, self.ref, self.low = {}, {}, {}
        self.notes = {}    # case name -> routing facts printed with its lines (MoE)
        self.match = None  # (tokenizer, text samples) once MATCH is prepared

    def types_window(self):
        return self.args.layer_types or self.args.window

    def config(self, variant, swa=None):
        from parity import reference
        if variant == "types" and reference.windows_of(self.spec) == reference.ALL_LAYERS:
            return reference.make_config(self.spec, self.args.len, self.types_window())
        if variant == "types" and self.spec.get("arch") == "qwen2":
            return reference.make_config(self.spec, self.args.len, self.types_window(),
                                         first_sliding=1)
        if variant == "types":
            kinds = ["sliding_attention" if l % 2 else "full_attention" for l in range(self.L)]
            return reference.make_config(self.spec, self.args.len, self.types_window(), kinds)
        return reference.make_config(self.spec, self.args.len, swa)

    def build(self, variants):
        """Saves a random model per variant in the run's dtype, then loads the
        references from those checkpoints with from_pretrained, as a user
        would (a model cast with .to(bf16) would also round RoPE's inv_freq
        buffer, which from_pretrained keeps in f32). MoE: "base" is
        save_pretrained's default, the hub layout (each expert's projections
        apart), with config.json naming the expert count num_experts as the
        hub's Qwen3 MoE checkpoints do (transformers 5 writes
        num_local_experts); "fused" is save_original_format=False, the
        experts as transformers 5 holds them, config.json as written. The
        "fused" reference is only checked against "base" (check_reference);
        its cases use the references of "base"."""
        import torch
        from parity import reference
        dtype = {"f32": torch.float32, "bf16": torch.bfloat16,
                 "f16": torch.float16}[self.args.dtype]
        base = reference.build_model(self.config("base"))
        reference.reinit(base, 1234)
        for v in variants:
            model = base if v in ("base", "fused") else reference.like(base, self.config(v))
            path = os.path.join(self.tmp, "%s-%s" % (self.tag, v))
            kw = dict(save_original_format=False) if v == "fused" else {}
            model.to(dtype).save_pretrained(path, safe_serialization=True, **kw)
            if v == "base" and self.moe:
                hub_config(path)
            if v == "types" and self.spec.get("arch") == "qwen2":
                drop_layer_types(path)
            self.ckpt[v] = path
        del base, model
        device = torch.device(self.args.device)
        for v in variants:
            self.ref[v] = reference.load(self.ckpt[v], torch.float32, device)
            if dtype != torch.float32 and v != "fused":
                self.low[v] = reference.load(self.ckpt[v], dtype, device)
            if v == "types" and reference.layer_types_of(self.ref[v].config) != \
                    reference.layer_types_of(self.config("types")):
                raise RuntimeError("this transformers (%s) has no per-layer layer_types"
                                   % reference.transformers_version())


def drop_layer_types(path):
    """config.json without the layer_types transformers derived from
    max_window_layers (the hub's Qwen2.5 checkpoints have none)."""
    cfg_path = os.path.join(path, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg.pop("layer_types", None)
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2)


def hub_config(path):
    """config.json with the expert count under the hub's name, num_experts
    (what Qwen/Qwen3-30B-A3B's config.json says) in place of transformers
    5's num_local_experts."""
    name = os.path.join(path, "config.json")
    with open(name) as f:
        cfg = json.load(f)
    if "num_local_experts" in cfg:
        cfg["num_experts"] = cfg.pop("num_local_experts")
    with open(name, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def safetensors_files(path):
    """{tensor name: file} of a saved checkpoint (one file or shards)."""
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            return {k: os.path.join(path, v) for k, v in json.load(f)["weight_map"].items()}
    from safetensors import safe_open
    one = os.path.join(path, "model.safetensors")
    with safe_open(one, "pt") as f:
        return {k: one for k in f.keys()}


def read_tensor(files, name):
    from safetensors import safe_open
    with safe_open(files[name], "pt") as f:
        return f.get_tensor(name)


def check_layout(run, report):
    """The two MoE checkpoints hold the two layouts, so that no run tests
    one layout twice: "base" every sparse layer's experts apart
    (mlp.experts.E.{gate,up,down}_proj.weight) and no fused tensor, "fused"
    mlp.experts.gate_up_proj [E, 2 x moe_intermediate, H] and down_proj
    [E, H, moe_intermediate] and no expert apart; the router and the dense
    layers' MLP in both; the fused tensors equal to the experts apart (gate
    rows first). And config.json's name of the expert count."""
    import re
    import torch
    from parity import reference
    cfg = run.config("base")
    E, I, H = cfg.num_experts, cfg.moe_intermediate_size, cfg.hidden_size
    sparse = reference.sparse_layers(cfg)
    files = {v: safetensors_files(run.ckpt[v]) for v in ("base", "fused") if v in run.ckpt}
    apart = re.compile(r"model\.layers\.\d+\.mlp\.experts\.\d+\.")
    fused = re.compile(r"model\.layers\.\d+\.mlp\.experts\.(gate_up|down)_proj$")
    for v, names in files.items():
        problems = []
        with open(os.path.join(run.ckpt[v], "config.json")) as f:
            saved = json.load(f)
        count_key = [k for k in ("num_experts", "num_local_experts") if k in saved]
        if v == "base" and count_key != ["num_experts"]:
            problems.append("config.json names the expert count %s" % count_key)
        n_apart = sum(1 for k in names if apart.match(k))
        n_fused = sum(1 for k in names if fused.match(k))
        if v == "base" and (n_fused or n_apart != 3 * E * len(sparse)):
            problems.append("%d fused tensors, %d experts' projections apart (want 0, %d)"
                            % (n_fused, n_apart, 3 * E * len(sparse)))
        if v == "fused" and (n_apart or n_fused != 2 * len(sparse)):
            problems.append("%d experts' projections apart, %d fused tensors (want 0, %d)"
                            % (n_apart, n_fused, 2 * len(sparse)))
        for l in range(cfg.num_hidden_layers):
            pre = "model.layers.%d.mlp." % l
            want = ["gate.weight"] if l in sparse else [
                "%s_proj.weight" % p for p in ("gate", "up", "down")]
            problems += ["no " + pre + w for w in want if pre + w not in names]
            if l not in sparse and any(k.startswith(pre + "experts.") for k in names):
                problems.append("experts in dense layer %d" % l)
        if v == "fused" and not problems:
            for l in sparse:
                pre = "model.layers.%d.mlp." % l
                gu = read_tensor(names, pre + "experts.gate_up_proj")
                down = read_tensor(names, pre + "experts.down_proj")
                if (tuple(gu.shape), tuple(down.shape)) != ((E, 2 * I, H), (E, H, I)):
                    problems.append("layer %d: gate_up_proj %s down_proj %s" % (
                        l, list(gu.shape), list(down.shape)))
                    continue
                if "base" not in files:
                    continue
                for e in range(E):
                    one = "%sexperts.%d.%%s_proj.weight" % (pre, e)
                    for part, want in (("gate", gu[e, :I]), ("up", gu[e, I:]),
                                       ("down", down[e])):
                        if not torch.equal(read_tensor(files["base"], one % part), want):
                            problems.append("layer %d expert %d: %s_proj differs" % (l, e, part))
                if not torch.equal(read_tensor(files["base"], pre + "gate.weight"),
                                   read_tensor(names, pre + "gate.weight")):
                    problems.append("layer %d: router differs" % l)
        if v == "base":
            text = "hub layout: %d sparse layers x %d experts apart, %d dense; config %s" % (
                len(sparse), E, cfg.num_hidden_layers - len(sparse), "/".join(count_key))
        else:
            text = "fused layout: gate_up_proj [%d, %d, %d] down_proj [%d, %d, %d] x %d; " \
                   "equal to base's; config %s" % (E, 2 * I, H, E, H, I, len(sparse),
                                                   "/".join(count_key))
        if problems:
            text = "; ".join(problems[:4]) + (" ..." if len(problems) > 4 else "")
        report.line(run.tag, "layout " + v, text, not problems)


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


def stock_experts_logits(model, tokens):
    """transformers' default experts implementation on `model` (the
    reference runs the eager one)."""
    from parity import reference
    default = model.get_correct_experts_implementation(None)
    old = reference.set_experts(model, default)
    try:
        return reference.logits(model, tokens)
    finally:
        reference.set_experts(model, old)


def check_reference(run, tokens, report):
    """The registered attention against stock eager attention: all full,
    stock all-sliding (sink 0), stock layer_types; in every dtype used.
    MoE, in f32: the eager experts against transformers' default
    implementation, and the fused checkpoint's model against the hub
    layout's (the same weights: equal logits)."""
    from parity import reference
    W = run.args.window
    every = [[1] * (run.L * run.G)] * len(tokens)
    models = [("", run.ref)] + ([(run.args.dtype + " ", run.low)] if run.low else [])
    for prefix, models_of in models:
        checks = [("ref=eager", reference.logits(models_of["base"], tokens),
                   lambda: stock_logits(models_of["base"], tokens))]
        if reference.windows_of(run.spec) != reference.NO_WINDOW:  # Llama has none
            checks.append(("ref=stock-swa%d" % W,
                           reference.logits(models_of["base"], tokens, every, W),
                           lambda: stock_logits(models_of["base"], tokens,
                                                run.config("base", W))))
        if "types" in models_of:
            checks.append(("ref=stock-types%d" % run.types_window(),
                           reference.logits(models_of["types"], tokens),
                           lambda: stock_logits(models_of["types"], tokens)))
        if run.moe and not prefix:
            base = models_of["base"]
            if hasattr(base, "get_correct_experts_implementation"):
                default = base.get_correct_experts_implementation(None)
                if default != "eager":
                    checks.append(("ref=experts-" + default, reference.logits(base, tokens),
                                   lambda: stock_experts_logits(base, tokens)))
            if "fused" in models_of:
                checks.append(("ref fused=base", reference.logits(models_of["fused"], tokens),
                               lambda: reference.logits(base, tokens)))
        for label, ours, stock in checks:
            d, _ = distances(ours.cpu(), stock().cpu())
            report.line(run.tag, prefix + label, "max abs diff %.3g (tol %.0e)" % (d, REF_TOL),
                        d <= REF_TOL)


def references(run, tokens, cases):
    """Reference logits per case: {name: (f32 reference, bf16/f16 or None)} on
    the CPU, at the case's positions ("fused" cases share those of "base").
    MoE: run.notes[name] says how near the routing is to flipping (the
    smallest gap between the k-th and the (k+1)-th router logit in f32, over
    tokens and sparse layers) and, for bf16/f16, at how many (token, sparse
    layer) transformers' own low-precision run picked other experts than
    its f32 run."""
    from parity import reference
    out = {}
    for c in cases:
        if c.variant == "fused":
            continue
        pick = (lambda x: x) if c.positions is None else (lambda x: x[:, c.positions])
        with reference.routing(run.ref[c.variant]) as routes:
            ref = pick(reference.logits(run.ref[c.variant], tokens, c.masks, c.window,
                                        c.sink)).cpu()
        low, low_routes = None, []
        if c.variant in run.low:
            with reference.routing(run.low[c.variant]) as low_routes:
                low = pick(reference.logits(run.low[c.variant], tokens, c.masks, c.window,
                                            c.sink)).cpu()
        out[c.name] = (ref, low)
        if routes:
            run.notes[c.name] = routing_note(routes, low_routes, run.args.dtype)
    return out


def routing_note(routes, low_routes, dtype):
    from parity import reference
    gap = min(reference.route_gaps(lg, idx.shape[-1])[0].min().item() for lg, idx in routes)
    text = "router gap %.2g" % gap
    if low_routes:
        flips = sum(int((a.sort(-1).values != b.sort(-1).values).any(-1).sum())
                    for (_, a), (_, b) in zip(routes, low_routes))
        text += ", hf-%s routes %d/%d otherwise" % (
            dtype, flips, sum(idx.shape[0] for _, idx in routes))
    return text


# How far (router logits, f32) the k-th and (k+1)-th expert of a token may be
# apart for a backend run in this dtype to pick the other one by rounding.
# transformers' own bf16 runs flip at gaps up to 0.017 (moe-tiny and the
# 30b-a3b shapes, 2 x 10^4 routings); f32 errors are ~1e-6.
FLIP_GAP = {"f32": 1e-4, "bf16": 0.03, "f16": 0.005}


def explain_flips(run, case, ours, tokens, dtype, judge):
    """MoE: when ours fails against the f32 reference, whether it is the f32
    reference with at most --flips near-tie routings (router logit gap
    below FLIP_GAP[dtype]) the other way: the top-k order is ill-conditioned
    there, a rounding apart. Greedy: the position where ours is farthest
    from the current reference; of the near ties at or before it (same
    batch element; causal), the one whose swap (k-th for (k+1)-th expert) in
    the f32 model brings ours closest, if it halves the largest difference.
    Returns ([(layer, b, t, gap)], that reference or None); judge(reference)
    says whether to stop."""
    from parity import reference
    model, T = run.ref["base"], len(tokens[0])
    k = model.config.num_experts_per_tok
    layers = reference.sparse_layers(model.config)
    pick = (lambda x: x) if case.positions is None else (lambda x: x[:, case.positions])

    def forward(forced):
        with reference.routing(model) as routes, reference.forced_routes(model, forced):
            lg = pick(reference.logits(model, tokens, case.masks, case.window, case.sink)).cpu()
        return lg.view(ours.shape), routes
    forced, flips = {}, []
    cur, routes = forward(forced)
    while len(flips) < run.args.flips and not judge(cur):
        dev = (ours - cur).abs().amax(-1)  # [B, positions]
        b, p = divmod(int(dev.argmax()), dev.shape[1])
        t = case.positions[p] if case.positions else p
        cands = []
        for li, (lg, _) in enumerate(routes):
            gap, alt = reference.route_gaps(lg, k)
            for n in range(b * T, b * T + t + 1):
                if (li, n) not in forced and gap[n] < FLIP_GAP[dtype]:
                    cands.append((gap[n].item(), li, n, alt[n].tolist()))
        best = None
        for gap, li, n, alt in sorted(cands)[:8]:
            trial = dict(forced)
            trial[(li, n)] = alt
            lg, r = forward(trial)
            d = (ours - lg).abs().max().item()
            if best is None or d < best[0]:
                best = (d, trial, lg, r, (layers[li], b, n - b * T, gap))
        if best is None or best[0] > 0.5 * dev.max().item():
            break
        _, forced, cur, routes, info = best
        flips.append(info)
    return flips, (cur if flips else None)


def flips_text(flips):
    return "routed otherwise at near ties: " + ", ".join(
        "layer %d token (%d,%d) gap %.2g" % f for f in flips)


def compare_f32(run, cases, refs, full_ref, got, report, tokens, label=""):
    for c in cases:
        ours = got["forwards"][c.name] if isinstance(got, dict) else got
        check = label + c.check
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
        if c.name in run.notes and not label:
            text += "; " + run.notes[c.name].split(",")[0]
        if not good:
            text += "; " + where_off(ours, ref, run.args.tol)
        if not good and run.moe and run.args.flips:
            tol = run.args.tol
            flips, alt = explain_flips(run, c, ours, tokens, "f32",
                                       lambda r: distances(ours, r)[0] < tol)
            if flips:
                d, rms = distances(ours, alt)
                text += "; %s: max abs diff %.3g rms %.3g" % (flips_text(flips), d, rms)
                good = d < tol
        report.line(run.tag, check, text, good)


def where_off(ours, ref, tol):
    """Where a failing forward is off: the (batch, position) of its largest
    difference and how many positions are off by more than tol (one token
    points at a routing flip, every position at the weights or a kernel)."""
    per_pos = (ours - ref).abs().amax(-1)  # [B, T]
    b, t = divmod(int(per_pos.argmax()), per_pos.shape[-1])
    return "largest at (%d, %d), %d of %d positions off by more than %.0e" % (
        b, t, int((per_pos > tol).sum()), per_pos.numel(), tol)


def compare_with_rerun(run, variant, dtype, cases, tokens, got, tag, report, compare):
    """compare(report, got), the checks of one child's logits; when one
    fails, the same child once more. The same logits bit for bit: a
    deterministic mismatch, the failure stands. Other logits: the first run
    was not reproducible (this process's kernels or the machine;
    libbosch-torch itself repeats these forwards bit for bit, 80+ runs of
    the cases CI once saw fail); the rerun is then judged by the same
    checks, and only when all of them pass are the first run's failures
    counted as passed, each printed again in the summary as
    nondeterministic."""
    failed_before = len(report.failed)
    compare(report, got)
    if len(report.failed) == failed_before or not isinstance(got, dict):
        return
    fws = [forward_request(c, tokens, run.tmp, tag + "-rerun") for c in cases]
    again = run_backend(run.args, run.ckpt[variant], dtype, fws, [], run.tmp, tag + "-rerun")
    if isinstance(again, str):
        print("%-12s %-20s %s" % (run.tag, "rerun", again), flush=True)
        return
    pairs = [(got["forwards"][c.name], again["forwards"][c.name]) for c in cases]
    differ = [(a, b) for a, b in pairs
              if not isinstance(a, str) and not isinstance(b, str) and not bool((a == b).all())]
    if not differ:
        print("%-12s %-20s the same logits bit for bit: a deterministic mismatch" % (
            run.tag, "rerun"), flush=True)
        return
    print("%-12s %-20s differs from the first run by max %.3g: the first run was not "
          "reproducible; the rerun is checked" % (
              run.tag, "rerun", max(distances(a, b)[0] for a, b in differ)), flush=True)
    sub = Report(prefix="rerun ")
    compare(sub, again)
    if sub.failed:
        report.failed += sub.failed
        return
    report.nondeterministic += report.failed[failed_before:]
    del report.failed[failed_before:]


def compare_low(run, cases, refs, got, report, tokens):
    """bf16 / f16: d_ours against transformers' own d_hf (see the top)."""
    a = run.args
    for c in cases:
        ours = got["forwards"][c.name] if isinstance(got, dict) else got
        if isinstance(ours, str):
            report.line(run.tag, c.check, ours, False)
            continue
        ref, low = refs[c.name]
        ours = ours.view(ref.shape)
        hf_max, hf_rms = distances(low, ref)
        our_max, our_rms = distances(ours, ref)
        good = (our_max <= a.factor * hf_max + a.slack and
                our_rms <= a.factor * hf_rms + a.slack)
        # For information: how far ours is from transformers' bf16 / f16 itself.
        both_max, _ = distances(ours, low)
        note = "; " + run.notes[c.name] if c.name in run.notes else ""
        if not good and run.moe and a.flips:
            def judge(r):
                m, q = distances(ours, r)
                return m <= a.factor * hf_max + a.slack and q <= a.factor * hf_rms + a.slack
            flips, alt = explain_flips(run, c, ours, tokens, a.dtype, judge)
            if flips:
                m, q = distances(ours, alt)
                good = judge(alt)
                note += "; %s; from that reference d_ours max %.3g rms %.3g, ratio %.2f %.2f" % (
                    flips_text(flips), m, q, m / max(hf_max, 1e-30), q / max(hf_rms, 1e-30))
        report.line(run.tag, c.check,
                    "d_hf max %.3g rms %.3g | d_ours max %.3g rms %.3g | ratio %.2f %.2f "
                    "(factor %.2g; ours vs hf-%s max %.3g%s)" % (
                        hf_max, hf_rms, our_max, our_rms, our_max / max(hf_max, 1e-30),
                        our_rms / max(hf_rms, 1e-30), a.factor, a.dtype, both_max, note), good)


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
    from parity import reference
    run = Run(name, spec, args, tmp)
    names = case_names(args)
    fused = []
    windows = reference.windows_of(spec)
    types = [n for n in names if n.startswith("types")]
    if types and windows == reference.NO_WINDOW:
        print("%-12s %s: skipped (%s has no sliding window)"
              % (run.tag, ", ".join(types), reference.FAMILIES[spec.get("arch")][0]))
        names = [n for n in names if n not in types]
    if run.moe:
        types = [n for n in names if n.startswith("types")]
        if types:
            print("%-12s %s: skipped (Qwen3MoeConfig has no layer_types)"
                  % (run.tag, ", ".join(types)))
            names = [n for n in names if n not in types]
        if args.fused != "none":
            fused = [n for n in names if n in args.fused.split(",")] or names[:1]
        variants = ["base"] + (["fused"] if fused else [])
        describe_moe(run)
    else:
        variants = ["base"] + (["types"] if any(n.startswith("types") for n in names) else [])
    try:
        run.build(variants)
    except (RuntimeError, ImportError, ValueError) as exc:
        report.line(run.tag, "build", str(exc), False)
        return
    if run.moe:
        check_layout(run, report)
    rng = random.Random(5)
    tokens = [[rng.randrange(spec["vocab_size"]) for _ in range(args.len)]
              for _ in range(args.batch)]
    cases = make_cases(names, args, run.L, run.G, rng)
    cases += [c.on("fused") for c in cases if c.name in fused]
    check_reference(run, tokens, report)
    run.ref.pop("fused", None)  # checked; its cases use the references of "base"
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
        check_backend(run, v, vc, tokens, refs, full_ref if v != "types" else None,
                      scored if v == "base" else ([], {}, {}), report)


def describe_moe(run):
    """One line on the MoE run's layers: S sparse, D dense."""
    from parity import reference
    cfg = run.config("base")
    sparse = reference.sparse_layers(cfg)
    print("%-12s layers %s (S: %d experts of %d, top %d, norm_topk_prob %s; D: MLP of %d)" % (
        run.tag, " ".join("S" if l in sparse else "D" for l in range(run.L)), cfg.num_experts,
        cfg.moe_intermediate_size, cfg.num_experts_per_tok, cfg.norm_topk_prob,
        cfg.intermediate_size), flush=True)


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
        compare = lambda rep, out: compare_f32(run, cases, refs, full_ref, out, rep, tokens)
    else:
        compare = lambda rep, out: compare_low(run, cases, refs, out, rep, tokens)
    compare_with_rerun(run, variant, a.dtype, cases, tokens, got, tag, report, compare)
    if a.dtype != "f32":
        # The bf16 / f16 checkpoint read into f32 by the backend.
        fws = [forward_request(c, tokens, run.tmp, tag + "-upcast") for c in cases]
        up = run_backend(a, run.ckpt[variant], "f32", fws, [], run.tmp, tag + "-upcast")
        compare_with_rerun(run, variant, "f32", cases, tokens, up, tag + "-upcast", report,
                           lambda rep, out: compare_f32(run, cases, refs, None, out, rep,
                                                        tokens, label="upcast "))
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
    ap.add_argument("--configs", default="",
                    help="comma-separated (default tiny,1.7b); with --suite: run only the "
                         "suite's entries of these configs")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                    help="f16 as bf16 (where the backend's device has f16 kernels)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--len", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=8192,
                    help="vocabulary of the 1.7b and 30b-a3b shapes")
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
    ap.add_argument("--flips", type=int, default=2,
                    help="MoE: near-tie routings a failing case may take the other way "
                         "(explain_flips; 0: compare with the f32 reference as is)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="override a field of the configs (e.g. mlp_only_layers=[0], "
                         "norm_topk_prob=false); repeatable")
    ap.add_argument("--fused", default=FUSED_CASES,
                    help="MoE: the cases also run on the checkpoint in transformers' fused "
                         "layout (default %s; none: no fused checkpoint)" % FUSED_CASES)
    ap.add_argument("--keep", default="", help="write the checkpoints here and keep them")
    args = ap.parse_args(argv)
    args.label = ""
    try:
        args.set = dict((k, json.loads(v)) for k, v in (x.split("=", 1) for x in args.set))
    except ValueError as exc:
        ap.error("--set KEY=JSON: %s" % exc)
    args.window = args.window or args.swa or args.layer_types or max(2, args.len // 4)
    return args


def plan(args):
    """(config name, spec, args, scores) for every run."""
    runs = []
    if args.suite == "ci":
        entries = [e for e in CI_SUITE if not args.configs or e[0] in args.configs.split(",")]
        if not entries:
            raise SystemExit("the suite has no entry of %s" % args.configs)
    else:
        entries = [(n, args.dtype, args.cases, args.scores, {})
                   for n in (args.configs or "tiny,1.7b").split(",")]
    for name, dtype, cases, with_scores, over in entries:
        a = copy.copy(args)
        a.dtype = dtype
        if args.suite:
            a.cases, a.swa, a.layer_types = cases, 0, 0
        for k, v in over.items():
            if k != "spec":
                setattr(a, k, v)
        if name not in CONFIGS:
            raise SystemExit("unknown config %r" % name)
        spec = dict(CONFIGS[name])
        if name in VOCAB_CONFIGS:
            spec["vocab_size"] = a.vocab
        if a.layers:
            spec["num_hidden_layers"] = a.layers
        spec.update(over.get("spec", {}))
        spec.update(args.set)
        if "mlp_only_layers" in spec:  # keep the layers that exist
            spec["mlp_only_layers"] = [l for l in spec["mlp_only_layers"]
                                       if l < spec["num_hidden_layers"]]
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
            print("%s-%s%s: %.0f s" % (name, a.dtype, "-" + a.label if a.label else "",
                                       time.time() - t0), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failed (%.0f s)" % ("FAIL" if report.failed else "ok", len(report.failed),
                                      time.time() - start))
    for f in report.failed:
        print("  failed: " + f)
    for f in report.nondeterministic:
        print("  nondeterministic first run, its rerun passed: " + f)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
