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
are written as JSON Lines for bosch_torch_task_load_jsonl, from seeds other
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
import time

import numpy as np
import torch
import torch.nn.functional as F

KEY, VAL, QRY, FIRST = 0, 1, 2, 3


class Markov:
    def __init__(self, vocab, seed):
        self.vocab = vocab
        self.succ = np.random.default_rng(seed).integers(FIRST, vocab, (vocab, 3))

    def fill(self, n, rng):
        u, pick = rng.random(n), rng.integers(0, 3, n)
        jump = rng.integers(FIRST, self.vocab, n)
        out = np.empty(n, dtype=np.int64)
        t = int(jump[0])
        for i in range(n):
            out[i] = t
            t = int(self.succ[t, pick[i]]) if u[i] < 0.9 else int(jump[i])
        return out


def make_sample(markov, T, rng, needles=None, span=True):
    """Tokens [T]; the last one is the answer."""
    vocab = markov.vocab
    x = markov.fill(T, rng)
    n = needles or int(rng.integers(1, 5))
    keys = rng.permutation(vocab - FIRST)[:n] + FIRST
    vals = rng.integers(FIRST, vocab, n)
    body = T - 4  # the query "QRY k VAL v" takes the last 4 positions
    if span:
        L = int(rng.integers(8, 17))
        a = int(rng.integers(0, body // 2 - L))
        b = int(rng.integers(body // 2, body - L))
        s = rng.integers(FIRST, vocab, L)
        x[a:a + L] = s
        x[b:b + L] = s
    # Needles at distinct slots of 4 tokens in the first 90% of the body.
    slots = rng.permutation((body * 9 // 10) // 4)[:n] * 4
    for i in range(n):
        p = int(slots[i])
        x[p:p + 4] = [KEY, keys[i], VAL, vals[i]]
    q = int(rng.integers(0, n))
    x[T - 4:] = [QRY, keys[q], VAL, vals[q]]
    return torch.from_numpy(x)


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

    def forward(self, tok, window=None):
        """window: None = full attention, else every unit SWA with that window."""
        c = self.c
        B, T = tok.shape
        nh, kv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        r = nh // kv
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.arange(T).float()[:, None] * inv[None]
        cos = torch.cat([ang, ang], -1).cos()
        sin = torch.cat([ang, ang], -1).sin()
        t = torch.arange(T)
        allowed = t[None, :] <= t[:, None]
        if window is not None:
            allowed = allowed & (t[None, :] > t[:, None] - window)
        bias = torch.zeros(T, T).masked_fill(~allowed, float("-inf"))
        h = self.embed(tok)

        def rot(x):
            x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
            return torch.cat([-x2, x1], -1)

        for m in self.layers:
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

    def hf_tensors(self):
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
        return {k: v.detach().float().contiguous() for k, v in out.items()}


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


def accuracy(model, markov, T, n, seed, needles, window=None):
    g = np.random.default_rng(seed)
    xs = torch.stack([make_sample(markov, T, g, needles) for _ in range(n)])
    with torch.no_grad():
        logits = model(xs[:, :-1], window)
    return float((logits[:, -1].argmax(-1) == xs[:, -1]).float().mean())


def write_task(path, markov, T, n, seed, needles):
    g = np.random.default_rng(seed)
    with open(path, "w") as f:
        for _ in range(n):
            x = make_sample(markov, T, g, needles).tolist()
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
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    config = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
              "vocab_size": args.vocab, "hidden_size": 128, "intermediate_size": 384,
              "num_hidden_layers": args.layers, "num_attention_heads": 8,
              "num_key_value_heads": 4, "head_dim": 32, "rms_norm_eps": 1e-6,
              "rope_theta": 10000.0, "rope_scaling": None, "tie_word_embeddings": False,
              "hidden_act": "silu", "attention_bias": False,
              "max_position_embeddings": args.context, "torch_dtype": "float32"}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    markov = Markov(args.vocab, 12345)
    model = Qwen3(config)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    g = np.random.default_rng(args.seed)
    log, t0 = [], time.time()
    for step in range(1, args.steps + 1):
        lr = args.lr * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for pg in opt.param_groups:
            pg["lr"] = lr
        xs = torch.stack([make_sample(markov, args.context, g) for _ in range(args.batch)])
        logits = model(xs[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), xs[:, 1:].reshape(-1),
                               reduction="none").view(args.batch, -1)
        w = torch.ones_like(loss)
        w[:, -1] = args.answer_weight
        loss = (loss * w).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % args.save_every == 0 or step == args.steps:
            model.eval()
            m = {"step": step, "loss": float(loss), "lr": lr, "seconds": time.time() - t0,
                 "niah1_full": accuracy(model, markov, args.context, 128, 777, 1),
                 "niah1_allswa": accuracy(model, markov, args.context, 128, 777, 1, args.window),
                 "niah4_full": accuracy(model, markov, args.context, 128, 778, 4)}
            model.train()
            log.append(m)
            print(json.dumps(m), flush=True)
            write_safetensors(os.path.join(args.out, "model.safetensors"), model.hf_tensors())
            with open(os.path.join(args.out, "recipe.json"), "w") as f:
                json.dump({"args": vars(args), "markov_seed": 12345, "log": log}, f, indent=1)
    write_task(os.path.join(args.out, "calib.jsonl"), markov, args.context, 64, 1001, 1)
    write_task(os.path.join(args.out, "heldout.jsonl"), markov, args.context, 128, 2002, 1)


if __name__ == "__main__":
    main()
