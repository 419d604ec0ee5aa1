#!/usr/bin/env python3
"""Head selection on a Qwen3 checkpoint from Python, end to end: the model
and its calibration task through libbosch-torch, the BOSCH search of
libbosch with the backend's evaluator (called by the library, no Python in
the loop), a static baseline for comparison, and the result file that the
`bosch` command reads (`bosch show PREFIX.json`).

    python3 search_organism.py [--model DIR] [--ratio 0.5] [--budget 200] [--out PREFIX]

The model directory is opened in one call (backend.Checkpoint.open: the
model, bosch.json's settings and calib task, as the bosch command opens
it); the model defaults to the shipped organism (models/organism).
"""

import argparse
import os
import sys
import time

import bosch
from bosch import backend


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="checkpoint directory (default: the organism)")
    ap.add_argument("--task", default=None, help="a JSONL task file, niah or ruler:NAME (default: bosch.json's calib)")
    ap.add_argument("--samples", type=int, default=0, help="use the first N samples (0: all)")
    ap.add_argument("--ratio", type=float, default=0.5, help="target SWA ratio")
    ap.add_argument("--budget", type=int, default=200, help="evaluations")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=None, help="libtorch threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="bosch-mask", help="result file prefix")
    args = ap.parse_args(argv)
    if args.budget < 1 or not 0.0 <= args.ratio <= 1.0:
        ap.error("--budget must be >= 1 and --ratio in [0, 1]")

    opened = dict(device=args.device, threads=args.threads)
    if args.samples:
        opened["samples"] = args.samples  # a generated task's size
    ck = backend.Checkpoint.open(args.model, task=args.task, **opened)
    if args.samples and os.path.isfile(ck.task_source) and len(ck.task) > args.samples:
        # the first N samples of a task file: a file of them, opened the same way
        import tempfile
        with open(ck.task_source) as f:
            head = f.readlines()[:args.samples]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as tmp:
            tmp.writelines(head)
        ck.close()
        ck = backend.Checkpoint.open(args.model, task=tmp.name, **opened)
    with ck:
        sug = ck.suggested  # bosch.json's window, sink, metric (checked by the library)
        run(args, ck, sug.get("window", 1024), sug.get("sink", 4), sug.get("metric", "exact"))
    return 0


def run(args, ck, window, sink, metric) -> None:
    model, task, task_path = ck.model, ck.task, ck.task_source
    with backend.Evaluator(model, task, window=window, sink=sink, metric=metric) as ev:
        print(f"model {ck.path}: {model.layers} layers x {model.kv_groups} KV groups x "
              f"{model.heads_per_group} heads, {ck.description}; "
              f"{len(task)} samples of up to {task.prompt_len} tokens ({task_path}); "
              f"window {window}, sink {sink}, metric {metric}")
        problem = model.problem(ratio=args.ratio)
        t0 = time.time()
        opt = bosch.Optimizer(problem, seed=args.seed, budget=args.budget, batch_size=8)
        result = opt.optimize(evaluator=ev)
        print(f"search: {result.status_name}, {result.total_evaluations} evaluations in "
              f"{time.time() - t0:.1f} s; S_full {result.anchors[0]:.4f}, S_allSWA "
              f"{result.anchors[1]:.4f}, score {result.score:.4f} "
              f"(normalized {result.normalized_score:.3f})")

        locality = model.scores(task, "locality", window=window, sink=sink)
        static = bosch.baseline_static(problem, locality.units)
        s_static = ev.score(static)
        s_full, s_swa = result.anchors
        print(f"locality baseline: score {s_static:.4f} "
              f"(normalized {(s_static - s_swa) / (s_full - s_swa):.3f})")

        sel = bosch.Selection.from_result(result, problem)
        sel.method = "bosch"
        sel.metric = metric
        sel.model_path = os.path.abspath(ck.path)
        sel.set_kv_saving(task.prompt_len, window, sink)
        # the settings block as the bosch command writes it (cli/output.c)
        for key, value in (("task", task_path), ("window", window), ("sink", sink),
                           ("metric", metric), ("ratio", args.ratio), ("budget", args.budget),
                           ("seed", args.seed), ("eval_batch", 1), ("batch_size", 8),
                           ("device", args.device), ("dtype", model.dtype)):
            sel.set_setting(key, value)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        sel.write(args.out)
        print(f"wrote {args.out}.json, {args.out}.tsv, {args.out}.svg")


if __name__ == "__main__":
    sys.exit(main())
