#!/usr/bin/python3
"""What a trained organism's retrieval is spread over (issue 14), in one process.

Through the Python binding (libbosch and libbosch-torch, loaded in process,
so that hundreds of masks are scored without reloading the model):
  - held-out accuracy (exact match) with full attention and with every unit
    SWA, on each held-out task of the model's bosch.json (single needle,
    multi-key needles, two-hop);
  - every unit alone SWA (others full) and alone full (others SWA), on the
    single-needle and the two-hop task, and its single-unit ablation drop on
    the calibration objective (what `bosch baseline --kind ablation` ranks);
  - pairs of the units that matter most (--pairs K: the K units of largest
    alone-SWA drop or alone-full gain), alone SWA and alone full, so that
    redundancy (a pair needed where neither unit alone is) shows;
  - any saved masks given with --mask FILE (a bosch result or baseline
    PREFIX.json), on every held-out task and the calibration objective.
Prints Markdown (and writes it with --markdown); every number is measured
in this run.

Usage: bench/entanglement.py --model models/organism-entangled [--pairs 6]
           [--mask FILE ...] [--no-units] [--markdown FILE]
Environment: BOSCH_LIBRARY / BOSCH_TORCH_LIBRARY as for the binding (the
source tree's build/ is used when they are unset).
"""
import argparse
import itertools
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_tree_binding import REPO, load_binding  # noqa: E402


TASKS = (("heldout", "single needle"), ("heldout_multi", "multi-key (4 needles, one queried)"),
         ("heldout_two_hop", "two-hop (variable tracking)"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(REPO, "models", "organism-entangled"))
    ap.add_argument("--pairs", type=int, default=6, help="units in the pair table (0: none)")
    ap.add_argument("--mask", action="append", default=[], help="a saved PREFIX.json to score")
    ap.add_argument("--no-units", action="store_true", help="skip the single-unit and pair tables")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    bosch, backend = load_binding()
    t0 = time.monotonic()
    with open(os.path.join(args.model, "bosch.json")) as f:
        sugg = json.load(f)
    window, sink = int(sugg.get("window", 32)), int(sugg.get("sink", 4))
    model = backend.Model(args.model, device="cpu")
    L, G = model.shape.layers, model.shape.kv_groups
    U = L * G
    calib = backend.Evaluator(model, backend.Task.read_jsonl(os.path.join(args.model, sugg["calib"])),
                              window, sink, sugg.get("metric", "logprob"))
    held = {}
    for key, what in TASKS:
        if key in sugg:
            task = backend.Task.read_jsonl(os.path.join(args.model, sugg[key]))
            held[key] = (what, sugg[key], backend.Evaluator(model, task, window, sink, "exact"))
    evals = [0]

    def score(ev, masks):
        evals[0] += len(masks)
        return ev.score_batch([bytes(m) for m in masks])

    full, swa = [0] * U, [1] * U
    out = [f"Model `{args.model}`: {L} layers x {G} KV groups = {U} units; window {window}, "
           f"sink {sink}; held-out scores are exact-match accuracy, the calibration objective is "
           f"`{sugg.get('metric', 'logprob')}` on `{sugg['calib']}`.", ""]
    out += ["| task | full attention | every unit SWA |", "|---|---|---|"]
    anchors = {}
    for key, (what, fname, ev) in held.items():
        anchors[key] = score(ev, [full, swa])
        out.append(f"| {what} (`{fname}`) | {anchors[key][0]:.3f} | {anchors[key][1]:.3f} |")
    c_full, c_swa = score(calib, [full, swa])
    out.append(f"| calibration objective (`{sugg['calib']}`) | {c_full:.4f} | {c_swa:.4f} |")
    out.append("")

    if not args.no_units:
        alone_swa = [[1 if v == u else 0 for v in range(U)] for u in range(U)]
        alone_full = [[0 if v == u else 1 for v in range(U)] for u in range(U)]
        drop = [c_full - s for s in score(calib, alone_swa)]
        tabs = {}
        for key in ("heldout", "heldout_two_hop"):
            if key in held:
                ev = held[key][2]
                tabs[key] = (score(ev, alone_swa), score(ev, alone_full))
        out.append("Single units (unit = layer x KV group): held-out accuracy with the unit "
                   "alone SWA / alone full, and its single-unit ablation drop on the calibration "
                   "objective (S_full - S(unit alone SWA), what `--kind ablation` ranks):")
        out.append("")
        cols = [held[k][0] for k in tabs]
        out.append("| unit | layer | group | " + " | ".join(f"{c}: alone SWA / alone full"
                                                          for c in cols) + " | ablation drop |")
        out.append("|---|---|---|" + "---|" * len(cols) + "---|")
        for u in range(U):
            cells = [f"{tabs[k][0][u]:.3f} / {tabs[k][1][u]:.3f}" for k in tabs]
            out.append(f"| {u} | {u // G} | {u % G} | " + " | ".join(cells) + f" | {drop[u]:.4f} |")
        out.append("")
        if args.pairs > 1 and tabs:
            base = {k: anchors[k] for k in tabs}

            def effect(u):
                return max(max(base[k][0] - tabs[k][0][u], tabs[k][1][u] - base[k][1]) for k in tabs)

            top = sorted(range(U), key=lambda u: (-effect(u), u))[:args.pairs]
            pairs = list(itertools.combinations(sorted(top), 2))
            p_swa = [[1 if v in p else 0 for v in range(U)] for p in pairs]
            p_full = [[0 if v in p else 1 for v in range(U)] for p in pairs]
            ptab = {k: (score(held[k][2], p_swa), score(held[k][2], p_full)) for k in tabs}
            out.append(f"Pairs of the {len(top)} units of largest single-unit effect "
                       f"({', '.join(str(u) for u in sorted(top))}): held-out accuracy with the "
                       "pair alone SWA / alone full:")
            out.append("")
            out.append("| pair | " + " | ".join(f"{c}: pair SWA / pair full" for c in cols) + " |")
            out.append("|---|" + "---|" * len(cols))
            for i, p in enumerate(pairs):
                cells = [f"{ptab[k][0][i]:.3f} / {ptab[k][1][i]:.3f}" for k in tabs]
                out.append(f"| {p[0]}, {p[1]} | " + " | ".join(cells) + " |")
            out.append("")

    if args.mask:
        out.append("Saved masks (held-out accuracy per task; calibration objective):")
        out.append("")
        out.append("| mask | SWA units | " + " | ".join(w for w, _, _ in held.values()) +
                   " | calibration |")
        out.append("|---|---|" + "---|" * len(held) + "---|")
        for path in args.mask:
            with open(path) as f:
                bits = [int(c) for c in json.load(f)["unit_mask"]]
            if len(bits) != U:
                sys.exit(f"entanglement: {path} has {len(bits)} units, the model {U}")
            cells = [f"{score(ev, [bits])[0]:.3f}" for _, _, ev in held.values()]
            out.append(f"| `{os.path.basename(path)}` | {sum(bits)} | " + " | ".join(cells) +
                       f" | {score(calib, [bits])[0]:.4f} |")
        out.append("")
    out.append(f"{evals[0]} masks scored in {time.monotonic() - t0:.0f} s "
               f"({backend.get_threads()} CPU threads).")
    md = "\n".join(out) + "\n"
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
