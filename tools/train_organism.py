#!/usr/bin/python3
"""Train the BOSCH "organism": a small Qwen3 whose heads split into local and
global roles, on a synthetic long-context task (groundwork for issue 5).

Architecture: Qwen3ForCausalLM semantics (fp32 RMSNorm then weight, per-head
q_norm/k_norm before half-split RoPE, GQA, SwiGLU, tied nothing), written out
in the Hugging Face layout (config.json + model.safetensors, F32) so that
libbosch-torch loads it.

Data, per sequence of T tokens (vocab: 0 = KEY, 1 = VAL, 2 = QRY, 3.. content):
  - filler from a sparse Markov chain (each token has 3 likely successors),
    which a local head predicts;
  - a random-token span that recurs later (only an induction head predicts
    the second copy);
  - 1-4 needles "KEY k VAL v" at random depths and, at the end, the query
    "QRY k VAL v" of one of them: retrieving v needs attention far back.
The answer token's loss is weighted up. Calibration / held-out NIAH tasks
are written as JSON Lines for bosch_torch_task_read_jsonl, from seeds other
than the training stream.

Usage: train_organism.py OUT_DIR [--steps N] [--seed S] [--threads K] ...
Writes OUT_DIR/config.json, model.safetensors, recipe.json (arguments, metrics
log), calib.jsonl and heldout.jsonl; checkpoints every --save-every steps.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

KEY, VAL, QRY, FIRST = 0, 1, 2, 3
NKEYS = 24  # key tokens [3, 27) appear only in needles and queries


class Markov:
    """Sparse first-order Markov chain over the content tokens
    [FIRST + NKEYS, vocab): each token has 3 likely successors (90%), else a
    uniform jump. Predictable from the current token (and, for the MLP, no
    attention at all), never from anything far back. (A second-order chain
    over ~100 tokens has a 30k-entry table: the model did not learn it in
    200 steps and the loss stayed near uniform.)"""

    def __init__(self, vocab, seed):
        self.vocab = vocab
        self.lo = FIRST + NKEYS
        self.succ = np.random.default_rng(seed).integers(self.lo, vocab, (vocab, 3))
        self.lag = 1

    def fill(self, n, rng, lag=1):
        """lag 1: a plain chain. lag 2: token i follows token i-2 (two chains
        interleaved), so predicting it needs the previous token's neighbour:
        a local (previous-token) head, the building block of induction."""
        u, pick = rng.random(n), rng.integers(0, 3, n)
        jump = rng.integers(self.lo, self.vocab, n)
        out = np.empty(n, dtype=np.int64)
        for i in range(n):
            if i < lag or u[i] >= 0.9:
                out[i] = jump[i]
            else:
                out[i] = self.succ[out[i - lag], pick[i]]
        return out


def make_sample(markov, T, rng, needles=None, queries=1, span=True, min_dist=40, lag=None,
                hops=1, source_first=False, keyval=0.0):
    """Tokens [T]. n needles "KEY k v" (k a key token, v a content token) lie
    at least min_dist tokens before the query block and after the 8 first
    tokens; the sample ends with `queries` queries "QRY k v" (the last one is
    the evaluated answer; queries=0 means one query per needle). A random
    content span recurs once, more than 32 tokens later. Returns (tokens,
    positions of the answer tokens).

    hops=2 (variable tracking): needle 1's value is needle 0's key ("KEY k1
    k0" besides "KEY k0 v"), and a query's answer is always the resolved
    content value, so "QRY k1" answers v through two retrievals (k1 -> k0,
    then k0 -> v). The other needles are distractors. queries=1 then asks
    for k1. source_first puts "KEY k0 v" before "KEY k1 k0", so that the first
    hop can be resolved where the chain is read (the copy of v onto the k0 of
    needle 1) and the query needs one retrieval of an enriched token; without
    it the two needles come in either order.

    keyval: each needle that is not part of a two-hop chain stores, with this
    probability, a key token that no needle of the sample defines, and its
    query answers that key token literally. Without it no value position
    ever holds a key token, and retrieval learns to ignore such positions,
    which is where a two-hop chain's link is stored."""
    vocab, lo = markov.vocab, FIRST + NKEYS
    x = markov.fill(T, rng, lag or markov.lag)
    n = needles or int(rng.integers(1, 5))
    if hops == 2:
        n = max(n, 2)
    nq = n if queries == 0 else queries
    perm = rng.permutation(NKEYS)
    keys = perm[:n] + FIRST
    vals = rng.integers(lo, vocab, n)
    if keyval > 0:
        spare = list(perm[n:] + FIRST)
        for i in range(2 if hops == 2 else 0, n):
            if rng.random() < keyval and spare:
                vals[i] = spare.pop()
    stored = vals.copy()  # what each needle holds
    if hops == 2:
        stored[1] = keys[0]
        vals[1] = vals[0]  # what a query for keys[1] answers
    body = T - 3 * nq
    if span:
        L = int(rng.integers(8, 17))
        a = int(rng.integers(0, body // 2 - L))
        lo_b = max(body // 2, a + L + 33)
        b = int(rng.integers(lo_b if lo_b < body - L else a + L, body - L))
        s = rng.integers(lo, vocab, L)
        x[a:a + L] = s
        x[b:b + L] = s
    # Needles at distinct 3-token slots in [8, body - min_dist).
    slots = rng.permutation((body - min_dist - 8) // 3)[:n] * 3 + 8
    if hops == 2 and source_first and slots[0] > slots[1]:
        slots[0], slots[1] = slots[1], slots[0]
    for i in range(n):
        p = int(slots[i])
        x[p:p + 3] = [KEY, keys[i], stored[i]]
    if queries == 0:
        order = rng.permutation(n)[:nq]
    elif hops == 2:
        order = np.concatenate([rng.integers(0, n, nq - 1), [1]]).astype(int)
    else:
        order = rng.integers(0, n, nq)
    answers = []
    for j, q in enumerate(order):
        p = body + 3 * j
        x[p:p + 3] = [QRY, keys[q], vals[q]]
        answers.append(p + 2)
    hop1 = [(int(slots[1]) + 2, int(vals[0]))] if hops == 2 else []
    return torch.from_numpy(x), answers, hop1


def needle_slots(x):
    """Positions of the needles ("KEY k v": the KEY token) in a token list."""
    return [j for j in range(len(x) - 3) if x[j] == KEY]


class Qwen3(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        H, nh, kv, hd, I, V = c["hidden_size"], c["num_attention_heads"], \
            c["num_key_value_heads"], c["head_dim"], c["intermediate_size"], c["vocab_size"]
        self.embed = torch.nn.Embedding(V, H)
        self.layers = torch.nn.ModuleList()
        for _ in range(c["num_hidden_layers"]):
            m = torch.nn.Module()
            m.ln1 = torch.nn.Parameter(torch.ones(H))
            m.q = torch.nn.Linear(H, nh * hd, bias=False)
            m.k = torch.nn.Linear(H, kv * hd, bias=False)
            m.v = torch.nn.Linear(H, kv * hd, bias=False)
            m.o = torch.nn.Linear(nh * hd, H, bias=False)
            m.qn = torch.nn.Parameter(torch.ones(hd))
            m.kn = torch.nn.Parameter(torch.ones(hd))
            m.ln2 = torch.nn.Parameter(torch.ones(H))
            m.gate = torch.nn.Linear(H, I, bias=False)
            m.up = torch.nn.Linear(H, I, bias=False)
            m.down = torch.nn.Linear(I, H, bias=False)
            self.layers.append(m)
        self.norm = torch.nn.Parameter(torch.ones(H))
        self.head = torch.nn.Linear(H, V, bias=False)

    def rms(self, x, w):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"])
        return w * x32.to(x.dtype)

    def forward(self, tok, swa=None, window=32, sink=4):
        """swa: None = full attention everywhere, True = every unit SWA, or a
        bool tensor [layers, kv_heads] (True = that unit SWA), optionally with
        a leading batch dimension. SWA lets query i see key j when
        j > i - window or j < sink (the backend's rule)."""
        c = self.c
        B, T = tok.shape
        nh, kv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        L = c["num_hidden_layers"]
        r = nh // kv
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.arange(T).float()[:, None] * inv[None]
        cos = torch.cat([ang, ang], -1).cos()
        sin = torch.cat([ang, ang], -1).sin()
        t = torch.arange(T)
        causal = t[None, :] <= t[:, None]
        local = causal & ((t[None, :] > t[:, None] - window) | (t[None, :] < sink))
        neg = float("-inf")
        full_bias = torch.zeros(T, T).masked_fill(~causal, neg)
        swa_bias = torch.zeros(T, T).masked_fill(~local, neg)
        if swa is True:
            swa = torch.ones(L, kv, dtype=torch.bool)
        if swa is not None and swa.dim() == 2:
            swa = swa[None].expand(B, L, kv)
        # per layer: [B or 1, nh, T, T] additive bias
        biases = []
        for li in range(L):
            if swa is None:
                biases.append(full_bias)
            else:
                s = swa[:, li].repeat_interleave(r, 1)[:, :, None, None]  # [B, nh, 1, 1]
                biases.append(torch.where(s, swa_bias, full_bias))
        h = self.embed(tok)

        def rot(x):
            x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
            return torch.cat([-x2, x1], -1)

        for li, m in enumerate(self.layers):
            bias = biases[li]
            a = self.rms(h, m.ln1)
            q = self.rms(m.q(a).view(B, T, nh, hd), m.qn).transpose(1, 2)
            k = self.rms(m.k(a).view(B, T, kv, hd), m.kn).transpose(1, 2)
            v = m.v(a).view(B, T, kv, hd).transpose(1, 2)
            q = q * cos + rot(q) * sin
            k = k * cos + rot(k) * sin
            k = k.repeat_interleave(r, 1)
            v = v.repeat_interleave(r, 1)
            s = (q @ k.transpose(-1, -2)) * hd ** -0.5 + bias
            p = torch.softmax(s.float(), -1).to(q.dtype)
            h = h + m.o((p @ v).transpose(1, 2).reshape(B, T, nh * hd))
            a = self.rms(h, m.ln2)
            h = h + m.down(F.silu(m.gate(a)) * m.up(a))
        return self.head(self.rms(h, self.norm))

    def hf_params(self):
        """Hugging Face tensor name -> parameter."""
        out = {"model.embed_tokens.weight": self.embed.weight, "model.norm.weight": self.norm,
               "lm_head.weight": self.head.weight}
        for i, m in enumerate(self.layers):
            p = f"model.layers.{i}."
            out.update({p + "input_layernorm.weight": m.ln1,
                        p + "self_attn.q_proj.weight": m.q.weight,
                        p + "self_attn.k_proj.weight": m.k.weight,
                        p + "self_attn.v_proj.weight": m.v.weight,
                        p + "self_attn.o_proj.weight": m.o.weight,
                        p + "self_attn.q_norm.weight": m.qn,
                        p + "self_attn.k_norm.weight": m.kn,
                        p + "post_attention_layernorm.weight": m.ln2,
                        p + "mlp.gate_proj.weight": m.gate.weight,
                        p + "mlp.up_proj.weight": m.up.weight,
                        p + "mlp.down_proj.weight": m.down.weight})
        return out

    def hf_tensors(self):
        return {k: v.detach().float().contiguous() for k, v in self.hf_params().items()}


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        b = tensors[name].numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)


def batch(markov, T, n, rng, needles=None, queries=1, hops_frac=0.0, source_first=False,
          min_dist=40, keyval=0.0):
    """n samples; each is two-hop with probability hops_frac (drawn only when
    hops_frac > 0, so that the stream of a run without two-hop samples is
    unchanged)."""
    out = []
    for _ in range(n):
        hops = 2 if hops_frac > 0 and rng.random() < hops_frac else 1
        out.append(make_sample(markov, T, rng, needles, queries, hops=hops,
                               source_first=source_first, min_dist=min_dist, keyval=keyval))
    xs, ans, hop1 = zip(*out)
    return torch.stack(xs), ans, hop1


def accuracy(model, markov, T, n, seed, needles, swa=None, window=32, hops=1,
             source_first=False):
    """Share of n samples (single query at the end) whose answer is the argmax."""
    xs, _, _ = batch(markov, T, n, np.random.default_rng(seed), needles,
                  hops_frac=1.0 if hops == 2 else 0.0, source_first=source_first)
    with torch.no_grad():
        logits = model(xs[:, :-1], swa, window)
    return float((logits[:, -1].argmax(-1) == xs[:, -1]).float().mean())


def hop1_accuracy(model, markov, T, n, seed, source_first=False):
    """Share of n two-hop samples where the argmax at needle 1's stored k0 is
    v: the first hop, read out directly (what --hop1-aux trains)."""
    xs, _, hop1 = batch(markov, T, n, np.random.default_rng(seed), 3, hops_frac=1.0,
                        source_first=source_first)
    with torch.no_grad():
        logits = model(xs[:, :-1])
    hits = [int(logits[i, p].argmax()) == v for i, h in enumerate(hop1) for p, v in h]
    return sum(hits) / len(hits)


def write_task(path, markov, T, n, seed, needles, hops=1, source_first=False, hops_frac=None):
    """n prompts; hops_frac mixes two-hop prompts in (drawn per prompt)."""
    g = np.random.default_rng(seed)
    with open(path, "w") as f:
        for _ in range(n):
            h = hops if hops_frac is None else (2 if g.random() < hops_frac else 1)
            x = make_sample(markov, T, g, needles, hops=h, source_first=source_first)[0].tolist()
            f.write(json.dumps({"prompt": x[:-1], "answer": x[-1:]}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=2500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=128)
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--answer-weight", type=float, default=5.0)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--save-every", type=int, default=250)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--short-steps", type=int, default=0,
                    help="curriculum: the first N steps train on --short-context tokens")
    ap.add_argument("--short-context", type=int, default=96)
    ap.add_argument("--swa-drop", type=float, default=0.0,
                    help="probability that a unit runs SWA in a training sample")
    ap.add_argument("--swa-drop-from", type=int, default=0, help="first step with SWA dropout")
    ap.add_argument("--layer-drop", type=float, default=0.0,
                    help="probability that a whole layer runs SWA in a training sample (from "
                         "--swa-drop-from on), so that retrieval also grows in other layers")
    ap.add_argument("--unit-drop", default="",
                    help="U:P[,U:P...]: unit U (layer * KV groups + group) runs SWA with "
                         "probability P in a training sample (from --swa-drop-from on), on top "
                         "of --swa-drop: a backup path forced for one unit")
    ap.add_argument("--init", help="start from the weights in this checkpoint directory")
    ap.add_argument("--stop-after", type=int, default=0,
                    help="stop after this step (the schedule still spans --steps)")
    ap.add_argument("--repeat-frac", type=float, default=0.0,
                    help="share of each batch made of repeated random tokens")
    ap.add_argument("--hops-frac", type=float, default=0.0,
                    help="share of training samples that are two-hop (variable tracking)")
    ap.add_argument("--hops-from", type=int, default=0, help="first step with two-hop samples")
    ap.add_argument("--hops-source-first", action="store_true",
                    help="two-hop chains list the source needle first (training and tasks)")
    ap.add_argument("--hop1-aux", type=float, default=0.0,
                    help="loss weight of the intermediate target v at needle 1's k0 in two-hop "
                         "training samples (0: off)")
    ap.add_argument("--calib-hops-frac", type=float, default=0.0,
                    help="share of two-hop prompts in the calibration task")
    ap.add_argument("--min-dist", type=int, default=40,
                    help="training samples: fewest tokens between a needle and the query block "
                         "(held-out and calibration prompts keep 40)")
    ap.add_argument("--keyval-frac", type=float, default=0.0,
                    help="training needles outside two-hop chains that store an undefined key "
                         "token (answered literally), with this probability each")
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--lag", type=int, default=1, choices=(1, 2),
                    help="filler: token i follows token i-lag in the Markov chain")
    ap.add_argument("--calib", type=int, default=32, help="calibration prompts")
    ap.add_argument("--metric", default="logprob", help="search metric suggested in bosch.json")
    ap.add_argument("--budget", type=int, default=200, help="search budget suggested in bosch.json")
    ap.add_argument("--files-only", action="store_true",
                    help="only (re)write the tasks and bosch.json of an existing OUT_DIR")
    args = ap.parse_args()
    try:
        unit_drop = [(int(a), float(b)) for a, b in
                     (item.split(":") for item in args.unit_drop.split(",") if item)]
    except ValueError:
        sys.exit(f"train_organism: --unit-drop wants U:P[,U:P...], got {args.unit_drop!r}")
    for u, pu in unit_drop:
        if not 0 <= u < args.layers * args.kv_heads or not 0.0 <= pu <= 1.0:
            sys.exit(f"train_organism: --unit-drop {u}:{pu}: the unit must be below "
                     f"{args.layers * args.kv_heads} and the probability within 0..1")
    if args.files_only:
        markov = Markov(args.vocab, 12345)
        markov.lag = args.lag
        write_files(args, markov)
        return
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    config = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
              "vocab_size": args.vocab, "hidden_size": 128, "intermediate_size": 384,
              "num_hidden_layers": args.layers, "num_attention_heads": args.heads,
              "num_key_value_heads": args.kv_heads, "head_dim": 32, "rms_norm_eps": 1e-6,
              "rope_theta": 10000.0, "rope_scaling": None, "tie_word_embeddings": False,
              "hidden_act": "silu", "attention_bias": False,
              "max_position_embeddings": args.context, "torch_dtype": "float32"}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    markov = Markov(args.vocab, 12345)
    markov.lag = args.lag
    model = Qwen3(config)
    if args.init:
        # Continue from a checkpoint (weights only; a fresh optimizer and
        # learning-rate schedule): the annealing phase of the recipe.
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import organism_forward
        model.load_state_dict(organism_forward.load(args.init).state_dict())
        model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    g = np.random.default_rng(args.seed)
    log, t0 = [], time.time()
    L, kv = args.layers, args.kv_heads
    last = min(args.steps, args.stop_after) if args.stop_after else args.steps
    for step in range(1, last + 1):
        lr = args.lr * min(1.0, step / args.warmup) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for pg in opt.param_groups:
            pg["lr"] = lr
        T = args.context if step > args.short_steps else args.short_context
        hf = args.hops_frac if step > args.hops_from else 0.0
        xs, ans, hop1 = batch(markov, T, args.batch, g, queries=0, hops_frac=hf,
                              source_first=args.hops_source_first, min_dist=args.min_dist,
                              keyval=args.keyval_frac)
        # Some samples are random content tokens repeated (the classic
        # induction-head task): dense signal for the copy circuit that
        # retrieval reuses.
        ans = list(ans)
        for i in range(int(round(args.repeat_frac * args.batch))):
            half = (T + 1) // 2
            r = torch.from_numpy(g.integers(FIRST + NKEYS, args.vocab, half))
            xs[i] = torch.cat([r, r])[:T]
            ans[i] = []
        hop1 = [[] if not a else h for a, h in zip(ans, hop1)]
        swa = None
        if (args.swa_drop > 0 or args.layer_drop > 0 or unit_drop) and step > args.swa_drop_from:
            drop = g.random((args.batch, L, kv)) < args.swa_drop
            if args.layer_drop > 0:
                drop |= (g.random((args.batch, L, 1)) < args.layer_drop)
            for u, pu in unit_drop:
                drop[:, u // kv, u % kv] |= g.random(args.batch) < pu
            swa = torch.from_numpy(drop)
        logits = model(xs[:, :-1], swa, args.window)
        # --hop1-aux: at needle 1's stored k0 of a two-hop sample the target
        # is v (not the filler that follows), weighted hop1_aux: the first
        # hop, made visible.
        tgt = xs[:, 1:].clone()
        w = torch.ones(tgt.shape)
        for i, a in enumerate(ans):
            w[i, [p - 1 for p in a]] = args.answer_weight
        is_ans = w > 1
        for i, h in enumerate(hop1 if args.hop1_aux > 0 else []):
            for p, v in h:
                tgt[i, p] = v
                w[i, p] = args.hop1_aux
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), tgt.reshape(-1),
                               reduction="none").view(args.batch, -1)
        ans_loss = float((loss * is_ans).sum() / is_ans.sum())
        loss = (loss * w).sum() / w.sum()
        ema = ans_loss if step == 1 else 0.98 * ema + 0.02 * ans_loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % args.save_every == 0 or step == last:
            model.eval()
            m = {"step": step, "loss": float(loss), "answer_loss_ema": ema, "lr": lr, "seconds": time.time() - t0,
                 "niah1_full": accuracy(model, markov, args.context, 128, 777, 1),
                 "niah1_allswa": accuracy(model, markov, args.context, 128, 777, 1, True, args.window),
                 "niah4_full": accuracy(model, markov, args.context, 128, 778, 4)}
            if args.hops_frac > 0:
                sf = args.hops_source_first
                m["hop2_full"] = accuracy(model, markov, args.context, 128, 779, 3, hops=2,
                                          source_first=sf)
                m["hop2_allswa"] = accuracy(model, markov, args.context, 128, 779, 3, True,
                                            args.window, hops=2, source_first=sf)
                if args.hop1_aux > 0:
                    m["hop1_full"] = hop1_accuracy(model, markov, args.context, 128, 779, sf)
            model.train()
            log.append(m)
            print(json.dumps(m), flush=True)
            write_safetensors(os.path.join(args.out, "model.safetensors"), model.hf_tensors())
            with open(os.path.join(args.out, "recipe.json"), "w") as f:
                json.dump({"args": vars(args), "markov_seed": 12345, "log": log}, f, indent=1)
    write_files(args, markov)


def write_files(args, markov):
    """The tasks and bosch.json that make the directory the bosch command's
    default model: calibration (search) and held-out (eval) NIAH prompts from
    seeds other than the training stream's."""
    # Calibration mixes 1-4 needles (one queried): the search then keeps what
    # matching the right key needs, not only the copy of a lone needle.
    sf = getattr(args, "hops_source_first", False)
    chf = getattr(args, "calib_hops_frac", 0.0)
    write_task(os.path.join(args.out, "calib.jsonl"), markov, args.context, args.calib, 1001, None,
               source_first=sf, hops_frac=chf if chf > 0 else None)
    write_task(os.path.join(args.out, "heldout.jsonl"), markov, args.context, 128, 2002, 1)
    write_task(os.path.join(args.out, "heldout4.jsonl"), markov, args.context, 128, 2003, 4)
    files = {"calib": "calib.jsonl", "heldout": "heldout.jsonl",
             "heldout_multi": "heldout4.jsonl"}
    if getattr(args, "hops_frac", 0) > 0:
        write_task(os.path.join(args.out, "heldout2hop.jsonl"), markov, args.context, 128, 2004,
                   3, hops=2, source_first=sf)
        files["heldout_two_hop"] = "heldout2hop.jsonl"
    with open(os.path.join(args.out, "bosch.json"), "w") as f:
        json.dump(dict(files, window=args.window, sink=4, metric=args.metric,
                       budget=args.budget), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
