#!/usr/bin/env python3
"""A whole search, costed (issue 34): the evaluations a default search
really makes, priced through the real evaluator at real layer shapes.

Three steps, each printed with how it was measured:

1. Record. The library's default search (the options of `bosch search`:
   budget, seed, strategy auto, confirm_top 1, screen fidelity) runs on a
   testbed landscape of the model's shape (layers x KV groups, the target
   SWA ratio) through a request batch evaluator that records every request
   (mask, fidelity, draw) in the order and batches the library asks them.
   The time the library spends between returning a batch's scores and
   asking the next (the search's own cost, Python binding included) is
   measured here too.
2. Calibrate. A random checkpoint with --calib-layers layers of the shape
   (the build's cli_make_tiny_checkpoint) opened by libbosch-torch on the
   device; an Evaluator over one NIAH prompt of --context tokens times
   Evaluator.score (best of --reps after a warm-up):
     h    = an all-full mask with the prefix cache on and the last layer
            over every position (BOSCH_TORCH_LAST_LAYER=all: every layer's
            output cached; the cached input, final norm, LM head at the
            scored positions and the metric; no layer runs),
     c(s) = (time of a mask with s sliding groups in every layer, prefix
            cache off, every layer over every position
            (BOSCH_TORCH_LAST_LAYER=all), minus h) / calib-layers, for s in
            {0, 1, G/2, G-1, G} (linear in between): one layer's cost per
            prompt,
     c_last(s) = the last layer at the scored positions only (the
            evaluator's default, whose cache holds the layers below the
            last): the time of a mask all full below the last layer and
            with s groups sliding there, from the warm cache, minus h.
3. Price. Each recorded request costs k x (sum over layers l >= start of
   c(s_l) + h), the last layer at c_last(s) (and, in the column "last layer
   over every position", at c(s): that lever off): k = max(1, ceil(fidelity
   x prompts)) prompts, s_l its
   sliding groups in layer l, `start` the evaluator's start layer (the
   highest cached layer not above the mask's first SWA layer, with the
   cache's layers chosen as libbosch-torch chooses them for a budget of
   --cache-gib: evenly spaced, prompts x context x hidden x dtype bytes
   each), plus building that cache once (every prompt through the layers
   below the highest cached one, all full). The sum is device-seconds per
   search; a row per cache budget shows that lever on and off.

--replay (the check of step 3, at a size where it can run): the recorded
requests also go through the real evaluator on the calibration model (its
layer count must be the shape's), prompts --prompts, prefix cache
--cache-gib's first value, and the measured total is printed beside the
priced one.

  search_cost.py --make-checkpoint BIN [--device cuda] [--dtype bf16]
      [--shapes 1.7b,8b,14b,30b-a3b] [--context 32768] [--prompts 64]
      [--budget 500] [--rho 0.875] [--window 1024] [--sink 4] [--seed 1]
      [--family energy] [--screen 1] [--stop-tolerance 0] [--cache-gib 0,8,96]
      [--calib-layers 2] [--vocab 8192] [--reps 2] [--replay] [--dir TMP]
      [--out FILE.md]

30b-a3b is Qwen3-30B-A3B's layer (Qwen3MoeForCausalLM: 48 layers, 32 query
/ 4 KV heads, 128 experts of 768, 8 per token) with random weights, so the
router spreads tokens over the experts about evenly; toy-moe is a CPU-sized
MoE (8 experts, 2 per token).
"""
import argparse
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
sys.path.insert(0, HERE)

from qwen3_shapes import SHAPES, add_common_arguments, write_checkpoint  # noqa: E402

DTYPE_BYTES = {"f32": 4, "bf16": 2}


def record(bosch, L, G, r, a):
    """The default search's requests on a testbed of shape L x G: a list of
    batches, each a list of (mask bytes, fidelity, draw); the working mask
    and the best (incumbent) mask the progress callback reported before
    each batch (None before the first); the library's own time (the
    evaluator's and the progress callback's excluded); the testbed's clean
    score of the result."""
    prob = bosch.Problem(L, G, r, ratio=a.rho)
    tb = bosch.Testbed(L, G, seed=a.seed, family=a.family)
    batches, working, best = [], [], []
    outside = [0.0]  # time spent in the evaluator and the progress callback
    current = [None, None]  # working, best

    def progress(p):
        t0 = time.perf_counter()
        current[0], current[1] = p.working_mask, p.best_mask
        outside[0] += time.perf_counter() - t0

    def evaluate(masks, fids, draws):
        t0 = time.perf_counter()
        working.append(current[0])
        best.append(current[1])
        batches.append([(bytes(m), float(f), int(d)) for m, f, d in zip(masks, fids, draws)])
        s = tb.score_requests(masks, fids, draws)
        outside[0] += time.perf_counter() - t0
        return s

    with bosch.Optimizer(prob) as opt:
        opt.set_option("budget", a.budget)
        opt.set_option("seed", a.seed)
        opt.set_option("confirm_top", 1)
        opt.set_screen_fidelity(a.screen)
        if a.stop_tolerance > 0:
            opt.set_stop_tolerance(a.stop_tolerance)
        opt.set_request_batch_evaluator(evaluate)
        opt.set_progress(progress)
        t0 = time.perf_counter()
        res = opt.optimize()
        total = time.perf_counter() - t0
        quality = tb.score_clean(res.mask)
    return batches, working, best, total - outside[0], quality


def layer_groups(mask, L, G):
    """Sliding groups per layer of a mask (unit u = layer u // G)."""
    return [sum(mask[l * G:(l + 1) * G]) for l in range(L)]


def cached_layers(L, per_layer_bytes, budget_bytes, last_at_rows=True):
    """The layers whose inputs libbosch-torch caches for a budget
    (Evaluator::build_cache): every layer 1..top when they fit, else `fit`
    evenly spaced ones; top = L - 1 with the last layer at the scored
    positions (every candidate runs its last layer), else L."""
    top = L - 1 if last_at_rows else L
    fit = budget_bytes // per_layer_bytes if per_layer_bytes > 0 else 0
    if fit >= top:
        return set(range(1, top + 1))
    return {i * top // (fit + 1) for i in range(1, fit + 1)} - {0}


def start_layer(mask, L, G, cache, ref=None):
    """Evaluator::start_layer: the highest cached layer not above the first
    layer where `mask` differs from the reference (None: all full)."""
    first = next((u // G for u in range(L * G) if bool(mask[u]) != bool(ref and ref[u])), L)
    for l in range(min(first, L), 0, -1):
        if l in cache:
            return l
    return 0


def first_change(batches, refs, L, G):
    """Mean over the evaluations with a reference (refs[i] for batch i) of
    the first layer where the mask differs from it: how deep a cache of the
    reference's hidden states lets an evaluation start. A statistic of the
    recorded search, not a price."""
    firsts = [next((u // G for u in range(L * G) if mask[u] != ref[u]), L)
              for batch, ref in zip(batches, refs) if ref is not None
              for mask, _f, _d in batch]
    return sum(firsts) / len(firsts) if firsts else float("nan")


def price(batches, refs, L, G, prompts, c, h, cache, c_last=None):
    """Device-seconds of the recorded requests (see the docstring), the
    cache's builds included; also the layers run per evaluation on average.
    refs[i]: the evaluator's reference (bosch_torch_evaluator_set_reference)
    while batch i is scored, None = all full; every change rebuilds the
    cache (every prompt through the layers below the highest cached one,
    under the reference's masks). c_last[s]: the last layer's cost (None:
    c, the last layer over every position)."""
    total, layers_run, n = 0.0, 0, 0
    built, current = False, None  # the evaluator starts all full
    for i, batch in enumerate(batches):
        ref = refs[i]
        if ref != current:
            built, current = False, ref
        if cache and not built:
            sg = layer_groups(ref, L, G) if ref else [0] * L
            total += prompts * sum(c[sg[l]] for l in range(max(cache)))
            built = True
        for mask, fid, _draw in batch:
            k = max(1, math.ceil(fid * prompts - 1e-9))
            st = start_layer(mask, L, G, cache, ref)
            sg = layer_groups(mask, L, G)
            total += k * (sum(c[sg[l]] for l in range(st, L - 1)) + h)
            if st < L:
                total += k * (c_last or c)[sg[L - 1]]
            layers_run += L - st
            n += 1
    return total, layers_run / max(1, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(ap, sorted(DTYPE_BYTES))
    ap.add_argument("--shapes", default="1.7b,8b,14b,30b-a3b")
    ap.add_argument("--context", type=int, default=32768)
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument("--rho", type=float, default=0.875)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--family", default=None, help="testbed family (default: energy)")
    ap.add_argument("--screen", type=float, default=1.0, help="screen fidelity of stage 3")
    ap.add_argument("--stop-tolerance", type=float, default=0.0,
                    help="the stopping rule of the recorded search (0 = off)")
    ap.add_argument("--cache-gib", default="0,8,96",
                    help="prefix cache budgets to price (GiB, comma-separated)")
    ap.add_argument("--calib-layers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--replay", action="store_true")
    a = ap.parse_args()
    if a.calib_layers < 1 or a.prompts < 1 or a.context < 2:
        ap.error("--calib-layers, --prompts must be >= 1 and --context >= 2")

    import bosch
    from bosch import backend

    if a.device.startswith("cuda") and not backend.cuda_available():
        print("search_cost: this libbosch-torch sees no CUDA device", file=sys.stderr)
        return 1
    lines = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    budgets = [float(x) for x in a.cache_gib.split(",")]
    work = a.dir or tempfile.mkdtemp(prefix="bosch-search-cost-")
    try:
        out(f"# A whole search, costed ({a.device}, {a.dtype})\n")
        out(f"search_cost.py: default search (budget {a.budget}, seed {a.seed}, screen "
            f"fidelity {a.screen:g}, stop tolerance {a.stop_tolerance:g}, target rho "
            f"{a.rho:g}) recorded on the testbed "
            f"({a.family or 'energy'}) of each shape; priced at {a.context} tokens x "
            f"{a.prompts} prompts, window {a.window}, sink {a.sink}, from one-prompt "
            f"timings of {a.calib_layers} random layers of the shape (best of {a.reps} "
            f"after a warm-up); libbosch-torch threads {backend.get_threads()}.\n")
        rows, calib_rows = [], []
        for name in a.shapes.split(","):
            sh = SHAPES[name]
            L, G, r = sh["layers"], sh["kv_heads"], sh["heads"] // sh["kv_heads"]
            batches, working, best, lib_s, quality = record(bosch, L, G, r, a)
            references = {"all full": [None] * len(batches), "incumbent": best,
                          "working mask": working}
            first = (first_change(batches, references["incumbent"], L, G),
                     first_change(batches, working, L, G))
            n_eval = sum(len(b) for b in batches)
            sizes = {}
            for b in batches:
                sizes[len(b)] = sizes.get(len(b), 0) + 1
            nL = L if a.replay else min(a.calib_layers, L)
            ck = os.path.join(work, name)
            write_checkpoint(a.make_checkpoint, ck, sh, nL, a.vocab, a.dtype)
            with backend.Model(ck, device=a.device, dtype=a.dtype) as model, \
                    backend.Task.niah(a.vocab, a.context, 1, seed=1) as task:
                def timed(ev, mask):
                    ev.score(mask)
                    best = 1e300
                    for _ in range(a.reps):
                        t0 = time.perf_counter()
                        ev.score(mask)
                        best = min(best, time.perf_counter() - t0)
                    return best

                U = nL * G
                pts = sorted({0, 1, G // 2, G - 1, G})
                cs, cls = {}, {}
                # h and c(s) with every layer over every position (the
                # variable is read when an evaluator opens).
                os.environ["BOSCH_TORCH_LAST_LAYER"] = "all"
                try:
                    with backend.Evaluator(model, task, window=a.window, sink=a.sink,
                                           prefix_cache=True) as ev:
                        h = timed(ev, bytes(U))
                    with backend.Evaluator(model, task, window=a.window, sink=a.sink,
                                           prefix_cache=False) as ev:
                        for s in pts:
                            mask = bytes(([1] * s + [0] * (G - s)) * nL)
                            cs[s] = max(0.0, (timed(ev, mask) - h) / nL)
                finally:
                    del os.environ["BOSCH_TORCH_LAST_LAYER"]
                # c_last(s): the default evaluator caches the layers below the
                # last (all full) and runs every mask's last layer at the
                # scored positions.
                with backend.Evaluator(model, task, window=a.window, sink=a.sink,
                                       prefix_cache=True) as ev:
                    for s in pts:
                        last = [1] * s + [0] * (G - s)
                        cls[s] = max(0.0, timed(ev, bytes([0] * (U - G) + last)) - h)

                def interpolate(at):  # linear between the measured points
                    out = []
                    for s in range(G + 1):
                        lo = max(p for p in pts if p <= s)
                        hi = min(p for p in pts if p >= s)
                        out.append(at[lo] if hi == lo else
                                   at[lo] + (at[hi] - at[lo]) * (s - lo) / (hi - lo))
                    return out
                c, c_last = interpolate(cs), interpolate(cls)
                calib_rows.append((name, h, cs, cls))
                per_layer = a.prompts * a.context * sh["hidden"] * DTYPE_BYTES[a.dtype]
                priced = []
                for gib in budgets:
                    cache = cached_layers(L, per_layer, int(gib * (1 << 30)))
                    cache_off = cached_layers(L, per_layer, int(gib * (1 << 30)), False)
                    for kind in (references if cache else ["all full"]):
                        s, run = price(batches, references[kind], L, G, a.prompts, c, h, cache,
                                       c_last)
                        s_off, _ = price(batches, references[kind], L, G, a.prompts, c, h,
                                         cache_off)
                        priced.append((gib, len(cache), kind, s, run, s_off))
                replay = {}
                if a.replay:
                    # The recorded requests through the real evaluator, as the
                    # library asked them, for each priced row of the first
                    # budget: the host's set_reference whenever the row's
                    # reference changes before a batch (the evaluator reads
                    # its cache budget from the environment when it opens).
                    os.environ["BOSCH_TORCH_CACHE_MB"] = str(int(budgets[0] * 1024))
                    for gib, _n, kind, _s, _r, _o in priced:
                        if gib != budgets[0]:
                            continue
                        refs = references[kind]
                        with backend.Task.niah(a.vocab, a.context, a.prompts,
                                               seed=2) as rtask, \
                                backend.Evaluator(model, rtask, window=a.window, sink=a.sink,
                                                  prefix_cache=gib > 0) as ev:
                            t0 = time.perf_counter()
                            current = None  # the evaluator's: all full
                            for i, b in enumerate(batches):
                                if refs[i] != current:
                                    ev.set_reference(refs[i])
                                    current = refs[i]
                                ev.score_requests([m for m, _, _ in b], [f for _, f, _ in b],
                                                  [d for _, _, d in b])
                            replay[kind] = time.perf_counter() - t0
                rows.append((name, L, G, n_eval, sizes, lib_s, quality, first, priced, replay))
        out("Calibration (one prompt; seconds): h = cached input to scores, no layer run; "
            "c(s) = one layer with s of G groups sliding; c_last(s) = the last layer at the "
            "scored positions only.\n")
        out("| shape | h | " + " | ".join(f"c(s), s = {s}" for s in ("0", "1", "G/2", "G-1", "G"))
            + " | c(G) / c(0) | c_last(0) | c_last(G) | c_last(0) / c(0) |")
        out("|---|---|---|---|---|---|---|---|---|---|---|")

        def ratio(x, y):
            return f"{x / y:.2f}" if y > 0 else ""
        for name, h, cs, cls in calib_rows:
            G = SHAPES[name]["kv_heads"]
            vals = [cs[s] for s in (0, 1, G // 2, G - 1, G)]
            out(f"| {name} | {h:.4f} | " + " | ".join(f"{v:.4f}" for v in vals) +
                f" | {ratio(cs[G], cs[0])} | {cls[0]:.4f} | {cls[G]:.4f} | "
                f"{ratio(cls[0], cs[0])} |")
        out("\nThe search (recorded on the testbed, priced per cache budget):\n")
        out("| shape | units | evaluations | batches (size: count) | result's clean score | "
            "library s (search's own time) | library ms / evaluation | first layer differing "
            "from the incumbent / the working mask (mean) | cache GiB | layers cached | cache reference | "
            "layers run / evaluation | device-s per search | device-hours | device-s, last layer "
            "over every position |" +
            (" replay measured s | replay / priced |" if a.replay else ""))
        out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" +
            ("---|---|" if a.replay else ""))
        for name, L, G, n_eval, sizes, lib_s, quality, first, priced, replay in rows:
            sz = ", ".join(f"{k}: {v}" for k, v in sorted(sizes.items()))
            for i, (gib, ncache, kind, s, run, s_off) in enumerate(priced):
                head = (f"| {name} | {L}x{G} | {n_eval} | {sz} | {quality:.4f} | {lib_s:.3f} | "
                        f"{1e3 * lib_s / max(1, n_eval):.3f} | {first[0]:.1f} / {first[1]:.1f} of {L} |" if i == 0
                        else "| | | | | | | | |")
                line = (f"{head} {gib:g} | {ncache} | {kind} | {run:.1f} | {s:.1f} | "
                        f"{s / 3600:.2f} | {s_off:.1f} |")
                if a.replay:
                    r = replay.get(kind) if gib == budgets[0] else None
                    line += f" {r:.2f} | {r / s:.2f} |" if r is not None else " | |"
                out(line)
    finally:
        if not a.dir:
            shutil.rmtree(work, ignore_errors=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
