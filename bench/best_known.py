#!/usr/bin/python3
"""The best-known mask of a model per SWA ratio (issue 14): the best
calibration score over several long searches with different strategies and
seeds, optionally an exhaustive pass over the masks whose full units are
drawn from a candidate set, and any saved masks given.

  bench/best_known.py --model DIR --ratio 0.75 --ratio 0.875 --out OUT \\
      [--runs auto:1:1000,swap:2:1000,ea:3:1000] [--among 0,5,9,...] [--include FILE ...]

--runs: STRATEGY:SEED:BUDGET items, each one `bosch search` (STRATEGY
"auto" is the default). --among U,...: every mask of the ratio whose full
units all lie in that list, scored in process through the Python binding
(C(len, full units) masks; refused above --max-masks). --include: saved
PREFIX.json masks (e.g. the results table's) of the same model, scored on
the calibration task. Writes OUT/best-r{ratio}.json (a copy of the best
run's result, or a new selection for a mask from the exhaustive pass) and
prints the table of every candidate. Scores are the calibration objective
of the model's bosch.json; nothing is read from earlier runs.
"""
import argparse
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_tree_binding import REPO, load_binding  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bosch", default=os.path.join(REPO, "build", "cli", "bosch"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--ratio", type=float, action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", default="auto:1:1000,swap:2:1000")
    ap.add_argument("--among", default="", help="candidate full units for the exhaustive pass")
    ap.add_argument("--max-masks", type=int, default=20000)
    ap.add_argument("--include", action="append", default=[])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.model, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(args.model, "bosch.json")) as f:
        sugg = json.load(f)
    L, G = cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    H = cfg["num_attention_heads"] // G
    U = L * G
    among = [int(u) for u in args.among.split(",") if u.strip()]
    ev = None
    if among or args.include:
        bosch, backend = load_binding()
        model = backend.Model(args.model, device="cpu")
        task = backend.Task.read_jsonl(os.path.join(args.model, sugg["calib"]))
        ev = backend.Evaluator(model, task, int(sugg.get("window", 32)), int(sugg.get("sink", 4)),
                               sugg.get("metric", "logprob"))
    for ratio in args.ratio:
        swa_units = round(ratio * U)
        rows = []  # (score, label, evaluations, seconds, bits, result path or None)
        for item in [r for r in args.runs.split(",") if r]:
            strategy, seed, budget = item.split(":")
            prefix = os.path.join(args.out, f"r{ratio}-{strategy}-s{seed}-b{budget}")
            cmd = [args.bosch, "search", "--model", args.model, "--ratio", str(ratio), "--seed",
                   seed, "--budget", budget, "--out", prefix]
            if strategy != "auto":
                cmd += ["--strategy", strategy]
            t0 = time.monotonic()
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wall = time.monotonic() - t0
            if p.returncode != 0:
                sys.exit(f"best_known: {' '.join(cmd)} failed:\n{p.stderr}")
            with open(prefix + ".json") as f:
                res = json.load(f)
            bits = [int(c) for c in res["unit_mask"]]
            rows.append((res["score"]["raw"], f"search {strategy}, seed {seed}, budget {budget}",
                         res["evaluations"]["total"], wall, bits, prefix + ".json"))
            print(f"rho {ratio}: {rows[-1][1]}: {rows[-1][0]:.5f} ({wall:.0f} s)", flush=True)
        if among:
            nfull = U - swa_units
            n = math.comb(len(among), nfull) if nfull <= len(among) else 0
            if n > args.max_masks:
                sys.exit(f"best_known: {n} masks among {len(among)} units at rho {ratio} "
                         f"(more than --max-masks {args.max_masks})")
            t0 = time.monotonic()
            masks = []
            for keep in itertools.combinations(among, nfull):
                m = [1] * U
                for u in keep:
                    m[u] = 0
                masks.append(m)
            scores = []
            for i in range(0, len(masks), 64):
                scores += ev.score_batch([bytes(m) for m in masks[i:i + 64]])
            if masks:
                b = max(range(len(masks)), key=lambda i: (scores[i], -i))
                rows.append((scores[b], f"exhaustive: full units from {{{args.among}}}",
                             len(masks), time.monotonic() - t0, masks[b], None))
                print(f"rho {ratio}: {rows[-1][1]}: {scores[b]:.5f} of {len(masks)} masks",
                      flush=True)
        for path in args.include:
            with open(path) as f:
                res = json.load(f)
            bits = [int(c) for c in res["unit_mask"]]
            if len(bits) != U or sum(bits) != swa_units:
                continue  # another model or ratio
            rows.append((ev.score_batch([bytes(bits)])[0], f"saved {os.path.basename(path)}",
                         res.get("evaluations", {}).get("total", 0), 0.0, bits, path))
        if not rows:
            continue
        best = max(rows, key=lambda r: r[0])
        dest = os.path.join(args.out, f"best-r{ratio}.json")
        if best[5]:
            shutil.copyfile(best[5], dest)
        else:
            bosch, _ = load_binding()
            sel = bosch.Selection(L, G, H)
            sel.mask = best[4]
            sel.method = "best-known"
            sel.set_setting("window", int(sugg.get("window", 32)))
            sel.set_setting("sink", int(sugg.get("sink", 4)))
            sel.write_json(dest)
            sel.close()
        print(f"\n### rho {ratio} ({swa_units} of {U} units SWA)\n")
        print("| candidate | calibration score | evaluations | seconds | SWA mask |")
        print("|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: -r[0]):
            mark = "**" if r is best else ""
            print(f"| {mark}{r[1]}{mark} | {r[0]:.5f} | {r[2]} | {r[3]:.0f} | "
                  f"`{''.join(map(str, r[4]))}` |")
        print(f"\nbest-known mask written to {dest}\n", flush=True)


if __name__ == "__main__":
    main()
