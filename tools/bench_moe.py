#!/usr/bin/env python3
"""The Qwen3-MoE forward, timed beside transformers' on the same checkpoint.

Writes random checkpoints (the build's cli_make_tiny_checkpoint) of
Qwen3-30B-A3B's layer shapes (hidden 2048, 32 query / 4 KV heads of 128,
experts of 768, 8 per token) with --layers layers and --experts experts, plus
a dense checkpoint of the same attention whose MLP is as wide as the 8 active
experts (8 x 768: the same matrix-product FLOPs per token, no routing), and
times one forward of one sequence of each --tokens length, logits at the last
position, all units full attention, best of --reps after a warm-up:

  libbosch-torch  bosch.backend.Model.forward (this Python, with the bosch
                  package and BOSCH_*_LIBRARY as the test suites set them)
  transformers    Qwen3MoeForCausalLM / Qwen3ForCausalLM from_pretrained,
                  eager attention, torch.no_grad (--hf-python: a Python with
                  PyTorch 2.x and transformers)

Each side runs in its own process (a pip PyTorch and another libtorch must
not share one), one after the other, with --threads intra-op threads.

  tools/bench_moe.py --make-checkpoint build/test/cli/cli_make_tiny_checkpoint \\
      --hf-python /opt/libbosch-torch2/bin/python [--layers 2] [--experts 128] \\
      [--tokens 512,2048] [--threads 2] [--reps 3] [--vocab 4096] [--dir TMP]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

SHAPE = dict(hidden=2048, heads=32, kv_heads=4, head_dim=128, moe_intermediate=768, per_tok=8)

CHILD_BOSCH = r"""
import json, sys, time
from bosch import backend
a = json.loads(sys.argv[1])
backend.set_threads(a["threads"])
out = {}
with backend.Model(a["ckpt"], device="cpu", dtype="f32") as m:
    for T in a["tokens"]:
        tok = [[(7 * i + 3) % a["vocab"] for i in range(T)]]
        m.forward(tok)
        best = 1e300
        for _ in range(a["reps"]):
            t0 = time.perf_counter()
            m.forward(tok)
            best = min(best, time.perf_counter() - t0)
        out[str(T)] = best
print(json.dumps(out))
"""

CHILD_HF = r"""
import json, sys, time
import torch
import transformers
a = json.loads(sys.argv[1])
torch.set_num_threads(a["threads"])
transformers.utils.logging.set_verbosity_error()
cls = transformers.AutoModelForCausalLM
m = cls.from_pretrained(a["ckpt"], dtype=torch.float32, attn_implementation="eager").eval()
out = {}
with torch.no_grad():
    for T in a["tokens"]:
        tok = torch.tensor([[(7 * i + 3) % a["vocab"] for i in range(T)]])
        m(tok, logits_to_keep=1)
        best = 1e300
        for _ in range(a["reps"]):
            t0 = time.perf_counter()
            m(tok, logits_to_keep=1)
            best = min(best, time.perf_counter() - t0)
        out[str(T)] = best
print(json.dumps(out))
"""


def write(make, path, args, moe):
    shutil.rmtree(path, ignore_errors=True)
    s = SHAPE
    cmd = [make, path, str(args.vocab), "--layers", str(args.layers), "--hidden", str(s["hidden"]),
           "--heads", str(s["heads"]), "--kv-heads", str(s["kv_heads"]),
           "--head-dim", str(s["head_dim"])]
    if moe:
        cmd += ["--intermediate", "6144", "--experts", str(args.experts),
                "--experts-per-tok", str(s["per_tok"]),
                "--moe-intermediate", str(s["moe_intermediate"])]
    else:
        cmd += ["--intermediate", str(s["per_tok"] * s["moe_intermediate"])]
    subprocess.run(cmd, check=True)


def child(python, code, ckpt, args):
    a = dict(ckpt=ckpt, tokens=args.token_list, threads=args.threads, reps=args.reps,
             vocab=args.vocab)
    r = subprocess.run([python, "-c", code, json.dumps(a)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit("%s failed (exit %d)" % (python, r.returncode))
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--make-checkpoint", required=True)
    ap.add_argument("--hf-python", required=True)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--tokens", default="512,2048")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--dir", default="")
    args = ap.parse_args()
    args.token_list = [int(t) for t in args.tokens.split(",")]
    work = args.dir or tempfile.mkdtemp(prefix="bosch-bench-moe-")
    try:
        moe, dense = os.path.join(work, "moe"), os.path.join(work, "dense")
        write(args.make_checkpoint, moe, args, True)
        write(args.make_checkpoint, dense, args, False)
        rows = {}
        for name, ck in (("moe", moe), ("dense", dense)):
            rows[name] = (child(sys.executable, CHILD_BOSCH, ck, args),
                          child(args.hf_python, CHILD_HF, ck, args))
        print("bench_moe: Qwen3-30B-A3B layer shapes, %d layers, %d experts (8 per token) "
              "against a dense MLP of 8 x 768; f32 on the CPU, %d threads; one sequence, "
              "logits at the last position; seconds per forward, best of %d after a warm-up"
              % (args.layers, args.experts, args.threads, args.reps))
        print("| tokens | libbosch-torch MoE | transformers MoE | ratio | libbosch-torch "
              "dense 8x768 | transformers dense | MoE / dense (libbosch-torch) |")
        print("|---|---|---|---|---|---|---|")
        for T in args.token_list:
            bm, hm = rows["moe"][0][str(T)], rows["moe"][1][str(T)]
            bd, hd = rows["dense"][0][str(T)], rows["dense"][1][str(T)]
            print("| %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |"
                  % (T, bm, hm, bm / hm, bd, hd, bm / bd))
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
