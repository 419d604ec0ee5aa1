#!/usr/bin/python3
"""What a trained organism answers on two-hop prompts (issue 14): of N
prompts "KEY k0 v ... KEY k1 k0 ... KEY k2 v2 ... QRY k1 ?" (source needle
first, as tools/train_organism.py --hops-source-first writes them), how often
the argmax is the resolved value v, the intermediate key k0, the value of a
distractor needle, or anything else. Guessing among the needles' content
values splits v / distractor about evenly.

  /usr/bin/python3 bench/two_hop_answers.py MODEL_DIR [--samples N] [--seed S] [--lag 2]
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import organism_forward  # noqa: E402
import train_organism as T  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--samples", type=int, default=128)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--lag", type=int, default=2, choices=(1, 2))
    ap.add_argument("--context", type=int, default=256)
    a = ap.parse_args()
    torch.set_num_threads(1)
    model, markov = organism_forward.load_with_stream(a.model, a.lag)
    xs, _, hop1 = T.batch(markov, a.context, a.samples, np.random.default_rng(a.seed), 3,
                          hops_frac=1.0, source_first=True)
    with torch.no_grad():
        pred = model(xs[:, :-1])[:, -1].argmax(-1)
    counts = {"v (right)": 0, "k0 (intermediate key)": 0, "distractor value": 0, "other": 0}
    for i in range(len(xs)):
        x = xs[i].tolist()
        k0 = x[hop1[i][0][0]]
        stored = [x[j + 2] for j in T.needle_slots(x)]
        p = int(pred[i])
        key = ("v (right)" if p == x[-1] else "k0 (intermediate key)" if p == k0
               else "distractor value" if p in stored else "other")
        counts[key] += 1
    print(f"{a.model}: {a.samples} two-hop prompts (seed {a.seed}): " +
          ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
