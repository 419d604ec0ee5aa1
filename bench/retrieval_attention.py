#!/usr/bin/python3
"""Where a trained organism's last position attends (issue 14): on N prompts
of tools/train_organism.py, the mean attention of each head, at the position
that predicts the answer, on the needle positions that matter, and the
accuracy of the argmax. Heads with less than --min of their attention on
every listed position are left out.

  two-hop:  "KEY k0 v ... KEY k1 k0 ... KEY k2 v2 ... QRY k1 ?" (source needle
            first): needle 1's stored k0 (the link), needle 0's v, the
            distractor's value, needle 1's key k1;
  keyval:   3 needles that store key tokens no needle defines
            (train_organism --keyval-frac), one queried: its value slot.

  /usr/bin/python3 bench/retrieval_attention.py MODEL_DIR [--task two-hop|keyval]
      [--samples N] [--seed S] [--context T] [--min 0.15]
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import organism_forward  # noqa: E402
import train_organism as T  # noqa: E402


def last_row_attention(model, xs):
    """Logits and, per layer, the attention of the last position [B, heads, T]
    (the forward's softmax, intercepted)."""
    rows, orig = [], torch.softmax

    def softmax(s, dim):
        p = orig(s, dim)
        rows.append(p[:, :, -1].detach())
        return p

    torch.softmax = softmax
    try:
        with torch.no_grad():
            logits = model(xs[:, :-1])
    finally:
        torch.softmax = orig
    return logits, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--task", default="two-hop", choices=("two-hop", "keyval"))
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--lag", type=int, default=2, choices=(1, 2))
    ap.add_argument("--min", type=float, default=0.15)
    a = ap.parse_args()
    torch.set_num_threads(1)
    model, markov = organism_forward.load_with_stream(a.model, a.lag)
    c = model.c
    g = np.random.default_rng(a.seed)
    min_dist = 40 if a.context > 100 else 8
    if a.task == "two-hop":
        xs, _, hop1 = T.batch(markov, a.context, a.samples, g, 3, hops_frac=1.0,
                              source_first=True, min_dist=min_dist)
    else:
        xs, _, _ = T.batch(markov, a.context, a.samples, g, 3, keyval=1.0, min_dist=min_dist)
    logits, rows = last_row_attention(model, xs)
    acc = float((logits[:, -1].argmax(-1) == xs[:, -1]).float().mean())
    names, where = [], []
    for i in range(len(xs)):
        x = xs[i, :-1].tolist()
        slots = T.needle_slots(x)
        if a.task == "two-hop":
            link = hop1[i][0][0]  # needle 1's stored k0
            s0 = [j for j in slots if x[j + 1] == x[link]][0]
            others = [j + 2 for j in slots if j not in (s0, link - 2)]
            names = ["needle 1's stored k0 (link)", "needle 0's v", "distractor value",
                     "needle 1's key k1"]
            where.append([[link], [s0 + 2], others, [link - 1]])
        else:
            s = [j for j in slots if x[j + 1] == x[-1]][0]
            names = ["queried needle's value slot"]
            where.append([[s + 2]])
    print(f"{a.model}: {a.samples} {a.task} prompts of {a.context} tokens (seed {a.seed}): "
          f"accuracy {acc:.3f}")
    print("| layer | head | unit | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    r = c["num_attention_heads"] // c["num_key_value_heads"]
    for layer, p in enumerate(rows):
        for h in range(p.shape[1]):
            mass = [float(np.mean([p[i, h, w[k]].sum() for i, w in enumerate(where)]))
                    for k in range(len(names))]
            if max(mass) >= a.min:
                unit = layer * c["num_key_value_heads"] + h // r
                print(f"| {layer} | {h} | {unit} | " + " | ".join(f"{m:.2f}" for m in mass) + " |")


if __name__ == "__main__":
    main()
