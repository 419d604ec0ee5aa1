#!/usr/bin/env python3
"""Time one evaluation of real Qwen3 layer shapes against the SWA share
(issue 13's device check; tools/cuda/check.sh runs it on CUDA, CI runs it on
the CPU at a toy size as a dry run).

For each shape it writes a random checkpoint (cli_make_tiny_checkpoint, the
build's own writer: the shape's layers, hidden size, heads, MLP; vocabulary
--vocab), opens it through the bosch Python package (ctypes only: no torch
import, so a pip PyTorch and the libtorch libbosch-torch was built against
never share a process), builds a NIAH task of one prompt per context, and
times Evaluator.score of a mask with round(rho * units) SWA units spread
over layers and groups: best of --reps after a warm-up. A second table
scores 8 masks with one candidate per forward and with 8 per forward
(the batch setting per device, docs/torch.md).

  time_eval.py --make-checkpoint BIN [--device cuda] [--dtype bf16]
      [--shapes 1.7b,8b] [--layers 4] [--contexts 8192,32768]
      [--rhos 0,0.5,0.875] [--window 1024] [--sink 4] [--vocab 8192]
      [--reps 2] [--dir TMP] [--out FILE.md]

The time of a whole model is the per-layer time times its layer count plus
the embedding / LM head, which --layers N measures on N layers; the table
gives both the measured N-layer time and that extrapolation.
"""
import argparse
import os
import random
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
sys.path.insert(0, HERE)

from qwen3_shapes import SHAPES, add_common_arguments, write_checkpoint  # noqa: E402



def spread_mask(layers, groups, k):
    """k SWA units of layers x groups, every (units/k)-th (1 = SWA)."""
    units = layers * groups
    m = bytearray(units)
    for i in range(k):
        m[(i * units) // k] = 1
    return bytes(m)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(ap)
    ap.add_argument("--shapes", default="1.7b,8b")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--contexts", default="8192,32768")
    ap.add_argument("--rhos", default="0,0.5,0.875")
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()

    import bosch  # noqa: F401  (the core, loaded before the backend)
    from bosch import backend

    if a.device.startswith("cuda") and not backend.cuda_available():
        print("time_eval: this libbosch-torch sees no CUDA device", file=sys.stderr)
        return 1
    lines = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    work = a.dir or tempfile.mkdtemp(prefix="bosch-time-eval-")
    try:
        contexts = [int(c) for c in a.contexts.split(",")]
        rhos = [float(r) for r in a.rhos.split(",")]
        out(f"# One evaluation against the SWA share ({a.device}, {a.dtype})\n")
        out(f"time_eval.py: random weights, {a.layers} layers of each shape (vocabulary "
            f"{a.vocab}); NIAH task, one prompt of each context; window {a.window}, sink "
            f"{a.sink}; best of {a.reps} after a warm-up; libbosch-torch threads "
            f"{backend.get_threads()}.\n")
        out("| shape | tokens | rho | SWA units | s (measured layers) | of rho 0 | "
            "s (whole model, extrapolated) |")
        out("|---|---|---|---|---|---|---|")
        batch_rows = []
        for name in a.shapes.split(","):
            sh = SHAPES[name]
            L = min(a.layers, sh["layers"]) if a.layers > 0 else sh["layers"]
            ck = os.path.join(work, name)
            write_checkpoint(a.make_checkpoint, ck, sh, L, a.vocab, a.dtype)
            with backend.Model(ck, device=a.device, dtype=a.dtype) as model:
                G = model.kv_groups
                U = L * G
                for T in contexts:
                    with backend.Task.niah(a.vocab, T, 1, seed=1) as task, \
                            backend.Evaluator(model, task, window=a.window, sink=a.sink,
                                              metric="logprob", prefix_cache=False) as ev:
                        t_rho0 = None
                        for rho in rhos:
                            k = int(rho * U + 0.5)
                            mask = spread_mask(L, G, k)
                            ev.score(mask)  # warm-up
                            best = 1e300
                            for _ in range(a.reps):
                                t0 = time.perf_counter()
                                ev.score(mask)
                                best = min(best, time.perf_counter() - t0)
                            t_rho0 = best if t_rho0 is None else t_rho0
                            # per layer, scaled to the model's layer count (the
                            # embedding and LM head are a small, fixed share)
                            whole = best * sh["layers"] / L
                            out(f"| {name} | {T} | {rho:g} | {k}/{U} | {best:.4f} | "
                                f"{best / t_rho0:.2f} | {whole:.3f} |")
                        # one vs eight candidates per forward, 8 masks at rho 0.5
                        rng = random.Random(5)
                        masks = []
                        for _ in range(8):
                            m = bytearray(U)
                            for u in rng.sample(range(U), U // 2):
                                m[u] = 1
                            masks.append(bytes(m))
                        times = {}
                        for b in (1, 8):
                            ev.set_batch(b)
                            ev.score_batch(masks)
                            t0 = time.perf_counter()
                            ev.score_batch(masks)
                            times[b] = (time.perf_counter() - t0) / len(masks)
                        ev.set_batch(1)
                        batch_rows.append((name, T, times[1], times[8]))
        out("\n| shape | tokens | s per evaluation, batch 1 | batch 8 | batch 8 / batch 1 |")
        out("|---|---|---|---|---|")
        for name, T, t1, t8 in batch_rows:
            out(f"| {name} | {T} | {t1:.4f} | {t8:.4f} | {t8 / t1:.2f} |")
    finally:
        if not a.dir:
            shutil.rmtree(work, ignore_errors=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
