#!/usr/bin/env python3
"""Parity of libbosch-torch with Hugging Face transformers' Qwen3ForCausalLM.

Needs a Python with torch and transformers (any version with Qwen3,
>= 4.51), and a built libbosch-torch. For each configuration below it builds
a randomly initialised Qwen3ForCausalLM, saves it with save_pretrained
(safetensors), scores the same random tokens with transformers (eager
attention) and with libbosch-torch through ctypes (all units full), and prints
the max abs difference of the logits at every position:

  tiny     2 layers, hidden 64, 4 heads / 2 KV heads, head_dim 16 (random init)
  1.7b     Qwen3-1.7B's layer shapes: hidden 2048, 16 heads, 8 KV heads,
           head_dim 128, intermediate 6144, 28 layers, tied embeddings;
           vocabulary reduced (--vocab, default 8192). About 1.4e9 parameters:
           ~6 GB in f32 (x2 while saving); use --layers to cut it down.

With --swa W it also checks sliding windows: all units SWA (window W, no sink)
against transformers with use_sliding_window=True, sliding_window=W,
max_window_layers=0 (every layer sliding; same weights). With --layer-types W
it checks per-layer windows as a hybrid checkpoint declares them: the odd
layers "sliding_attention" in config.json's layer_types (transformers >= 4.53),
which libbosch-torch reads from the saved config, every unit of its mask full.

libbosch-torch runs in a child process (this script re-invoked with
--backend, which imports ctypes only): a pip PyTorch and the libtorch that
libbosch-torch was built against must not share one process.

Usage:
  python3 tools/hf_parity.py [--lib build-torch/lib/torch/libbosch-torch.so.0]
        [--configs tiny,1.7b] [--dtype f32|bf16] [--device cpu|cuda]
        [--batch 2] [--len 64] [--vocab 8192] [--layers 28] [--swa 16]
        [--layer-types 16]
        [--tol 1e-4] [--keep DIR]
Exit status 0 when every max abs diff is below --tol (f32; use e.g. 5e-2 for
bf16), 1 otherwise.

Weights are re-drawn at a scale that gives O(1) logits (embeddings N(0, 1),
linear layers N(0, 1/fan_in), norms 1 + N(0, 0.1^2)); transformers' own
init (std 0.02) would make every logit nearly 0 and hide errors.
"""
import argparse
import ctypes
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

BOSCH_TORCH_DEVICE = {"auto": 0, "cpu": 1, "cuda": 2}
BOSCH_TORCH_DTYPE = {"f32": 1, "bf16": 2, "f16": 3}

CONFIGS = {
    "tiny": dict(vocab_size=256, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 tie_word_embeddings=False, rope_theta=10000.0, rms_norm_eps=1e-6),
    "1.7b": dict(vocab_size=8192, hidden_size=2048, intermediate_size=6144,
                 num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8,
                 head_dim=128, tie_word_embeddings=True, rope_theta=1000000.0,
                 rms_norm_eps=1e-6),
}


# ---------------------------------------------------------------------------
# Child process: libbosch-torch through ctypes (no torch import here).

def run_backend(lib_path, ckpt, req_path, out_path):
    with open(req_path) as f:
        req = json.load(f)
    lib_dir = os.path.dirname(os.path.abspath(lib_path))
    # libbosch (the core) next to or above the backend, for the build tree.
    for cand in (os.path.join(lib_dir, "libbosch.so.0"),
                 os.path.join(os.path.dirname(lib_dir), "libbosch.so.0")):
        if os.path.exists(cand):
            ctypes.CDLL(cand, mode=ctypes.RTLD_GLOBAL)
            break
    lib = ctypes.CDLL(lib_path)
    lib.bosch_torch_model_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.bosch_torch_model_open.restype = ctypes.c_void_p
    lib.bosch_torch_create_error.argtypes = []
    lib.bosch_torch_create_error.restype = ctypes.c_char_p
    lib.bosch_torch_model_last_error.argtypes = [ctypes.c_void_p]
    lib.bosch_torch_model_last_error.restype = ctypes.c_char_p
    lib.bosch_torch_model_shape.argtypes = [ctypes.c_void_p] + [
        ctypes.POINTER(ctypes.c_uint32)] * 4
    lib.bosch_torch_model_forward.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t, ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32, ctypes.c_uint32,
        ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t, ctypes.POINTER(ctypes.c_float)]
    lib.bosch_torch_model_free.argtypes = [ctypes.c_void_p]
    model = lib.bosch_torch_model_open(ckpt.encode(), BOSCH_TORCH_DEVICE[req["device"]],
                                       BOSCH_TORCH_DTYPE[req["dtype"]])
    if not model:
        sys.stderr.write("%s\n" % lib.bosch_torch_create_error().decode())
        return 1
    L, G, R, V = (ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint32())
    lib.bosch_torch_model_shape(model, ctypes.byref(L), ctypes.byref(G), ctypes.byref(R),
                                ctypes.byref(V))
    tokens = req["tokens"]
    B, T = len(tokens), len(tokens[0])
    flat = [t for row in tokens for t in row]
    tok = (ctypes.c_int32 * len(flat))(*flat)
    units = L.value * G.value
    masks = None
    if req.get("swa"):
        masks = (ctypes.c_uint8 * (B * units))(*([1] * (B * units)))
    window = int(req.get("window", 1))
    pos = (ctypes.c_int32 * T)(*range(T))
    logits = (ctypes.c_float * (B * T * V.value))()
    st = lib.bosch_torch_model_forward(model, tok, B, T, masks, window, 0, pos, T, logits)
    if st != 0:
        sys.stderr.write("bosch_torch_model_forward: %d %s\n"
                         % (st, lib.bosch_torch_model_last_error(model).decode()))
    lib.bosch_torch_model_free(model)
    if st != 0:
        return 1
    with open(out_path, "wb") as f:
        f.write(bytes(logits))
    return 0


# ---------------------------------------------------------------------------
# Parent process: transformers.

def make_config(Qwen3Config, spec, args, swa=None, layer_types=None):
    kw = dict(spec)
    kw["max_position_embeddings"] = max(4096, args.len)
    kw["attention_bias"] = False
    kw["hidden_act"] = "silu"
    if layer_types:
        kw.update(use_sliding_window=True, sliding_window=swa, layer_types=layer_types)
    elif swa:
        kw.update(use_sliding_window=True, sliding_window=swa, max_window_layers=0)
    else:
        kw.update(use_sliding_window=False, sliding_window=None)
    cfg = Qwen3Config(**kw)
    # transformers >= 5 keeps RoPE settings in rope_parameters.
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict):
        rp["rope_theta"] = spec["rope_theta"]
    cfg._attn_implementation = "eager"
    return cfg


def build_model(Qwen3ForCausalLM, cfg):
    try:
        model = Qwen3ForCausalLM._from_config(cfg, attn_implementation="eager")
    except (TypeError, AttributeError, ValueError):
        model = Qwen3ForCausalLM(cfg)
    if hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation("eager")
        except Exception:  # older versions: the config field above is enough
            pass
    model.config._attn_implementation = "eager"
    return model.eval()


def reinit(torch, model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=g) / (p.shape[1] ** 0.5))
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)


def compare(name, spec, args, torch, transformers, tmp):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    cfg = make_config(Qwen3Config, spec, args)
    model = build_model(Qwen3ForCausalLM, cfg)
    reinit(torch, model, 1234)
    if spec.get("tie_word_embeddings"):
        model.tie_weights()
    model = model.to(dtype)
    ckpt = os.path.join(tmp, name)
    model.save_pretrained(ckpt, safe_serialization=True)

    rng = random.Random(5)
    tokens = [[rng.randrange(spec["vocab_size"]) for _ in range(args.len)]
              for _ in range(args.batch)]
    device = torch.device(args.device)
    model = model.to(device)
    with torch.no_grad():
        ref = model(torch.tensor(tokens, device=device)).logits.float().cpu()
    checks = [("full", False, ref, ckpt)]
    if args.layer_types:
        # Odd layers slide (config.json's layer_types); libbosch-torch reads
        # them from the saved config, every unit of its mask full.
        kinds = ["sliding_attention" if l % 2 else "full_attention"
                 for l in range(spec["num_hidden_layers"])]
        lcfg = make_config(Qwen3Config, spec, args, swa=args.layer_types, layer_types=kinds)
        if list(getattr(lcfg, "layer_types", None) or []) != kinds:
            print("%-6s layer_types: this transformers (%s) has no per-layer layer_types"
                  % (name, transformers.__version__))
            return False
        lmodel = build_model(Qwen3ForCausalLM, lcfg).to(dtype)
        lmodel.load_state_dict(model.state_dict())
        lckpt = os.path.join(tmp, name + "-layer-types")
        lmodel.save_pretrained(lckpt, safe_serialization=True)
        lmodel = lmodel.to(device)
        with torch.no_grad():
            lref = lmodel(torch.tensor(tokens, device=device)).logits.float().cpu()
        checks.append(("types%d" % args.layer_types, False, lref, lckpt))
        del lmodel
    if args.swa:
        scfg = make_config(Qwen3Config, spec, args, swa=args.swa)
        smodel = build_model(Qwen3ForCausalLM, scfg).to(dtype)
        smodel.load_state_dict(model.state_dict())
        smodel = smodel.to(device)
        with torch.no_grad():
            sref = smodel(torch.tensor(tokens, device=device)).logits.float().cpu()
        checks.append(("swa%d" % args.swa, True, sref, ckpt))
        del smodel
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()

    ok = True
    for label, swa, expect, path in checks:
        req = os.path.join(tmp, "%s-%s.json" % (name, label))
        out = os.path.join(tmp, "%s-%s.bin" % (name, label))
        with open(req, "w") as f:
            json.dump(dict(tokens=tokens, swa=swa, window=args.swa or 1, device=args.device,
                           dtype=args.dtype), f)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--backend", args.lib,
                            path, req, out])
        if r.returncode != 0:
            print("%-6s %-6s backend failed (exit %d)" % (name, label, r.returncode))
            ok = False
            continue
        with open(out, "rb") as f:
            raw = f.read()
        n = len(raw) // 4
        ours = torch.tensor(struct.unpack("<%df" % n, raw)).view(expect.shape)
        diff = (ours - expect).abs().max().item()
        scale = expect.abs().max().item()
        good = diff < args.tol
        ok = ok and good
        print("%-6s %-6s dtype %-4s B=%d T=%d: max abs diff %.3g (max |logit| %.3g) %s"
              % (name, label, args.dtype, args.batch, args.len, diff, scale,
                 "ok" if good else "FAIL"))
    return ok


def main(argv):
    if len(argv) > 1 and argv[1] == "--backend":
        return run_backend(*argv[2:6])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="build-torch/lib/torch/libbosch-torch.so.0")
    ap.add_argument("--configs", default="tiny,1.7b")
    ap.add_argument("--dtype", default="f32", choices=sorted(BOSCH_TORCH_DTYPE))
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--len", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=8192, help="vocabulary of the 1.7b shapes")
    ap.add_argument("--layers", type=int, default=0, help="override the layer count (0 = keep)")
    ap.add_argument("--swa", type=int, default=0, help="also compare all-SWA with this window")
    ap.add_argument("--layer-types", type=int, default=0,
                    help="also compare a model whose odd layers slide over this window "
                         "through config.json's layer_types")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--keep", default="", help="write the checkpoints here and keep them")
    args = ap.parse_args(argv[1:])
    if not os.path.exists(args.lib):
        sys.stderr.write("libbosch-torch not found: %s (--lib)\n" % args.lib)
        return 2
    import torch
    import transformers

    print("torch %s, transformers %s" % (torch.__version__, transformers.__version__))
    tmp = args.keep or tempfile.mkdtemp(prefix="bosch-hf-parity-")
    os.makedirs(tmp, exist_ok=True)
    ok = True
    try:
        for name in args.configs.split(","):
            spec = dict(CONFIGS[name])
            if name == "1.7b":
                spec["vocab_size"] = args.vocab
            if args.layers:
                spec["num_hidden_layers"] = args.layers
            ok = compare(name, spec, args, torch, transformers, tmp) and ok
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
