#!/usr/bin/env python3
"""The curves of examples/recover.py as Markdown tables: one table per
held-out task and metric, a row per evaluated step, a column per mask; each
cell the mean over the runs (seeds) given, with their range when there are
several.

  examples/recover_table.py curves-s0.jsonl curves-s1.jsonl ... \\
      [--metric exact --metric logprob] [--steps 0,10,20,50,100,200] [--names A=...]

--names maps a mask's path (or its file name) to a column name
(repeatable, MASK=NAME); default: the file name without .json.
"""
import argparse
import json
import os
import statistics
import sys


def load(paths):
    """{(mask, step): {key: [values over runs]}} and the order of masks."""
    cells, masks = {}, []
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if r["mask"] not in masks:
                    masks.append(r["mask"])
                cell = cells.setdefault((r["mask"], r["step"]), {})
                for k, v in r.items():
                    if ":" in k and v is not None:
                        cell.setdefault(k, []).append(float(v))
    return cells, masks


def fmt(values, digits):
    m = statistics.fmean(values)
    if len(values) == 1:
        return "%.*f" % (digits, m)
    return "%.*f (%.*f..%.*f)" % (digits, m, digits, min(values), digits, max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("curves", nargs="+")
    ap.add_argument("--metric", action="append", default=[])
    ap.add_argument("--steps", default="", help="comma-separated steps (default: all)")
    ap.add_argument("--names", action="append", default=[], help="MASK=NAME")
    a = ap.parse_args()
    cells, masks = load(a.curves)
    if not masks:
        sys.exit("no curves in %s" % ", ".join(a.curves))
    names = {}
    for item in a.names:
        mask, _, name = item.partition("=")
        if not name:
            sys.exit("--names %s: want MASK=NAME" % item)
        names[mask] = name
    def column(m):
        return names.get(m) or names.get(os.path.basename(m)) or \
            os.path.basename(m).removesuffix(".json")
    steps = sorted({s for (_, s) in cells})
    if a.steps:
        want = [int(s) for s in a.steps.split(",")]
        missing = [s for s in want if s not in steps]
        if missing:
            sys.exit("steps %s are not in the curves" % missing)
        steps = want
    keys = sorted({k for c in cells.values() for k in c})
    metrics = a.metric or sorted({k.split(":")[1] for k in keys})
    for key in keys:
        task, metric = key.split(":")
        if metric not in metrics:
            continue
        digits = 3 if metric == "exact" else 4
        # runs per mask: the most values of any of its cells
        n = {m: max((len(c[key]) for (mm, _), c in cells.items() if mm == m and key in c),
                    default=0) for m in masks}
        runs = max(n.values())
        uneven = len(set(n.values())) > 1
        heads = [column(m) for m in masks]
        if uneven:  # say which columns have fewer runs
            heads = ["%s (%d run%s)" % (h, n[m], "s" if n[m] > 1 else "")
                     for h, m in zip(heads, masks)]
        print("%s, %s (mean over %s run%s%s):\n" % (
            task, metric, "the" if uneven else runs,
            "s" if runs > 1 else "", ", min..max" if runs > 1 else ""))
        print("| step | " + " | ".join(heads) + " |")
        print("|---|" + "---|" * len(masks))
        for s in steps:
            row = [fmt(cells[(m, s)][key], digits) if key in cells.get((m, s), {}) else ""
                   for m in masks]
            print("| %d | %s |" % (s, " | ".join(row)))
        print()


if __name__ == "__main__":
    main()
