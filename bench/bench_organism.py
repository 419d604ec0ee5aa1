#!/usr/bin/python3
"""Evaluation speed over a whole search on the organism (issue 13): the same
masks in the same order, scored side by side in one process by

  default      libbosch-torch's evaluator as `bosch search` opens it
               (one candidate per forward, prefix cache on, the last
               layer at the scored positions only);
  one          libbosch-torch, one candidate per forward, no prefix cache;
  whole last   the default with the last layer over every position
               (BOSCH_TORCH_LAST_LAYER=all: that lever off);
  pytorch      a straightforward PyTorch forward written in Python: the
               organism's own training module (tools/train_organism.Qwen3),
               one candidate per pass with all prompts in one batch, masks
               as additive biases over the full T x T scores.

    bench_organism.py [--model DIR] [--ratio R] [--budget N] [--seed S]
                      [--threads T] [--eval-batch K] [--reps R] [--raw-scores]

The masks come from a real search (the library's default strategy on the
model's calibration task, --budget evaluations, batches of 8 as `bosch
search` asks). Every method scores every mask; the scores must agree
(max |difference| is printed, and the run fails above 1e-4). Times are the
best of --reps passes over the whole list. Needs /usr/bin/python3 with
torch (Debian's python3-torch) and the built libraries (BOSCH_LIBRARY,
BOSCH_TORCH_LIBRARY, as for the Python tests).
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))

import bosch  # noqa: E402
from bosch import backend  # noqa: E402
import organism_forward  # noqa: E402


def pytorch_scorer(model_dir, task_path, window, sink):
    """The plain forward: log-prob of the answer tokens, teacher forcing."""
    import json
    model = organism_forward.load(model_dir)
    rows = [json.loads(line) for line in open(task_path)]
    T = max(len(r["prompt"]) + len(r["answer"]) - 1 for r in rows)
    tok = torch.zeros(len(rows), T, dtype=torch.int64)
    pos, tgt, owner = [], [], []
    for b, r in enumerate(rows):
        seq = r["prompt"] + r["answer"][:-1]
        tok[b, :len(seq)] = torch.tensor(seq)
        for j, a in enumerate(r["answer"]):
            pos.append((b, len(r["prompt"]) - 1 + j))
            tgt.append(a)
            owner.append(b)
    bi = torch.tensor([p[0] for p in pos])
    ti = torch.tensor([p[1] for p in pos])
    tgt = torch.tensor(tgt)
    owner = torch.tensor(owner)
    counts = torch.bincount(owner, minlength=len(rows)).double()
    L, G = model.c["num_hidden_layers"], model.c["num_key_value_heads"]

    def score(mask: bytes) -> float:
        swa = torch.tensor(list(mask), dtype=torch.bool).view(L, G)
        with torch.no_grad():
            logits = model(tok, swa, window, sink)
            lp = F.log_softmax(logits[bi, ti].float(), -1).gather(1, tgt[:, None])[:, 0]
        per = torch.zeros(len(rows), dtype=torch.float64).index_add_(0, owner, lp.double())
        return float((per / counts).mean())

    return score


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--ratio", type=float, default=0.5)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--eval-batch", type=int, default=0,
                    help="the default's candidates per forward (0: the library's default)")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--raw-scores", action="store_true",
                    help="search raw scores (a random-weight model, whose full attention "
                         "is no better than SWA)")
    a = ap.parse_args()
    model_dir = a.model or backend.organism_dir()
    if a.threads:
        backend.set_threads(a.threads)

    # The directory as the bosch command opens it: bosch.json's settings and calib task.
    with backend.Checkpoint.open(model_dir, device="cpu") as ck:
        model, task, task_path = ck.model, ck.task, ck.task_source
        d = ck.suggested
        window, sink, metric = d.get("window", 32), d.get("sink", 4), d.get("metric", "logprob")
        # The masks of a real search, in the batches it asked for.
        batches = []
        with backend.Evaluator(model, task, window=window, sink=sink, metric=metric) as ev:
            def record(masks):
                batches.append(list(masks))
                return ev.score_batch(masks)
            opt = bosch.Optimizer(model.problem(ratio=a.ratio), seed=a.seed, budget=a.budget,
                                  batch_size=8)
            if a.raw_scores:
                opt.set_raw_scores(True)
            opt.optimize(batch_evaluator=record)
        masks = [m for b in batches for m in b]

        def timed(score_all):
            """Best wall time of --reps calls, the scores, and the CPU
            (user, sys) seconds of the last call."""
            best, out, cpu = 1e300, None, None
            for _ in range(a.reps):
                t0, c0 = time.perf_counter(), os.times()
                out = score_all()
                best = min(best, time.perf_counter() - t0)
                cpu = [x - y for x, y in zip(os.times(), c0)]
            return best, out, cpu

        def run_backend(batch, cache):
            kw = {} if batch == 0 else {"batch": batch}
            with backend.Evaluator(model, task, window=window, sink=sink, metric=metric,
                                   prefix_cache=cache, **kw) as ev:
                return timed(lambda: [s for b in batches for s in ev.score_batch(b)])

        plain = pytorch_scorer(model_dir, task_path, window, sink)

        rows = [("default (eval batch %s, prefix cache)" % (a.eval_batch or 1),
                 run_backend(a.eval_batch, True)),
                ("one candidate per forward, no cache", run_backend(1, False)),
                ("plain PyTorch (Python, one candidate per pass)",
                 timed(lambda: [plain(m) for m in masks]))]
        os.environ["BOSCH_TORCH_LAST_LAYER"] = "all"  # read when the evaluator opens
        try:
            rows.append(("default, the last layer over every position",
                         run_backend(a.eval_batch, True)))
        finally:
            del os.environ["BOSCH_TORCH_LAST_LAYER"]
    plain_time, ref = rows[2][1][0], rows[2][1][1]
    n = len(masks)
    print(f"# Organism evaluation speed (bench_organism.py)\n\n{model_dir}: {n} masks of one "
          f"search (ratio {a.ratio}, budget {a.budget}, seed {a.seed}), {len(batches)} batches; "
          f"{torch.get_num_threads()} intra-op threads; best of {a.reps}; environment: "
          + ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in
                      ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT",
                       "BOSCH_TORCH_BLOCK_MB")) + ".\n")
    print("| evaluator | s per evaluation | vs plain PyTorch | user + sys CPU s per evaluation "
          "| max score diff |\n|---|---|---|---|---|")
    worst = 0.0
    for name, (t, out, cpu) in rows:
        diff = max(abs(x - y) for x, y in zip(out, ref))
        worst = max(worst, diff)
        print(f"| {name} | {t / n:.4f} | {plain_time / t:.2f}x | {cpu[0] / n:.3f} + "
              f"{cpu[1] / n:.3f} | {diff:.1e} |")
    if worst > 1e-4:
        print(f"bench_organism: scores disagree by {worst:.2e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
