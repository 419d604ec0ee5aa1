#!/usr/bin/env python3
"""Does a batch of candidates keep the GPU busy? (issue 34, item 4;
tools/cuda/check.sh runs it on CUDA.)

A random checkpoint of --layers layers of a Qwen3 shape (the build's
cli_make_tiny_checkpoint), a NIAH task of --prompts prompts of --context
tokens, and libbosch-torch's evaluator as `bosch search` opens it (prefix
cache on, one candidate per forward, the device's forward-token bound).
After a warm-up, one batch of --candidates masks (round(rho x units) SWA
units each, placed at random) is scored under torch.profiler with CUDA
activity; the kernels, copies and memsets the profiler saw are merged into
busy intervals, and the report gives the device's busy share of the span
from the first to the last of them, of the call's wall time, and the gaps
between them (count above 20 us and 1 ms, their sum, the largest).

torch is imported in this process, so the PyTorch that libbosch-torch was
built against (-Dtorch_prefix=<its site-packages>/torch) must be the one
this Python imports: one libtorch, one profiler. If the profiler saw no
kernel the run fails rather than report an idle device.

  device_busy.py --make-checkpoint BIN [--device cuda] [--dtype bf16]
      [--shape 8b] [--layers 4] [--context 8192] [--prompts 16]
      [--candidates 8] [--rho 0.875] [--window 1024] [--sink 4]
      [--vocab 8192] [--dir TMP] [--out FILE.md]
"""
import argparse
import json
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

DEVICE_EVENTS = ("kernel", "gpu_memcpy", "gpu_memset")


def busy_intervals(events):
    """(start, end) in microseconds of the union of the device events."""
    spans = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in events)
    merged = []
    for s, t in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], t)
        else:
            merged.append([s, t])
    return merged


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(ap)
    ap.add_argument("--shape", default="8b")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--rho", type=float, default=0.875)
    a = ap.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    import bosch  # noqa: F401  (the core, loaded before the backend)
    from bosch import backend

    if not a.device.startswith("cuda"):
        print("device_busy: a device timeline needs --device cuda", file=sys.stderr)
        return 1
    if not backend.cuda_available():
        print("device_busy: this libbosch-torch sees no CUDA device", file=sys.stderr)
        return 1
    sh = SHAPES[a.shape]
    L = min(a.layers, sh["layers"])
    work = a.dir or tempfile.mkdtemp(prefix="bosch-device-busy-")
    try:
        ck = os.path.join(work, a.shape)
        write_checkpoint(a.make_checkpoint, ck, sh, L, a.vocab, a.dtype)
        with backend.Model(ck, device=a.device, dtype=a.dtype) as model, \
                backend.Task.niah(a.vocab, a.context, a.prompts, seed=1) as task, \
                backend.Evaluator(model, task, window=a.window, sink=a.sink,
                                  metric="logprob") as ev:
            U = L * model.kv_groups
            rng = random.Random(5)
            masks = []
            for _ in range(a.candidates):
                m = bytearray(U)
                for u in rng.sample(range(U), int(a.rho * U + 0.5)):
                    m[u] = 1
                masks.append(bytes(m))
            ev.score_batch(masks)  # warm-up: kernels, the prefix cache
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                t0 = time.perf_counter()
                ev.score_batch(masks)
                wall_us = (time.perf_counter() - t0) * 1e6
            trace = os.path.join(work, "trace.json")
            prof.export_chrome_trace(trace)
            with open(trace) as f:
                events = [e for e in json.load(f).get("traceEvents", [])
                          if e.get("ph") == "X" and e.get("cat") in DEVICE_EVENTS]
        if not events:
            print("device_busy: the profiler saw no device kernel (is libbosch-torch built "
                  "against this Python's torch?)", file=sys.stderr)
            return 1
        merged = busy_intervals(events)
        busy = sum(t - s for s, t in merged)
        span = merged[-1][1] - merged[0][0]
        gaps = sorted((merged[i + 1][0] - merged[i][1] for i in range(len(merged) - 1)),
                      reverse=True)
        kernels = sum(1 for e in events if e["cat"] == "kernel")
        lines = [
            f"# Does a batch keep the device busy? ({a.device}, {a.dtype}, torch "
            f"{torch.__version__})\n",
            f"device_busy.py: {a.shape} layer shapes, {L} layers, random weights; NIAH "
            f"{a.prompts} prompts x {a.context} tokens; {a.candidates} candidates at rho "
            f"{a.rho:g} (window {a.window}, sink {a.sink}) scored in one batch by the "
            f"default evaluator after a warm-up, under torch.profiler (CUDA activity).\n",
            "| wall s | device span s | busy s | busy / span | busy / wall | kernels | "
            "gaps > 20 us | gaps > 1 ms | gap sum s | largest gaps ms |",
            "|---|---|---|---|---|---|---|---|---|---|",
            f"| {wall_us / 1e6:.3f} | {span / 1e6:.3f} | {busy / 1e6:.3f} | {busy / span:.4f} | "
            f"{busy / wall_us:.4f} | {kernels} | {sum(g > 20 for g in gaps)} | "
            f"{sum(g > 1000 for g in gaps)} | {sum(gaps) / 1e6:.4f} | "
            + ", ".join(f"{g / 1e3:.2f}" for g in gaps[:3]) + " |",
        ]
        print("\n".join(lines))
        if a.out:
            with open(a.out, "w") as f:
                f.write("\n".join(lines) + "\n")
    finally:
        if not a.dir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
