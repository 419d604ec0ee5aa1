#!/usr/bin/env python3
"""length_fidelity: does the ranking of masks at a short prompt length
predict their ranking at the full length? (issue 53, length as a fidelity)

A recorded search (`bosch search --out P` on a RULER task: P.history.jsonl
holds every mask it scored and its score at the full length) is taken as it
is; its distinct feasible masks of stage 3 (the candidates a screen would
rank) are scored again on the same RULER samples rendered at each shorter
length (same task, seed, samples and needle depths: bosch.text's generator
draws them before it fits the haystack), through libbosch-torch with the
search's window, sink and metric. Printed per length: Spearman's rank
correlation with the full-length scores, the share of the full-length top
decile that the short length also puts in its top decile, whether the
short length's best is the full length's best, and the measured seconds per
evaluation at each length (the full length timed on a few masks).

    PYTHONPATH=bindings/python BOSCH_LIBRARY_DIR=build/lib python3 \\
        bench/length_fidelity.py --model bench/results/smollm2-niah512/model \\
        --history bench/results/smollm2-niah512/bosch-2x-budget-r0.75.history.jsonl \\
        --task niah_single_2 --context 512 --samples 8 --seed 0 --depth-max 0.875 \\
        --window 32 --sink 4 --lengths 128,256

The full-length task is generated too and must reproduce the recorded
scores of the masks it times (else the record was made on another task and
the tool stops, naming the difference).
"""
import argparse
import json
import os
import sys
import time

from bosch import backend, text


def ranks(xs):
    """Ranks 1..n, ties given their mean rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va and vb else float("nan")


def make_task(tok, args, context):
    with text.TextTask.ruler(tok, args.task, context, args.samples, args.seed,
                             depth_min=0.0, depth_max=args.depth_max) as t:
        return backend.Task.from_text(t, tok)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--history", required=True)
    ap.add_argument("--task", default="niah_single_2")
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--depth-max", type=float, default=1.0)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--metric", default="logprob")
    ap.add_argument("--lengths", default="128,256")
    ap.add_argument("--masks", type=int, default=0, help="at most this many masks (0: all)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timed", type=int, default=4, help="masks timed at the full length")
    ap.add_argument("--dump", help="write the masks and their scores at every length (JSON)")
    args = ap.parse_args()

    with open(args.history) as f:
        hist = [json.loads(line) for line in f if line.strip()]
    target = max(h["swa_units"] for h in hist if h["stage"] == "group")
    seen, masks, full = set(), [], []
    for h in hist:
        if h["stage"] == "group" and h["swa_units"] == target and h["mask"] not in seen:
            seen.add(h["mask"])
            masks.append(h["mask"])
            full.append(h["score"])
    if args.masks:
        masks, full = masks[:args.masks], full[:args.masks]
    bits = [[int(c) for c in m] for m in masks]
    tok = text.Tokenizer(os.path.join(args.model, "tokenizer.json"))
    model = backend.Model(args.model, device="cpu", dtype="f32", threads=args.threads)
    print(f"{args.history}: {len(masks)} distinct feasible masks of stage 3 ({target} SWA "
          f"units); {args.task}, {args.samples} samples, seed {args.seed}, depths <= "
          f"{args.depth_max}; window {args.window}, sink {args.sink}, metric {args.metric}; "
          f"{args.threads} threads", flush=True)

    ft = make_task(tok, args, args.context)
    full_tokens = sum(len(ft.sample(i).prompt) for i in range(len(ft))) / len(ft)
    with ft, backend.Evaluator(model, ft, window=args.window, sink=args.sink,
                               metric=args.metric, prefix_cache=False) as ev:
        t0 = time.monotonic()
        again = ev.score_batch(bits[:args.timed])
        full_s = (time.monotonic() - t0) / max(1, len(again))
    for i, (a, b) in enumerate(zip(again, full)):
        if abs(a - b) > 1e-4 * max(1.0, abs(b)):
            sys.exit(f"length_fidelity: mask {i} scores {a:.6f} on the task generated here, "
                     f"{b:.6f} in the record: the record was made on another task or model")
    print(f"full length {args.context} ({full_tokens:.0f} tokens per prompt): the record's "
          f"scores reproduced on {len(again)} masks, {full_s:.2f} s per evaluation (prefix "
          f"cache off)", flush=True)

    n = len(masks)
    k = max(1, n // 10)
    top_full = set(sorted(range(n), key=lambda i: -full[i])[:k])
    near = sorted(range(n), key=lambda i: -full[i])[:max(2, n // 4)]  # the top quarter
    dump = {"masks": masks, "scores": {str(args.context): full}}
    print("\n| length | tokens per prompt (mean) | s per evaluation | of the full length's | "
          "Spearman | Spearman, top quarter | top decile shared | short best = full best |")
    print("|---|---|---|---|---|---|---|---|")
    for length in [int(x) for x in args.lengths.split(",")]:
        st = make_task(tok, args, length)
        tokens = sum(len(st.sample(i).prompt) for i in range(len(st))) / len(st)
        with st, backend.Evaluator(model, st, window=args.window, sink=args.sink,
                                   metric=args.metric, prefix_cache=False) as sev:
            t0 = time.monotonic()
            short = sev.score_batch(bits)
            s = (time.monotonic() - t0) / n
        top_short = set(sorted(range(n), key=lambda i: -short[i])[:k])
        best_s = max(range(n), key=lambda i: short[i])
        best_f = max(range(n), key=lambda i: full[i])
        near_rho = spearman([short[i] for i in near], [full[i] for i in near])
        dump["scores"][str(length)] = short
        print(f"| {length} | {tokens:.0f} | {s:.2f} | {s / full_s:.2f} | "
              f"{spearman(short, full):.3f} | {near_rho:.3f} | {len(top_full & top_short)}/{k} | "
              f"{'yes' if best_s == best_f else 'no'} |", flush=True)
    if args.dump:
        with open(args.dump, "w") as f:
            json.dump(dump, f)


if __name__ == "__main__":
    main()
