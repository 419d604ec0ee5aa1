#!/usr/bin/env python3
"""Reference Qwen3 forward with per-unit sliding-window masks (PyTorch only).

An independent, deliberately plain re-implementation of Hugging Face
modeling_qwen3.py (eager attention) used to check libbosch-torch's logits. It
needs only torch (1.13 or newer; no transformers, no safetensors package):
the safetensors reader below is a dozen lines.

Usage:
    ref_qwen3.py CKPT_DIR INPUT_JSON OUTPUT_BIN

CKPT_DIR    config.json + model.safetensors (or model.safetensors.index.json
            and its shards), Hugging Face layout, Qwen3ForCausalLM.
INPUT_JSON  {"tokens": [[int, ...], ...],          # B sequences of T tokens
             "masks": [[0|1, ...], ...] or null,   # B x (layers * kv_heads), 1 = SWA
             "window": int, "sink": int,
             "dtype": "f32" | "bf16" | "f16"}      # compute dtype (default f32)
OUTPUT_BIN  logits at every position, float32 little-endian, [B, T, vocab].

Unit (layer l, KV group g) = SWA: query t of the query heads g*r .. g*r+r-1
(r = heads / kv_heads) sees key s iff s <= t and (s > t - window or s < sink);
otherwise plain causal attention. The mask is built element by element in
Python loops (slow, obviously right) and added as a finfo.min bias, as
Hugging Face does.
"""
import json
import os
import struct
import sys

import torch

_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}
_COMPUTE = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def read_safetensors(path):
    """Every tensor of one safetensors file: u64 header length, JSON header, data."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        raw = bytearray(data[base + begin:base + end])
        if end > begin:
            t = torch.frombuffer(raw, dtype=dtype)
        else:
            t = torch.empty(0, dtype=dtype)
        out[name] = t.reshape(info["shape"]).clone()
    return out


def load_checkpoint(ckpt):
    with open(os.path.join(ckpt, "config.json")) as f:
        cfg = json.load(f)
    single = os.path.join(ckpt, "model.safetensors")
    weights = {}
    if os.path.exists(single):
        weights = read_safetensors(single)
    else:
        with open(os.path.join(ckpt, "model.safetensors.index.json")) as f:
            index = json.load(f)
        for shard in sorted(set(index["weight_map"].values())):
            weights.update(read_safetensors(os.path.join(ckpt, shard)))
    return cfg, weights


def rms_norm(x, weight, eps):
    dtype = x.dtype
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def build_bias(masks, layers, kv_heads, heads, T, window, sink, dtype):
    """Additive attention bias [layers, B, heads, T, T] (0 or finfo.min)."""
    B = len(masks)
    r = heads // kv_heads
    neg = torch.finfo(dtype).min
    bias = torch.zeros(layers, B, heads, T, T, dtype=dtype)
    for l in range(layers):
        for b in range(B):
            for head in range(heads):
                g = head // r
                swa = masks[b] is not None and masks[b][l * kv_heads + g] != 0
                for t in range(T):
                    for s in range(T):
                        ok = s <= t and (not swa or s > t - window or s < sink)
                        if not ok:
                            bias[l, b, head, t, s] = neg
    return bias


def forward(cfg, w, tokens, masks, window, sink, dtype):
    L = cfg["num_hidden_layers"]
    nH = cfg["num_attention_heads"]
    G = cfg["num_key_value_heads"]
    hd = cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta")
    if theta is None:
        theta = cfg["rope_parameters"]["rope_theta"]
    r = nH // G
    W = {k: v.to(dtype) for k, v in w.items()}
    embed = W["model.embed_tokens.weight"]
    if cfg.get("tie_word_embeddings", False):
        lm_head = embed
    else:
        lm_head = W["lm_head.weight"]

    tok = torch.tensor(tokens, dtype=torch.int64)
    B, T = tok.shape
    if masks is None:
        masks = [None] * B
    bias = build_bias(masks, L, G, nH, T, window, sink, dtype)

    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    pos = torch.arange(T, dtype=torch.float32)
    freqs = pos[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)

    h = embed[tok]
    for l in range(L):
        p = "model.layers.%d." % l
        x = rms_norm(h, W[p + "input_layernorm.weight"], eps)
        q = (x @ W[p + "self_attn.q_proj.weight"].t()).view(B, T, nH, hd)
        k = (x @ W[p + "self_attn.k_proj.weight"].t()).view(B, T, G, hd)
        v = (x @ W[p + "self_attn.v_proj.weight"].t()).view(B, T, G, hd)
        q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps).transpose(1, 2)
        k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps).transpose(1, 2)
        v = v.transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.repeat_interleave(k, r, dim=1)  # query head i uses KV head i // r
        v = torch.repeat_interleave(v, r, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) * (hd ** -0.5) + bias[l]
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(dtype)
        o = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, nH * hd)
        h = h + o @ W[p + "self_attn.o_proj.weight"].t()
        x = rms_norm(h, W[p + "post_attention_layernorm.weight"], eps)
        gate = x @ W[p + "mlp.gate_proj.weight"].t()
        up = x @ W[p + "mlp.up_proj.weight"].t()
        h = h + (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].t()
    h = rms_norm(h, W["model.norm.weight"], eps)
    return (h @ lm_head.t()).to(torch.float32)


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    ckpt, inp, outp = argv[1:]
    with open(inp) as f:
        spec = json.load(f)
    cfg, w = load_checkpoint(ckpt)
    arch = cfg.get("architectures") or []
    if "Qwen3ForCausalLM" not in arch:
        sys.stderr.write("not a Qwen3ForCausalLM checkpoint: %r\n" % (arch,))
        return 1
    dtype = _COMPUTE[spec.get("dtype", "f32")]
    with torch.no_grad():
        logits = forward(cfg, w, spec["tokens"], spec.get("masks"), int(spec["window"]),
                         int(spec["sink"]), dtype)
    with open(outp, "wb") as f:
        f.write(logits.contiguous().numpy().astype("<f4").tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
