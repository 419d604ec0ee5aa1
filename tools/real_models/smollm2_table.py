#!/usr/bin/env python3
"""The paper's table on a real pretrained model (issue 52, part 3): BOSCH
against every baseline the project has, on SmolLM2-135M-Instruct (the
directory tools/real_models/smollm2.py writes), scored on held-out prompts.

  1. Tasks. RULER's niah_single_2 through libbosch-text (SmolLM2's tokenizer,
     ChatML) at --context tokens: --calib prompts from seed 0 for every
     selection, --heldout prompts from seed 1 for the scores. Needle depths
     are spread over [0, 1 - 2 x window / context], so no needle lies within
     the last window (there any mask finds it and the prompt measures
     nothing). They are written as text tasks beside a bosch.json in
     OUT/model, whose other files link to --model's.
  2. Selections, through the `bosch` command only (every command, with its
     output and wall time, goes to OUT/commands.log): `bosch search` at the
     budget (metric logprob on the calibration prompts), the paper's
     ablations at --ablation-ratio (`--variant probe-only|group-only|
     layer-level`), and every `bosch baseline --kind`. A run whose result
     file exists is not run again (a table can be filled over several
     sessions); its wall time is read back from OUT/TAG.run.json.
  3. Held-out scores, in one process through the Python bindings: one
     evaluator (metric exact: every answer token argmax-correct under
     teacher forcing), the full and all-SWA anchors once, then each
     selection's per-prompt values (cached in OUT/heldout.json by mask, so a
     rerun scores only new masks). `bosch eval --mask TAG.json --metric
     exact` gives the same score (and the anchors again) for one mask.
  4. The tables: held-out accuracy, BOSCH against the best baseline of each
     ratio with the paired (McNemar) count of prompts only one of them
     answers, calibration score / evaluations / wall time, and the turnover
     between ratios (`bosch compare`).

  PYTHONPATH=bindings/python BOSCH_LIBRARY_DIR=build/lib \\
    nice python3 tools/real_models/smollm2_table.py --bosch build/cli/bosch \\
        --model smollm2/f32 --out /tmp/smol-table [--ratios 0.5,0.75,0.875] \\
        [--only REGEX] [--markdown FILE]

Everything it prints is measured in this run or read from this run's files.
"""
import argparse
import hashlib
import json
import math
import os
import platform
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from results_table import run, units_of  # noqa: E402  (the organism table's helpers)
sys.path.insert(0, HERE)
from smollm2 import needle_depth_max, sha256  # noqa: E402

import bosch  # noqa: E402
from bosch import text  # noqa: E402  (bosch.backend only where a model runs: Heldout)

# (row label, command, extra arguments, ratios, budget factor); ratios: False
# = every ratio, True = only --ablation-ratio, a tuple = those ratios
METHODS = [
    ("BOSCH", "search", [], False, 1),
    ("single-unit ablation", "baseline", ["--kind", "ablation"], False, 1),
    # the search started from the single-unit ablation's ranking (its
    # evaluations are in that row; run that row first)
    ("BOSCH (ablation priors)", "search",
     ["--priors", "{out}/single-unit-ablation-r{ratio}.json"], True, 1),
    ("BOSCH (2x budget)", "search", [], (0.75, 0.875), 2),
    # issue 53's length fidelity: screened candidates scored on the same
    # calibration samples rendered at 128 tokens (OUT/model/calib-s128.jsonl)
    ("BOSCH (2x budget, screened at 128 tokens)", "search",
     ["--screen-task", "{out}/model/calib-s128.jsonl"], (0.75, 0.875), 2),
    ("attention locality", "baseline", ["--kind", "locality"], False, 1),
    ("retrieval score", "baseline", ["--kind", "retrieval"], False, 1),
    ("echo/induction (Razor)", "baseline", ["--kind", "echo-induction"], False, 1),
    ("FISHER", "baseline", ["--kind", "fisher"], False, 1),
    ("kvpress DuoAttention (on the fly)", "baseline", ["--kind", "duo-on-the-fly"], False, 1),
    ("NLL probe (one layer at a time)", "baseline", ["--kind", "layer-probe"], False, 1),
    ("RAND layers", "baseline", ["--kind", "rand"], False, 1),
    ("INTR layers", "baseline", ["--kind", "intr"], False, 1),
    ("BME layers", "baseline", ["--kind", "bme"], False, 1),
    ("stage 1 only (probes)", "search", ["--variant", "probe-only"], True, 1),
    ("stage 3 only (groups)", "search", ["--variant", "group-only"], True, 1),
    ("layer-level search", "search", ["--variant", "layer-level"], True, 1),
    ("BOSCH (1/2 budget)", "search", [], True, 0.5),
]


def runs_at(method, ratio, ablation_ratio):
    """Whether a METHODS row runs at this ratio."""
    where = method[3]
    if where is True:
        return ratio == ablation_ratio
    if where is False:
        return True
    return any(abs(ratio - r) < 1e-9 for r in where)


def tag_of(label, ratio):
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") + f"-r{ratio}"


def write_task(args, tok, mdir, name, context, samples, seed, recorded):
    """Writes mdir/name: args.task at `context` tokens, `samples` prompts of
    `seed`, needle depths bounded for the full context (so a shorter
    rendering keeps the same depths); returns its sha256. When `recorded`
    (the sha256 the results were made with) differs, refuses by name and
    leaves the file as it was."""
    path = os.path.join(mdir, name)
    depth_max = needle_depth_max(args.window, args.context)
    with text.TextTask.ruler(tok, args.task, context, samples, seed,
                             depth_min=0.0, depth_max=depth_max) as t:
        t.write_jsonl(path + ".tmp")
    sha = sha256(path + ".tmp")
    if recorded is not None and recorded != sha:
        os.unlink(path + ".tmp")
        sys.exit(f"smollm2_table: {name} generated here differs from the one the results "
                 f"in {args.out} were made on; use another --out")
    os.replace(path + ".tmp", path)
    return sha


def prepare(args):
    """OUT/model: links to the checkpoint's files, the two tasks, a
    bosch.json naming them. OUT/settings.json records the settings, the
    weights' and config's sha256 and the tasks' sha256: an OUT made before
    (on this machine or committed from another) must agree on all of them,
    since every result in it rests on them; its model directory is made
    again where it is missing (the tasks are generated again and must be the
    same bytes)."""
    mdir = os.path.join(args.out, "model")
    settings = {"task": args.task, "context": args.context, "window": args.window,
                "sink": args.sink, "calib": args.calib, "heldout": args.heldout,
                "budget": args.budget,
                "config_sha256": sha256(os.path.join(args.model, "config.json")),
                "weights_sha256": sha256(os.path.join(args.model, "model.safetensors"))}
    stamp = os.path.join(args.out, "settings.json")
    old = None
    if os.path.exists(stamp):
        with open(stamp) as f:
            old = json.load(f)
        diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v}
        if diff:
            sys.exit(f"smollm2_table: {args.out} holds a table made with other settings or "
                     f"another model (earlier, now): {diff}; use another --out")
        if os.path.exists(os.path.join(mdir, "bosch.json")):
            return mdir
    os.makedirs(mdir, exist_ok=True)
    for name in os.listdir(args.model):
        if name != "bosch.json" and not name.endswith(".jsonl"):
            dst = os.path.join(mdir, name)
            if not os.path.lexists(dst):
                os.symlink(os.path.realpath(os.path.join(args.model, name)), dst)
    tok = text.Tokenizer(os.path.join(args.model, "tokenizer.json"))
    for name, samples, seed in (("calib.jsonl", args.calib, 0),
                                ("heldout.jsonl", args.heldout, 1)):
        settings[name + "_sha256"] = write_task(
            args, tok, mdir, name, args.context, samples, seed,
            old.get(name + "_sha256") if old else None)
    with open(os.path.join(mdir, "bosch.json"), "w") as f:
        json.dump({"calib": "calib.jsonl", "heldout": "heldout.jsonl", "window": args.window,
                   "sink": args.sink, "metric": "logprob", "budget": args.budget}, f, indent=1)
    with open(stamp, "w") as f:
        json.dump(settings, f, indent=1)
    return mdir


def prepare_screens(args, mdir):
    """OUT/model/calib-sN.jsonl: the calibration task's samples rendered at
    N tokens (same seed, samples and needle depths: the same needles,
    questions and answers), for the screened searches. Made where missing;
    their sha256 is added to settings.json, and one recorded before must
    match (else refused by name, the file left as it was)."""
    stamp = os.path.join(args.out, "settings.json")
    with open(stamp) as f:
        settings = json.load(f)
    tok = text.Tokenizer(os.path.join(mdir, "tokenizer.json"))
    changed = False
    for length in args.screen_lengths:
        name = f"calib-s{length}.jsonl"
        path = os.path.join(mdir, name)
        if os.path.exists(path) and settings.get(name + "_sha256") == sha256(path):
            continue
        sha = write_task(args, tok, mdir, name, length, args.calib, 0,
                         settings.get(name + "_sha256"))
        changed |= name + "_sha256" not in settings
        settings[name + "_sha256"] = sha
    if changed:
        with open(stamp + ".tmp", "w") as f:
            json.dump(settings, f, indent=1)
        os.replace(stamp + ".tmp", stamp)


def select(args, mdir, log, label, cmd, extra, ratio, factor):
    """Runs one selection unless its result exists; returns (result, wall)."""
    prefix = os.path.join(args.out, tag_of(label, ratio))
    runfile = prefix + ".run.json"
    if not (os.path.exists(prefix + ".json") and os.path.exists(runfile)):
        extra = [x.format(out=args.out, ratio=ratio) for x in extra]
        argv = [args.bosch, cmd, "--model", mdir, "--seed", "0", "--ratio", str(ratio),
                "--out", prefix, *extra]
        if cmd == "search":
            argv += ["--budget", str(int(args.budget * factor))]
        _, wall = run(argv, log, dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
        with open(runfile, "w") as f:
            json.dump({"argv": argv, "wall": wall}, f)
    with open(prefix + ".json") as f:
        res = json.load(f)
    with open(runfile) as f:
        wall = json.load(f)["wall"]
    return res, wall


class Heldout:
    """Per-prompt held-out values of masks, on one evaluator, cached by mask."""

    def __init__(self, args, mdir):
        self.path = os.path.join(args.out, "heldout.json")
        self.cache = {}
        if os.path.exists(self.path):
            with open(self.path) as f:
                self.cache = json.load(f)
        from bosch import backend
        self.tok = text.Tokenizer(os.path.join(mdir, "tokenizer.json"))
        self.model = backend.Model(mdir, device="cpu", dtype="f32", threads=args.threads)
        self.task = backend.Task.from_text_jsonl(os.path.join(mdir, "heldout.jsonl"), self.tok)
        self.ev = backend.Evaluator(self.model, self.task, window=args.window, sink=args.sink,
                                    metric="exact")
        self.units = self.model.problem().n_units
        self.seconds = 0.0

    def cached(self, mask_bits):
        return hashlib.sha256(mask_bits.encode()).hexdigest()[:16] in self.cache

    def values(self, mask_bits):
        key = hashlib.sha256(mask_bits.encode()).hexdigest()[:16]
        if key not in self.cache:
            t0 = time.monotonic()
            self.cache[key] = self.ev.sample_values([int(c) for c in mask_bits])
            self.seconds += time.monotonic() - t0
            if os.path.exists(self.path):  # keep what another process added meanwhile
                with open(self.path) as f:
                    self.cache = {**json.load(f), **self.cache}
            with open(self.path + ".tmp", "w") as f:
                json.dump(self.cache, f)
            os.replace(self.path + ".tmp", self.path)
        return self.cache[key]


def accuracy(v):
    return sum(v) / len(v)


def mcnemar(a, b):
    """Prompts only a answers, only b answers, and the exact two-sided
    binomial p of the split (McNemar's test on paired 0/1 outcomes)."""
    only_a = sum(1 for x, y in zip(a, b) if x > 0.5 >= y)
    only_b = sum(1 for x, y in zip(a, b) if y > 0.5 >= x)
    n, k = only_a + only_b, min(only_a, only_b)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0
    return only_a, only_b, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bosch", default="build/cli/bosch")
    ap.add_argument("--model", required=True, help="SmolLM2's f32 directory (smollm2.py --out)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ratios", default="0.5,0.75,0.875")
    ap.add_argument("--ablation-ratio", type=float, default=0.75)
    ap.add_argument("--task", default="niah_single_2")
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--calib", type=int, default=8, help="calibration prompts (seed 0)")
    ap.add_argument("--heldout", type=int, default=200, help="held-out prompts (seed 1)")
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", metavar="REGEX", help="methods whose label matches")
    ap.add_argument("--markdown", help="write the tables to this file too")
    ap.add_argument("--screen-lengths", default="128", type=lambda v: [int(x) for x in v.split(",")],
                    help="render the calibration task at these lengths too (calib-sN.jsonl), "
                         "for the screened rows")
    ap.add_argument("--prepare-only", action="store_true",
                    help="write OUT/model (tasks, bosch.json, links) and stop")
    ap.add_argument("--report-only", action="store_true",
                    help="run and score nothing: the tables of what OUT holds scored")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t_start = time.monotonic()
    mdir = prepare(args)
    prepare_screens(args, mdir)
    if args.prepare_only:
        print(f"{mdir}: calib.jsonl ({args.calib} prompts, seed 0), heldout.jsonl "
              f"({args.heldout}, seed 1), bosch.json (window {args.window}, sink {args.sink}, "
              f"metric logprob, budget {args.budget})")
        return
    log = open(os.path.join(args.out, "commands.log"), "a")
    ratios = [float(r) for r in args.ratios.split(",")]
    methods = [m for m in METHODS if not args.only or re.search(args.only, m[0])]
    jobs = [(m, r) for r in ratios for m in methods if runs_at(m, r, args.ablation_ratio)]
    held = Heldout(args, mdir)
    full = held.values("0" * held.units)
    swa = held.values("1" * held.units)
    print(f"held-out anchors: full {accuracy(full):.3f}, all-SWA {accuracy(swa):.3f}", flush=True)
    rows = {}
    for (label, cmd, extra, _, factor), ratio in jobs:
        if args.report_only and not os.path.exists(
                os.path.join(args.out, tag_of(label, ratio) + ".run.json")):
            continue
        res, wall = select(args, mdir, log, label, cmd, extra, ratio, factor)
        if args.report_only and not held.cached(res["unit_mask"]):
            continue
        values = held.values(res["unit_mask"])
        rows[(label, ratio)] = {"res": res, "wall": wall, "values": values}
        print(f"{label:34s} rho {ratio:<6} held-out {accuracy(values):.3f}  calib "
              f"{res['score']['raw']:9.4f}  evals {res['evaluations']['total']:4d}  "
              f"{wall:7.1f} s", flush=True)
    md = render(args, ratios, methods, rows, (full, swa), held, mdir, log,
                time.monotonic() - t_start)
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)


def render(args, ratios, methods, rows, anchors, held, mdir, log, total):
    out = [f"Held-out accuracy on {args.heldout} prompts of {args.task} at {args.context} "
           f"tokens (metric exact; full attention {accuracy(anchors[0]):.3f}, every unit SWA "
           f"{accuracy(anchors[1]):.3f}); window {args.window}, sink {args.sink}; every "
           f"selection made on {args.calib} calibration prompts (metric logprob), BOSCH at "
           f"budget {args.budget}. Bold: the best of its column.", ""]
    out.append("| method | " + " | ".join(f"rho {r}" for r in ratios) + " |")
    out.append("|---|" + "---|" * len(ratios))
    best = {r: max((accuracy(rows[(m[0], r)]["values"]) for m in methods if (m[0], r) in rows),
                   default=None) for r in ratios}
    for m in methods:
        cells = []
        for r in ratios:
            row = rows.get((m[0], r))
            if not row:
                cells.append("")
                continue
            a = accuracy(row["values"])
            cells.append(f"**{a:.3f}**" if a == best[r] else f"{a:.3f}")
        if any(cells):
            out.append(f"| {m[0]} | " + " | ".join(cells) + " |")
    out += ["", "BOSCH against the best baseline of each ratio (static, ablation or layer "
            "pattern; not BOSCH's own ablations), on the same held-out prompts: the prompts "
            "only one of the two answers, and McNemar's exact two-sided p:", "",
            "| rho | BOSCH | best baseline | its score | only BOSCH | only baseline | p |",
            "|---|---|---|---|---|---|---|"]
    for r in ratios:
        b = rows.get(("BOSCH", r))
        bases = [(accuracy(rows[(m[0], r)]["values"]), m[0]) for m in methods
                 if m[1] == "baseline" and (m[0], r) in rows]
        if not b or not bases:
            continue
        score, name = max(bases)
        only_b, only_base, p = mcnemar(b["values"], rows[(name, r)]["values"])
        out.append(f"| {r} | {accuracy(b['values']):.3f} | {name} | {score:.3f} | {only_b} | "
                   f"{only_base} | {p:.3g} |")
    out += ["", "Calibration score (mean answer log-probability), evaluations and wall time "
            "of each selection:", "",
            "| method | " + " | ".join(f"rho {r}: calib / evals / s" for r in ratios) + " |",
            "|---|" + "---|" * len(ratios)]
    for m in methods:
        cells = []
        for r in ratios:
            row = rows.get((m[0], r))
            cells.append(f"{row['res']['score']['raw']:.4f} / "
                         f"{row['res']['evaluations']['total']} / {row['wall']:.0f}"
                         if row else "")
        if any(cells):
            out.append(f"| {m[0]} | " + " | ".join(cells) + " |")
    pairs = [(a, b) for a, b in zip(ratios, ratios[1:])
             if ("BOSCH", a) in rows and ("BOSCH", b) in rows]
    if pairs:
        out += ["", "Turnover of BOSCH's selections between ratios (`bosch compare`: Jaccard "
                "index of the full units; SWA units of the lower ratio full at the higher):", ""]
        for a, b in pairs:
            pa = os.path.join(args.out, tag_of("BOSCH", a) + ".json")
            pb = os.path.join(args.out, tag_of("BOSCH", b) + ".json")
            cmp_out, _ = run([args.bosch, "compare", pa, pb], log)
            m = re.search(r"^A\s+[\d.]+\s+([\d.]+)", cmp_out, re.M)
            if not m:
                sys.exit(f"smollm2_table: cannot read bosch compare's overlap:\n{cmp_out}")
            dropped = len(units_of(rows[("BOSCH", a)]["res"]) -
                          units_of(rows[("BOSCH", b)]["res"]))
            out.append(f"- rho {a} to {b}: Jaccard index of the full units {m.group(1)}; "
                       f"{dropped} SWA units of rho {a} full at rho {b}")
    if args.report_only:
        out += ["", f"Reprinted from {args.out} (`--report-only`: nothing run or scored; the "
                f"wall times are those recorded with each selection); bosch "
                f"{bosch.__version__}."]
    else:
        out += ["", f"Held-out scoring {held.seconds:.0f} s this run (masks scored before are "
                f"cached); total {total / 60:.1f} min on {platform.machine()} with "
                f"{os.cpu_count()} CPUs, {args.threads} threads; bosch {bosch.__version__}."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
