"""Qwen3 layer shapes (Hugging Face config.json), the random checkpoint
of a shape and the command-line options of the tools that time one, shared
by time_eval.py, search_cost.py and device_busy.py."""
import shutil
import subprocess

# tiny / toy: CI's dry runs (toy-moe: the same with 8 experts, 2 per token).
# 30b-a3b: Qwen3-30B-A3B's layers (Qwen3MoeForCausalLM: 128 experts of 768,
# 8 per token, every layer sparse).
SHAPES = {
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, intermediate=128),
    "toy": dict(layers=8, hidden=64, heads=8, kv_heads=4, head_dim=16, intermediate=128),
    "0.6b": dict(layers=28, hidden=1024, heads=16, kv_heads=8, head_dim=128, intermediate=3072),
    "1.7b": dict(layers=28, hidden=2048, heads=16, kv_heads=8, head_dim=128, intermediate=6144),
    "8b": dict(layers=36, hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=12288),
    "14b": dict(layers=40, hidden=5120, heads=40, kv_heads=8, head_dim=128, intermediate=17408),
    "toy-moe": dict(layers=8, hidden=64, heads=8, kv_heads=4, head_dim=16, intermediate=128,
                    experts=8, experts_per_tok=2, moe_intermediate=32),
    "30b-a3b": dict(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128,
                    intermediate=6144, experts=128, experts_per_tok=8, moe_intermediate=768),
}


def write_checkpoint(make_checkpoint, path, shape, layers, vocab, dtype):
    """A random checkpoint of `layers` layers of `shape` at `path` (replaced),
    written by the build's cli_make_tiny_checkpoint."""
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run([make_checkpoint, path, str(vocab), "--layers", str(layers),
                    "--hidden", str(shape["hidden"]), "--heads", str(shape["heads"]),
                    "--kv-heads", str(shape["kv_heads"]), "--head-dim", str(shape["head_dim"]),
                    "--intermediate", str(shape["intermediate"]),
                    "--dtype", "bf16" if dtype == "bf16" else "f32"] +
                   (["--experts", str(shape["experts"]),
                     "--experts-per-tok", str(shape["experts_per_tok"]),
                     "--moe-intermediate", str(shape["moe_intermediate"])]
                    if shape.get("experts") else []), check=True)


def add_common_arguments(ap, dtypes=None):
    """The options every timing tool takes: the checkpoint writer, device
    and dtype, the window and sink, the vocabulary, the work folder and the
    report file (dtypes: the accepted --dtype values, None = any)."""
    ap.add_argument("--make-checkpoint", required=True,
                    help="the build's cli_make_tiny_checkpoint (BUILD/test/cli/)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bf16", choices=dtypes)
    ap.add_argument("--window", type=int, default=1024)
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--out", default=None)
