"""Qwen3 layer shapes (Hugging Face config.json) and the random checkpoint
of a shape, shared by time_eval.py and search_cost.py."""
import shutil
import subprocess

# tiny / toy: CI's dry runs. 30b-a3b is a proxy: its attention shapes (48
# layers, 32 query / 4 KV heads) with a dense MLP as wide as its 8 active
# experts (8 x 768); the router and the expert gather are not in it
# (libbosch-torch has no MoE forward yet).
SHAPES = {
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, intermediate=128),
    "toy": dict(layers=8, hidden=64, heads=8, kv_heads=4, head_dim=16, intermediate=128),
    "0.6b": dict(layers=28, hidden=1024, heads=16, kv_heads=8, head_dim=128, intermediate=3072),
    "1.7b": dict(layers=28, hidden=2048, heads=16, kv_heads=8, head_dim=128, intermediate=6144),
    "8b": dict(layers=36, hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=12288),
    "14b": dict(layers=40, hidden=5120, heads=40, kv_heads=8, head_dim=128, intermediate=17408),
    "30b-a3b": dict(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128,
                    intermediate=8 * 768),
}


def write_checkpoint(make_checkpoint, path, shape, layers, vocab, dtype):
    """A random checkpoint of `layers` layers of `shape` at `path` (replaced),
    written by the build's cli_make_tiny_checkpoint."""
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run([make_checkpoint, path, str(vocab), "--layers", str(layers),
                    "--hidden", str(shape["hidden"]), "--heads", str(shape["heads"]),
                    "--kv-heads", str(shape["kv_heads"]), "--head-dim", str(shape["head_dim"]),
                    "--intermediate", str(shape["intermediate"]),
                    "--dtype", "bf16" if dtype == "bf16" else "f32"], check=True)
