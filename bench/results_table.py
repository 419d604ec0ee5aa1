#!/usr/bin/python3
"""The paper's main table on the organism (issue 5), through the `bosch` command.

For every target SWA ratio it runs BOSCH (default budget, half, double), the
paper's ablations (stage-1 only, stage-3 only, layer-level search), the static
head-level baselines (attention locality, retrieval score, echo/induction,
FISHER, single-unit ablation) and the layer-level patterns RAND/INTR/BME, all
selecting on the model's calibration task; then scores every selection on the
held-out task with `bosch eval --metric exact` (NIAH accuracy). It also reports
head turnover between ratios and a side-by-side run of a paper-faithful
configuration (MADS-style strategy, one candidate per ask and per forward
pass, no prefix cache) against the default, on the same budget.

Usage (from the source tree, after `meson setup build && ninja -C build`):
  bench/results_table.py --bosch build/cli/bosch --out /tmp/results \
      [--model models/organism] [--budget N] [--ratios 0.25,0.5,0.75,0.875]
      [--markdown docs/results.md]
Everything it prints is measured in this run; nothing is copied from a file.
Only the standard library: it drives the command and reads its JSON.
"""
import argparse
import concurrent.futures
import json
import os
import platform
import re
import subprocess
import sys
import threading
import time


LOG_LOCK = threading.Lock()


def run(cmd, log, env=None):
    """Runs a command, returns (stdout, wall seconds); exits on failure."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.monotonic() - t0
    with LOG_LOCK:
        log.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr +
                  f"[{wall:.1f} s, rc {p.returncode}]\n")
        log.flush()
    if p.returncode != 0:
        sys.exit(f"results_table: command failed (rc {p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p.stdout, wall


def units_of(result):
    return {i for i, c in enumerate(result["unit_mask"]) if c == "1"}


def jaccard_distance(a, b):
    u = a | b
    return 1.0 - len(a & b) / len(u) if u else 0.0


def heldout(args, prefix, log, env=None, task=None):
    extra = ["--task", task] if task else []
    out, _ = run([args.bosch, "eval", "--mask", prefix + ".json", "--metric", "exact",
                  "--model", args.model, *extra], log, env)
    m = re.search(r"^score (\S+) \(full (\S+), all-SWA (\S+)\)", out, re.M)
    if not m:
        sys.exit(f"results_table: cannot read the score of bosch eval:\n{out}")
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def evaluator_time(history_path):
    """Per evaluation: cumulative evaluator seconds up to and including it
    (wall_s is each mask's share of the evaluator call that scored it: a
    batch's time divided by its size)."""
    out, total = [], 0.0
    with open(history_path) as f:
        for line in f:
            h = json.loads(line)
            total += h.get("wall_s") or 0.0
            out.append((h, total))
    return out


def reach(history_path, target, feasible_units):
    """Evaluations and evaluator seconds until the best feasible calibration
    score first reaches `target` (None if never)."""
    best = None
    for n, (h, t) in enumerate(evaluator_time(history_path), 1):
        if h["swa_units"] != feasible_units:
            continue
        if best is None or h["score"] > best:
            best = h["score"]
        if best >= target:
            return n, t
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bosch", default="build/cli/bosch")
    ap.add_argument("--model", default="models/organism")
    ap.add_argument("--out", required=True, help="directory for every run's files and log")
    ap.add_argument("--budget", type=int, default=0, help="default budget (0: the model's bosch.json)")
    ap.add_argument("--ratios", default="0.25,0.5,0.75,0.875")
    ap.add_argument("--faithful-ratios", default="0.75,0.875",
                    help="ratios of the paper-faithful comparison")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1,
                    help="table runs in parallel (the speed comparison always runs alone)")
    ap.add_argument("--markdown", help="write the tables to this file too")
    ap.add_argument("--best-known", help="directory of best-r{ratio}.json masks (bench/best_known.py):"
                    " a row scored on the held-out tasks like the others")
    ap.add_argument("--only", metavar="REGEX",
                    help="only the methods whose label matches (e.g. 'BOSCH'): a quick re-check")
    ap.add_argument("--speed-only", action="store_true",
                    help="only the paper-faithful speed comparison")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "commands.log"), "w")
    budget = args.budget
    with open(os.path.join(args.model, "bosch.json")) as f:
        sugg = json.load(f)
    if not budget:
        budget = int(sugg.get("budget", 500))
    multi_task = (os.path.join(args.model, sugg["heldout_multi"]) if "heldout_multi" in sugg
                  else None)
    hop_task = (os.path.join(args.model, sugg["heldout_two_hop"]) if "heldout_two_hop" in sugg
                else None)
    ratios = [float(r) for r in args.ratios.split(",")]
    common = ["--model", args.model, "--seed", str(args.seed)]

    methods = [  # (row label, command, extra arguments, budget)
        ("BOSCH (default budget)", "search", [], budget),
        ("BOSCH (1/2 budget)", "search", [], budget // 2),
        ("BOSCH (2x budget)", "search", [], budget * 2),
        ("stage 1 only (probes)", "search", ["--variant", "probe-only"], budget),
        ("stage 3 only (groups)", "search", ["--variant", "group-only"], budget),
        ("layer-level search", "search", ["--variant", "layer-level"], budget),
        ("single-unit ablation", "baseline", ["--kind", "ablation"], 0),
        ("attention locality", "baseline", ["--kind", "locality"], 0),
        ("retrieval score", "baseline", ["--kind", "retrieval"], 0),
        ("echo/induction (Razor)", "baseline", ["--kind", "echo-induction"], 0),
        ("FISHER", "baseline", ["--kind", "fisher"], 0),
        ("kvpress DuoAttention (on the fly)", "baseline", ["--kind", "duo-on-the-fly"], 0),
        ("NLL probe (one layer at a time)", "baseline", ["--kind", "layer-probe"], 0),
        ("RAND layers", "baseline", ["--kind", "rand"], 0),
        ("INTR layers", "baseline", ["--kind", "intr"], 0),
        ("BME layers", "baseline", ["--kind", "bme"], 0),
    ]
    if args.best_known:
        methods.append(("best-known mask", "best", [], 0))
    if args.only:
        methods = [m for m in methods if re.search(args.only, m[0])]
        if not methods:
            sys.exit(f"results_table: no method matches --only {args.only!r}")
    rows = {}  # (label, ratio) -> dict
    bosch_sets = {}
    anchors = anchors_multi = anchors_hop = None
    t_start = time.monotonic()

    def one(job):
        label, cmd, extra, b, ratio = job
        tag = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") + f"-r{ratio}"
        prefix = os.path.join(args.out, tag)
        if cmd == "best":  # scored, not searched: its search's cost is in best_known.py's table
            prefix, wall = os.path.join(args.best_known, f"best-r{ratio}"), 0.0
        else:
            argv = [args.bosch, cmd, *common, "--ratio", str(ratio), "--out", prefix, *extra]
            if b:
                argv += ["--budget", str(b)]
            _, wall = run(argv, log, env)
        with open(prefix + ".json") as f:
            res = json.load(f)
        acc, full, swa = heldout(args, prefix, log, env)
        multi = heldout(args, prefix, log, env, multi_task) if multi_task else (None,) * 3
        hop = heldout(args, prefix, log, env, hop_task) if hop_task else (None,) * 3
        return job, res, wall, (acc, full, swa), multi, hop

    # Independent runs share the machine: --jobs workers, each with
    # OMP_NUM_THREADS = cpus / jobs (wall times are measured under that load).
    jobs = [] if args.speed_only else [(label, cmd, extra, b, ratio) for ratio in ratios
                                       for label, cmd, extra, b in methods]
    env = dict(os.environ, OMP_NUM_THREADS=str(max(1, (os.cpu_count() or 1) // args.jobs)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for job, res, wall, (acc, full, swa), multi, hop in pool.map(one, jobs):
            label, _, _, _, ratio = job
            anchors = (full, swa)
            anchors_multi = multi[1:]
            anchors_hop = hop[1:]
            rows[(label, ratio)] = {"acc": acc, "multi": multi[0], "hop": hop[0],
                                    "calib": res["score"]["raw"],
                                    "evals": res["evaluations"]["total"], "wall": wall,
                                    "units": units_of(res)}
            if label == "BOSCH (default budget)":
                bosch_sets[ratio] = units_of(res)
            print(f"{label:28s} rho {ratio:<6} held-out {acc:.3f} multi {multi[0]}  calib {res['score']['raw']:.4f}"
                  f"  evals {res['evaluations']['total']:5d}  {wall:7.1f} s", flush=True)
    t_table = time.monotonic() - t_start

    faithful = []
    for ratio in [float(r) for r in args.faithful_ratios.split(",") if r]:
        runs = {}
        for name, extra in (("default", []),
                            ("paper-faithful", ["--strategy", "mads", "--batch-size", "1",
                                                "--eval-batch", "1", "--no-prefix-cache"])):
            prefix = os.path.join(args.out, f"speed-{name}-r{ratio}")
            _, wall = run([args.bosch, "search", *common, "--ratio", str(ratio), "--budget",
                           str(budget), "--out", prefix, *extra], log,
                          dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count() or 1)))
            with open(prefix + ".json") as f:
                res = json.load(f)
            runs[name] = (res, wall, prefix)
        target = min(r[0]["score"]["raw"] for r in runs.values())
        line = {"ratio": ratio, "target": target}
        for name, (res, wall, prefix) in runs.items():
            n, w = reach(prefix + ".history.jsonl", target, res["swa_units"])
            ev = evaluator_time(prefix + ".history.jsonl")
            line[name] = {"final": res["score"]["raw"], "evals": n, "wall_to_target": w,
                          "total_evals": res["evaluations"]["total"], "total_wall": wall,
                          "per_eval": ev[-1][1] / len(ev)}
        faithful.append(line)
        d, p = line["default"], line["paper-faithful"]
        print(f"speed rho {ratio}: target {target:.4f}; default {d['evals']} evals {d['wall_to_target']} s;"
              f" paper-faithful {p['evals']} evals {p['wall_to_target']} s", flush=True)
    total = time.monotonic() - t_start

    if args.speed_only:
        md = render_speed(faithful, args, budget, total)
    else:
        md = render(args, budget, ratios, methods, rows, bosch_sets, anchors, faithful, total,
                    t_table, "acc", "single-needle", sugg.get("heldout", "heldout"))
    if multi_task and not args.speed_only:
        md += "\n" + table(ratios, methods, rows, anchors_multi, "multi",
                           "4-needle (one queried)", sugg["heldout_multi"], args)
    if hop_task and not args.speed_only:
        md += "\n" + table(ratios, methods, rows, anchors_hop, "hop", "two-hop",
                           sugg["heldout_two_hop"], args)
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)


def table(ratios, methods, rows, anchors, key, what, task, args):
    out = []
    out.append("| method | " + " | ".join(f"rho {r}" for r in ratios) + " |")
    out.append("|---|" + "---|" * len(ratios))
    for label, *_ in methods:
        cells = []
        for r in ratios:
            x = rows[(label, r)]
            # None when --only left no baseline to compare with: no bold.
            best_base = max((rows[(m[0], r)][key] for m in methods if m[1] == "baseline"),
                            default=None)
            mark = ("**" if best_base is not None and x[key] >= best_base
                    and label.startswith("BOSCH") else "")
            cells.append(f"{mark}{x[key]:.3f}{mark}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(f"Held-out {what} NIAH accuracy (exact match, `{task}` of {args.model}); full "
               f"attention {anchors[0]:.3f}, every unit SWA {anchors[1]:.3f}. Bold: a BOSCH row at "
               "or above the best baseline (static or layer pattern) of its column.")
    out.append("")
    return "\n".join(out) + "\n"


def speed_section(faithful):
    out = []
    if not faithful:
        return out
    out.append("")
    out.append("Paper-faithful configuration (`--strategy mads --batch-size 1 --eval-batch 1 "
               "--no-prefix-cache`) against the default, same budget, run alone with every "
               "CPU; target = the lower of the two final calibration scores; evaluations and "
               "evaluator seconds to first reach it, then each run's totals and evaluator "
               "seconds per evaluation:")
    out.append("")
    out.append("| rho | target | default: evals / s | faithful: evals / s | speed-up to target | "
               "final calib default / faithful | evals run default / faithful | "
               "s per eval default / faithful (ratio) | command wall s default / faithful |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for f in faithful:
        d, p = f["default"], f["paper-faithful"]
        sp = (p["wall_to_target"] / d["wall_to_target"]
              if d["wall_to_target"] and p["wall_to_target"] else float("nan"))
        out.append(f"| {f['ratio']} | {f['target']:.4f} | {d['evals']} / {d['wall_to_target']:.1f} | "
                   f"{p['evals']} / {p['wall_to_target']:.1f} | {sp:.2f}x | "
                   f"{d['final']:.4f} / {p['final']:.4f} | {d['total_evals']} / "
                   f"{p['total_evals']} | {d['per_eval']:.3f} / {p['per_eval']:.3f} "
                   f"({p['per_eval'] / d['per_eval']:.2f}x) | {d['total_wall']:.0f} / "
                   f"{p['total_wall']:.0f} |")
    return out


def render_speed(faithful, args, budget, total):
    out = speed_section(faithful)
    out.append("")
    out.append(f"Default budget {budget}; seed {args.seed}; {total / 60:.1f} min on "
               f"{platform.machine()} with {os.cpu_count()} CPUs.")
    return "\n".join(out) + "\n"


def render(args, budget, ratios, methods, rows, bosch_sets, anchors, faithful, total, t_table,
           key, what, task):
    out = [table(ratios, methods, rows, anchors, key, what, task, args)]
    out.append("Calibration score, evaluations and wall time of each selection:")
    out.append("")
    out.append("| method | " + " | ".join(f"rho {r}: calib / evals / s" for r in ratios) + " |")
    out.append("|---|" + "---|" * len(ratios))
    for label, *_ in methods:
        cells = [f"{rows[(label, r)]['calib']:.4f} / {rows[(label, r)]['evals']} / "
                 f"{rows[(label, r)]['wall']:.0f}" for r in ratios]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")
    if all(r in bosch_sets for r in ratios):
        out += turnover_section(ratios, bosch_sets)
    out += speed_section(faithful)
    out.append("")
    out.append(f"Default budget {budget}; seed {args.seed}; {args.jobs} table run(s) at a time "
               f"(wall times above are under that load); table {t_table / 60:.1f} min, total "
               f"{total / 60:.1f} min on {platform.machine()} with {os.cpu_count()} CPUs.")
    return "\n".join(out) + "\n"


def turnover_section(ratios, bosch_sets):
    out = []
    out.append("Head turnover of BOSCH (default budget) between consecutive ratios: Jaccard "
               "distance of the two SWA unit sets, the value it would have if the smaller set "
               "were nested in the larger (1 - |small|/|large|), and how many units of the "
               "smaller set are full at the larger ratio (0 = nested):")
    out.append("")
    out.append("| from | to | Jaccard distance | nested-sets value | units of the smaller set dropped |")
    out.append("|---|---|---|---|---|")
    for a, b in zip(ratios, ratios[1:]):
        A, B = bosch_sets[a], bosch_sets[b]
        nested = 1.0 - min(len(A), len(B)) / max(len(A), len(B)) if (A or B) else 0.0
        small, large = (A, B) if len(A) <= len(B) else (B, A)
        out.append(f"| {a} | {b} | {jaccard_distance(A, B):.3f} | {nested:.3f} | "
                   f"{len(small - large)} |")
    return out


if __name__ == "__main__":
    main()
