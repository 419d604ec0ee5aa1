#!/usr/bin/env python3
"""The stopping rule on SmolLM2's recorded searches, scored where it counts
(issue 53): each BOSCH search of a smollm2_table.py results directory is
replayed through the library with stop_tolerance set (bench/stop_replay.py:
no model runs for the search), and the mask the stopped search returns is
scored on the table's 200 held-out prompts (per-prompt values cached in the
directory's heldout-levers.json, beside the table's heldout.json, which is
read too). Printed per search and tolerance:
the evaluations used and saved, the best calibration S^, the held-out
accuracy, and the prompts only the stopped / only the unstopped mask answer.

    PYTHONPATH=bindings/python BOSCH_LIBRARY_DIR=build/lib python3 \\
        tools/real_models/smollm2_levers.py --model SMOL/f32 \\
        --out bench/results/smollm2-niah512 --tolerances 0.001,0.003,0.01

The directory's settings (model, tasks) are checked as smollm2_table.py
checks them; a search that is not a replayable BOSCH run is left out with
the reason.
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import smollm2_table  # noqa: E402
import stop_replay  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="SmolLM2's f32 directory (smollm2.py --out)")
    ap.add_argument("--out", required=True, help="a smollm2_table.py results directory")
    ap.add_argument("--tolerances", default="0.001,0.003,0.01")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    with open(os.path.join(args.out, "settings.json")) as f:
        st = json.load(f)
    table_args = argparse.Namespace(model=args.model, out=args.out, threads=args.threads,
                                    **{k: st[k] for k in ("task", "context", "window", "sink",
                                                          "calib", "heldout", "budget")})
    mdir = smollm2_table.prepare(table_args)
    held = smollm2_table.Heldout(table_args, mdir)
    # Its own cache file: the table may be writing heldout.json meanwhile.
    held.path = os.path.join(args.out, "heldout-levers.json")
    if os.path.exists(held.path):
        with open(held.path) as f:
            held.cache.update(json.load(f))
    tols = [float(t) for t in args.tolerances.split(",")]
    print("| search | stop_tolerance | evaluations | saved | best calib S^ | held-out | "
          "only stopped / only unstopped |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(args.out, "*.json"))):
        prefix = path[:-5]
        if not os.path.exists(prefix + ".history.jsonl") or prefix.endswith(
                ("settings", "heldout")):
            continue
        with open(path) as f:
            res = json.load(f)
        if res.get("method") != "bosch" or res.get("settings", {}).get("variant") != "full":
            continue
        full_vals = held.values(res["unit_mask"])
        name = os.path.basename(prefix)
        print(f"| {name} | off | {res['evaluations']['total']} | 0 | "
              f"{res['score']['normalized']:.4f} | {smollm2_table.accuracy(full_vals):.3f} | - |",
              flush=True)
        for tol in tols:
            _, hist, r, used = stop_replay.replay(prefix, tol)
            mask = "".join(str(b) for b in r.mask)
            vals = held.values(mask)
            a, b, _ = smollm2_table.mcnemar(vals, full_vals)
            print(f"| {name} | {tol:g} | {used} | {len(hist) - used} | "
                  f"{r.normalized_score:.4f} | {smollm2_table.accuracy(vals):.3f} | "
                  f"{a} / {b} |", flush=True)


if __name__ == "__main__":
    main()
