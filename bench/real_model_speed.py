#!/usr/bin/env python3
"""Seconds per evaluation on a real model (issue 52, part 7): libbosch-torch's
evaluator against the same evaluation written plainly with transformers
(bosch.hf.Evaluator), side by side in one run, and what libbosch-torch's
prefix cache and candidate batching change.

One evaluation scores one unit mask on the task's prompts (metric logprob).
The masks are a search's: each differs from a reference (the incumbent,
here a fixed mask at the ratio) in one layer group of `--group` layers, as
BOSCH's stage 3 moves do, so the prefix cache can start past the layers
before the group. Each configuration runs in its own child process (the
model loaded there, untimed); the child scores other masks of the same
kind once to warm up, then the masks `--reps` times, and reports the median
seconds per mask. The
configurations take turns, round after round, so that load on a shared
machine falls on all of them.

  /opt/libbosch-torch2/bin/python bench/real_model_speed.py --model smollm2/f32 \\
      --lib BUILD/lib/torch/libbosch-torch.so.0 [--prompts 4] [--context 512] [--masks 6]

Run with a Python that has PyTorch 2.x and transformers (the one libbosch-
torch was built against). Prints what it measured and how; nothing else.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))

CHILD = r"""
import json, sys, time
req = json.loads(sys.stdin.read())
sys.path.insert(0, req["pypath"])
import os
from bosch import text
tok = text.Tokenizer(os.path.join(req["model"], "tokenizer.json"))
tt = text.TextTask.ruler(tok, "niah_single_2", req["context"], req["prompts"], 0,
                         depth_min=0.0, depth_max=req["depth_max"])
masks, warm, ref = req["masks"], req["warm"], req["reference"]
cfg = req["config"]
if cfg["engine"] == "libbosch-torch":
    from bosch import backend
    backend.set_threads(req["threads"])
    m = backend.Model(req["model"], device="cpu", dtype="f32")
    task = backend.Task.from_text(tt, tok)
    ev = backend.Evaluator(m, task, window=req["window"], sink=req["sink"], metric="logprob")
    ev.set_prefix_cache(cfg["prefix_cache"])
    ev.set_batch(cfg["batch"])
    if cfg["prefix_cache"]:
        ev.set_reference(ref)
    def score(ms):
        return ev.score_batch(ms)
else:
    import torch, transformers
    from bosch import hf
    torch.set_num_threads(req["threads"])
    model = transformers.AutoModelForCausalLM.from_pretrained(req["model"],
                                                              dtype=torch.float32).eval()
    task = hf.Task.from_text(tt, tok)
    ev = hf.Evaluator(model, task, req["window"], req["sink"], metric="logprob",
                      batch=cfg["batch"])
    def score(ms):
        return ev(ms)
b = cfg["batch"]
def run(ms):
    out = []
    for i in range(0, len(ms), b):
        out += score(ms[i:i + b])
    return out
run(warm)                          # warm-up on other masks (and the prefix cache built)
times = []
for _ in range(req["reps"]):
    t0 = time.perf_counter()
    first = run(masks)
    times.append((time.perf_counter() - t0) / len(masks))
json.dump({"times": times, "scores": first}, sys.stdout)
"""

CONFIGS = [
    ("libbosch-torch, prefix cache, batch 1", {"engine": "libbosch-torch", "prefix_cache": True,
                                               "batch": 1}),
    ("libbosch-torch, no prefix cache, batch 1", {"engine": "libbosch-torch",
                                                  "prefix_cache": False, "batch": 1}),
    ("libbosch-torch, prefix cache, batch 3", {"engine": "libbosch-torch", "prefix_cache": True,
                                               "batch": 3}),
    ("transformers (bosch.hf.Evaluator), batch 1", {"engine": "hf", "batch": 1}),
    ("transformers (bosch.hf.Evaluator), batch 3", {"engine": "hf", "batch": 3}),
]


def search_masks(layers, groups, ratio, group, count, seed):
    """A reference at `ratio` and `count` masks, each the reference with one
    SWA unit moved to a full unit inside one group of `group` layers (the
    same ratio), the group chosen at random past the first half."""
    rng = random.Random(seed)
    units = layers * groups
    ref = [0] * units
    for u in rng.sample(range(units), round(ratio * units)):
        ref[u] = 1
    out = []
    while len(out) < count:
        g0 = rng.randrange(layers // 2, layers - group + 1)
        span = range(g0 * groups, (g0 + group) * groups)
        on = [u for u in span if ref[u]]
        off = [u for u in span if not ref[u]]
        if on and off:
            m = list(ref)
            m[rng.choice(on)], m[rng.choice(off)] = 0, 1
            out.append(m)
    return ref, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--lib", required=True, help="libbosch-torch.so.0 of a PyTorch 2 build")
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--masks", type=int, default=6)
    ap.add_argument("--group", type=int, default=3, help="layers per move group")
    ap.add_argument("--ratio", type=float, default=0.75)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    with open(os.path.join(args.model, "config.json")) as f:
        cfg = json.load(f)
    L, G = cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    ref, both = search_masks(L, G, args.ratio, args.group, 2 * args.masks, 0)
    masks, warm = both[:args.masks], both[args.masks:]
    libdir = os.path.dirname(os.path.abspath(args.lib))
    env = dict(os.environ, BOSCH_TORCH_LIBRARY=os.path.abspath(args.lib),
               BOSCH_LIBRARY=os.path.join(os.path.dirname(libdir), "libbosch.so.0"),
               BOSCH_TEXT_LIBRARY=os.path.join(os.path.dirname(libdir), "text",
                                               "libbosch-text.so.0"),
               OMP_NUM_THREADS=str(args.threads), OMP_WAIT_POLICY="PASSIVE")
    sys.path.insert(0, os.path.join(ROOT, "tools", "real_models"))
    from smollm2 import needle_depth_max
    req = {"depth_max": needle_depth_max(args.window, args.context), "model": args.model, "pypath": os.path.join(ROOT, "bindings", "python"),
           "context": args.context, "prompts": args.prompts, "window": args.window,
           "sink": args.sink, "masks": masks, "warm": warm, "reference": ref, "reps": args.reps,
           "threads": args.threads}
    print(f"model {args.model}: {L} layers x {G} KV heads; task niah_single_2, "
          f"{args.prompts} prompts of {args.context} tokens, metric logprob, window "
          f"{args.window}, sink {args.sink}; {len(masks)} masks, each a reference at rho "
          f"{args.ratio} with one unit moved inside a group of {args.group} layers in the "
          f"upper half; {args.rounds} rounds x {args.reps} timed pass(es), configurations "
          f"in turn; {args.threads} threads", flush=True)
    times = {name: [] for name, _ in CONFIGS}
    scores = {}
    for _ in range(args.rounds):
        for name, c in CONFIGS:
            r = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(dict(req, config=c)),
                               capture_output=True, text=True, env=env)
            if r.returncode != 0:
                sys.exit(f"{name}: {r.stderr[-2000:]}")
            out = json.loads(r.stdout)
            times[name] += out["times"]
            scores[name] = out["scores"]
    base = scores[CONFIGS[0][0]]
    plain = statistics.median(times["transformers (bosch.hf.Evaluator), batch 1"])
    print("| configuration | s per evaluation (median) | runs | vs transformers batch 1 | "
          "max score difference from the first row |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in CONFIGS:
        med = statistics.median(times[name])
        diff = max(abs(a - b) for a, b in zip(scores[name], base))
        print(f"| {name} | {med:.2f} | {len(times[name])} | {plain / med:.2f}x | {diff:.1e} |")


if __name__ == "__main__":
    main()
