#!/usr/bin/env python3
"""What stopping exact-metric candidates early could save (issue 34, item
3): the ceiling of the lever, measured on a real search.

The library's default search runs on a checkpoint directory (the organism
by default) with the exact metric on --task (calib or heldout), each
candidate scored prompt by prompt (Evaluator.sample_values: 1 when greedy
decoding reproduces the answer, else 0). For every candidate scored while
an incumbent exists (the best feasible mask so far, as the progress
callback reports it), the script counts the prompts an evaluator would
have run before the candidate's best possible score, (passes so far +
prompts left) / prompts, fell below the incumbent's score: the stop that
"its remaining prompts cannot lift it to the incumbent" allows, in the
evaluator's sample order, per prompt and per forward of --per-forward
prompts (8 = 64 prompts of 32k on CUDA). The search itself reads every
full score, so this is what such a stop would save, not what a search
that uses it would do (docs/benchmarks.md, "Levers not taken").

    early_stop_ceiling.py [--model DIR] [--task calib|heldout] [--ratio R]
                          [--budget N] [--seed S] [--per-forward P]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))

import bosch  # noqa: E402
from bosch import backend  # noqa: E402


def prompts_needed(values, incumbent, per):
    """Prompts run, in forwards of `per`, before the best reachable score
    falls below `incumbent` (all of them when it never does)."""
    m, passed = len(values), 0.0
    for end in range(per, m + per, per):
        end = min(end, m)
        passed = sum(values[:end])
        if (passed + (m - end)) / m < incumbent:
            return end
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--task", default="heldout", choices=("calib", "heldout"))
    ap.add_argument("--ratio", type=float, default=0.875)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-forward", type=int, default=8)
    a = ap.parse_args()
    model_dir = a.model or backend.organism_dir()

    with backend.Checkpoint.open(model_dir, device="cpu") as ck:
        d = ck.suggested
        window, sink = d.get("window", 32), d.get("sink", 4)
        path = os.path.join(model_dir, d.get(a.task, a.task + ".jsonl"))
        with backend.Task.read_jsonl(path) as task, \
                backend.Evaluator(ck.model, task, window=window, sink=sink,
                                  metric="exact") as ev:
            raw, per_mask, asked = {}, {}, []
            state = {"best": None}

            def progress(p):
                state["best"] = p.best_mask

            def evaluate(masks):
                out = []
                for m in masks:
                    m = bytes(m)
                    v = ev.sample_values(m)
                    raw[m] = sum(v) / len(v)
                    per_mask[m] = v
                    best = state["best"]
                    asked.append((m, raw.get(bytes(best)) if best is not None else None))
                    out.append(raw[m])
                return out

            opt = bosch.Optimizer(ck.model.problem(ratio=a.ratio), seed=a.seed, budget=a.budget)
            opt.optimize(batch_evaluator=evaluate, progress=progress)
            M = task.samples

    bounded = [(m, inc) for m, inc in asked if inc is not None]
    total = len(asked) * M
    rows = []
    for per in sorted({1, a.per_forward}):
        run = sum(prompts_needed(per_mask[m], inc, per) for m, inc in bounded)
        run += (len(asked) - len(bounded)) * M
        stopped = sum(prompts_needed(per_mask[m], inc, per) < M for m, inc in bounded)
        rows.append((per, stopped, run))
    print(f"# Early stop of exact-metric candidates: the ceiling (early_stop_ceiling.py)\n\n"
          f"{model_dir}, task {a.task} ({M} prompts, exact metric), window {window}, sink "
          f"{sink}; default search, ratio {a.ratio}, budget {a.budget}, seed {a.seed}: "
          f"{len(asked)} masks scored, {len(bounded)} while an incumbent existed; "
          f"the incumbent's final score {raw[bytes(state['best'])]:.4f}.\n")
    print("| prompts per forward | candidates a stop would cut | prompt-evaluations run | "
          "of all | saved |\n|---|---|---|---|---|")
    for per, stopped, run in rows:
        print(f"| {per} | {stopped} of {len(bounded)} | {run} of {total} | "
              f"{run / total:.3f} | {1 - run / total:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
