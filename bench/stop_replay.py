#!/usr/bin/env python3
"""stop_replay: where the stopping rule (option stop_tolerance) would have
ended searches that already ran, without running a model again.

A search is deterministic given its scores: the same problem, seed and
options ask for the same masks in the same order. So a recorded search
(`bosch search --out P` writes P.json and P.history.jsonl) is replayed
through the library with ask/tell, each asked mask answered with its
recorded score, and with stop_tolerance set: the replay either ends with
BOSCH_PLATEAU, a prefix of the recorded run (the library's own rule decides,
not a copy of it), or runs to the recorded end. A mask the record does not
hold at that position is refused by name (the record is not this search).

    PYTHONPATH=bindings/python BOSCH_LIBRARY_DIR=build/lib \\
        python3 bench/stop_replay.py --tolerances 0.001,0.003,0.01 \\
        bench/results/smollm2-niah512/bosch-2x-budget-r0.75

Prints, per search and tolerance: the evaluations used and saved, the
recorded search's final best S^ and the best S^ at the stop, and whether the
stopped search returns the same mask.
"""
import argparse
import json
import os
import sys

import bosch


def load(prefix):
    with open(prefix + ".json") as f:
        res = json.load(f)
    with open(prefix + ".history.jsonl") as f:
        hist = [json.loads(line) for line in f if line.strip()]
    run = {}
    if os.path.exists(prefix + ".run.json"):
        with open(prefix + ".run.json") as f:
            run = json.load(f)
    return res, hist, run


def priors_of(run, prefix):
    """The --priors file of the recorded command line, as the CLI reads it."""
    argv = run.get("argv", [])
    if "--priors" not in argv:
        return None
    path = argv[argv.index("--priors") + 1]
    if not os.path.exists(path):  # recorded on another machine: next to the result
        path = os.path.join(os.path.dirname(os.path.abspath(prefix)), os.path.basename(path))
    with open(path) as f:
        return json.load(f)["unit_importance"]


def replay(prefix, tolerance):
    res, hist, run = load(prefix)
    if res.get("method") != "bosch":
        sys.exit(f"stop_replay: {prefix}.json is a {res.get('method')!r} result, not a search")
    m, st = res["model"], res["settings"]
    prob = bosch.Problem(m["layers"], m["kv_groups"], m["heads_per_group"])
    prob.set_target_ratio(res["target_ratio"])
    opt = bosch.Optimizer(prob)
    opt.set_option("seed", st.get("seed", 0))
    for name in ("budget", "variant", "strategy"):
        if name in st:
            opt.set_option(name, st[name])
    pri = priors_of(run, prefix)
    if pri is not None:
        opt.set_priors(pri)
    if tolerance > 0:
        opt.set_stop_tolerance(tolerance)
    i = 0
    while True:
        batch = opt.ask()
        if not batch:
            break
        for k, mask in enumerate(batch):
            bits = "".join(str(b) for b in mask)
            if i >= len(hist) or hist[i]["mask"] != bits:
                sys.exit(f"stop_replay: {prefix}: evaluation {i} asks for {bits}, the record "
                         f"holds {hist[i]['mask'] if i < len(hist) else 'nothing more'}: "
                         f"not the search this record was made by")
            opt.tell(k, hist[i]["score"])
            i += 1
    r = opt.result(history=False)
    return res, hist, r, i


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefixes", nargs="+", help="recorded searches (P of P.json, P.history.jsonl)")
    ap.add_argument("--tolerances", default="0.001,0.003,0.01")
    args = ap.parse_args()
    tols = [float(t) for t in args.tolerances.split(",")]
    print("| search | stop_tolerance | status | evaluations | saved | best S^ recorded | "
          "best S^ at the stop | same mask |")
    print("|---|---|---|---|---|---|---|---|")
    for prefix in args.prefixes:
        for tol in [0.0] + tols:
            res, hist, r, used = replay(prefix, tol)
            mask = "".join(str(b) for b in r.mask)
            if tol == 0 and (used != len(hist) or mask != res["unit_mask"]):
                sys.exit(f"stop_replay: {prefix}: the replay without the rule used {used} of "
                         f"{len(hist)} recorded evaluations and returns "
                         f"{'the same' if mask == res['unit_mask'] else 'another'} mask: the "
                         f"record is not this library's search")
            print(f"| {os.path.basename(prefix)} | {tol:g} | {r.status_name} | {used} | "
                  f"{len(hist) - used} | {res['score']['normalized']:.4f} | "
                  f"{r.normalized_score:.4f} | {'yes' if mask == res['unit_mask'] else 'no'} |",
                  flush=True)


if __name__ == "__main__":
    main()
