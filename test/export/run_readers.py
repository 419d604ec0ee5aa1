#!/usr/bin/env python3
"""Runs `bosch export` on hand-written bosch-mask files and reads the result
with code written from the consumers' (duo_reader.py: DuoAttention and
kvpress; hf_reader.py: transformers' Qwen3Config; trtllm_reader.py:
TensorRT-LLM's KvCacheConfig). Each recovered mask must equal the mask
file's unit_mask (duo) or the layer projection (hf, trtllm) as the
documented rule gives it, computed here independently.

Usage: run_readers.py BOSCH_EXECUTABLE    (exit 77 = skipped: no numpy or yaml)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import yaml  # noqa: F401  (trtllm_reader)
except ImportError as exc:
    print(f"{exc.name} not available: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import duo_reader  # noqa: E402
import hf_reader  # noqa: E402
import trtllm_reader  # noqa: E402

CONTEXT, WINDOW, SINK = 1024, 128, 4
MAX_LEN = 4096  # the models' max_position_embeddings: TensorRT-LLM's max_seq_len

# name: layers, kv groups, query heads per group, unit_mask, importance
CASES = {
    # GQA 4 x 2 x 4, head-level: layer SWA heads 1, 2, 0, 1 -> projection
    # layers 1 and 3 (tie of 0 and 3: higher index).
    "gqa-head": (4, 2, 4, "10110001", None),
    # The same shape, layer-level, sliding layers a suffix.
    "gqa-layer": (4, 2, 4, "00001111", None),
    # Non-square 3 x 5 x 2, head-level with a tie at the cut (layers 0 and 1
    # have 2 SWA heads each, 1 layer to pick): importance picks layer 0.
    "wide-importance": (3, 5, 2, "110000011010000", [0.1] * 5 + [0.9] * 5 + [0.5] * 5),
    # 1 KV head per layer (MQA): np.loadtxt gives a 1-D array of the layers.
    "mqa": (4, 1, 8, "0101", None),
    # 1 layer: np.loadtxt gives a 1-D array of the KV heads (the caveat).
    "one-layer": (1, 3, 2, "010", None),
}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def unit_mask_array(bits, layers, groups):
    return np.array([int(c) for c in bits], dtype=int).reshape(layers, groups)


def projection(swa, importance):
    """The documented rule (docs/export.md), independently of the library."""
    layers, groups = swa.shape
    k = int(np.floor(swa.sum() / groups + 0.5))
    counts = swa.sum(axis=1)
    if importance is not None:
        imp = np.asarray(importance, dtype=float).reshape(layers, groups).sum(axis=1)
    else:
        imp = np.zeros(layers)
    order = sorted(range(layers), key=lambda l: (-counts[l], imp[l], -l))
    chosen = set(order[:k])
    return [l in chosen for l in range(layers)]


def write_case(root, name, layers, groups, hpg, bits, importance):
    model = os.path.join(root, name + "-model")
    os.makedirs(model)
    source = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 64,
        "num_hidden_layers": layers,
        "num_attention_heads": groups * hpg,
        "num_key_value_heads": groups,
        "head_dim": 16,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": 28,
        "max_position_embeddings": MAX_LEN,
        "torch_dtype": "bfloat16",
    }
    with open(os.path.join(model, "config.json"), "w") as f:
        json.dump(source, f, indent=2)
    for extra in ("model.safetensors", "tokenizer.json", "generation_config.json"):
        with open(os.path.join(model, extra), "w") as f:
            f.write(extra)
    os.makedirs(os.path.join(model, "original"))  # a subdirectory: not linked
    mask = {
        "format": "bosch-mask",
        "format_version": 1,
        "method": "bosch",
        "model": {"path": model, "layers": layers, "kv_groups": groups, "heads_per_group": hpg},
        "units": layers * groups,
        "unit_mask": bits,
        "kv_saving": {"context": CONTEXT, "window": WINDOW, "sink": SINK},
        "settings": {"window": WINDOW, "sink": SINK, "metric": "exact"},
    }
    if importance is not None:
        mask["unit_importance"] = importance
    path = os.path.join(root, name + ".json")
    with open(path, "w") as f:
        json.dump(mask, f)
    return path, model, source


def bosch(exe, *args):
    r = subprocess.run([exe, "export", *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
    return r


def libbosch_sees(window, sink, q, j):
    """libbosch's window: query q sees key j when q - j < window, plus the first sink keys."""
    return j <= q and (q - j < window or j < sink)


def check_duo(name, out, layers, groups, hpg, bits, stdout):
    swa = unit_mask_array(bits, layers, groups)
    heads, sink, recent = duo_reader.load_attn_pattern(out)
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    check(sink == SINK and recent == WINDOW, f"{name}: sink_size/recent_size {sink}/{recent}")
    check(cfg["num_layers"] == layers and cfg["num_key_value_heads"] == groups,
          f"{name}: config.json shape")
    ratio = swa.sum() / swa.size
    check(cfg["head_compression_ratio"] == ratio and cfg["sparsity"] == ratio,
          f"{name}: head_compression_ratio {cfg['head_compression_ratio']} != {ratio}")

    # DuoAttention: the array, the patch's per-layer rows, sparsify.
    want_q = [np.repeat(1 - swa[l], hpg).astype(bool) for l in range(layers)]
    got_q = duo_reader.duo_query_head_masks(heads, layers, hpg)
    rows_right = all(g.shape == w.shape and (g == w).all() for g, w in zip(got_q, want_q))
    fixed = np.loadtxt(os.path.join(out, "full_attention_heads.tsv"), dtype=float,
                       delimiter="\t", ndmin=2)
    check(fixed.shape == (layers, groups) and (fixed == 1 - swa).all(),
          f"{name}: np.loadtxt(ndmin=2) does not give 1 - unit_mask")
    if layers == 1 or groups == 1:
        # The caveat: np.loadtxt squeezes the pattern to 1-D; the command warns.
        check(heads.ndim < 2, f"{name}: expected np.loadtxt to squeeze the pattern")
        check("warning" in stdout and "ndmin=2" in stdout, f"{name}: no warning printed")
    if layers == 1:
        # Item 0 of the squeezed array is KV head 0's value, not layer 0's row.
        check(not rows_right, f"{name}: DuoAttention's indexing unexpectedly right")
    else:
        # With 1 KV head, item idx is layer idx's value: still right.
        check(rows_right, f"{name}: DuoAttention's per-layer query-head masks differ")
        check((heads.reshape(layers, groups) == 1 - swa).all(),
              f"{name}: full_attention_heads.tsv != 1 - unit_mask")
        np.random.seed(0)
        sparse, sparsity = duo_reader.sparsify_attention_heads(
            heads.copy(), threshold=cfg["threshold"], sparsity=cfg["sparsity"])
        check((sparse.reshape(layers, groups) == 1 - swa).all(),
              f"{name}: sparsify changed the mask")
        check(abs(sparsity - ratio) < 1e-12, f"{name}: sparsify's sparsity {sparsity} != {ratio}")

    # kvpress: streaming mask and the keys each head drops; on the squeezed
    # array of a 1-layer or 1-KV-head pattern (the caveat), and on the
    # (layers, kv_heads) array np.loadtxt(ndmin=2) gives.
    ksink, krecent, scores = duo_reader.kvpress_load(out)
    k_len = ksink + krecent + 40
    q = k_len - 1
    want_keys = [[[libbosch_sees(WINDOW, SINK, q, j) if swa[l, g] else True for j in range(k_len)]
                  for g in range(groups)] for l in range(layers)]

    def kvpress_keys(head_scores):
        sm = duo_reader.kvpress_streaming_mask(head_scores, cfg["head_compression_ratio"])
        try:
            return [[list(~row) for row in
                     duo_reader.kvpress_masked_keys(sm, l, groups, k_len, ksink, krecent)]
                    for l in range(layers)], sm
        except IndexError:
            return None, sm

    keys, sm = kvpress_keys(fixed)
    check((sm == swa.astype(bool)).all(), f"{name}: kvpress streaming_mask != unit_mask")
    check(keys == want_keys, f"{name}: kvpress keys differ from libbosch's window and sink")
    keys, sm = kvpress_keys(scores)
    if layers == 1 or groups == 1:
        check(keys != want_keys, f"{name}: kvpress unexpectedly right on the squeezed array")
    else:
        check(keys == want_keys, f"{name}: kvpress keys differ (as loaded)")


def check_hf(name, out, model, source, layers, groups, hpg, bits, importance, stdout):
    swa = unit_mask_array(bits, layers, groups)
    want_layers = projection(swa, importance)
    path = os.path.join(out, "config.json")
    cfg = hf_reader.from_file(path)
    got = hf_reader.attention_windows(cfg)
    want = [WINDOW if s else None for s in want_layers]
    check(got == want, f"{name}: HF per-layer windows {got} != projection {want}")
    with open(path) as f:
        raw = json.load(f)
    for key, value in source.items():
        if key not in ("use_sliding_window", "sliding_window", "max_window_layers"):
            check(raw.get(key) == value, f"{name}: member {key} changed")
    check(list(raw)[: len(source)] == list(source), f"{name}: member order changed")
    leading = next((l for l, s in enumerate(want_layers) if s), layers)
    check(raw["max_window_layers"] == leading, f"{name}: max_window_layers {raw['max_window_layers']}")
    # A reader that ignores layer_types (older code) agrees when the
    # sliding layers are a suffix.
    legacy = hf_reader.Qwen3Config(**{k: v for k, v in raw.items() if k != "layer_types"})
    suffix = all(want_layers[l] for l in range(leading, layers))
    if suffix:
        check(hf_reader.attention_windows(legacy) == want, f"{name}: legacy reader differs")
    # The window means what libbosch's means, without sink tokens.
    for w in set(x for x in got if x is not None):
        for qi in range(0, 3 * w):
            for j in range(0, qi + 2):
                if hf_reader.visible(w, qi, j) != libbosch_sees(w, 0, qi, j):
                    check(False, f"{name}: window semantics differ at q={qi} k={j}")
    # DIR/bosch-mask.json: the exported layer-level mask, sink 0.
    with open(os.path.join(out, "bosch-mask.json")) as f:
        exported = json.load(f)
    want_bits = "".join(("1" if s else "0") * groups for s in want_layers)
    check(exported["unit_mask"] == want_bits, f"{name}: bosch-mask.json {exported['unit_mask']}")
    check(exported["kv_saving"]["sink"] == 0 and exported["kv_saving"]["window"] == WINDOW,
          f"{name}: bosch-mask.json kv_saving")
    head_level = any(0 < swa[l].sum() < groups for l in range(layers))
    # A layer-level mask scored with sink tokens is not what HF serves either.
    check(exported["method"] == ("layer-projection:bosch" if head_level or SINK else "bosch"),
          f"{name}: method {exported['method']}")
    check("score" not in exported, f"{name}: the exported mask carries a score")
    # Both savings printed for a head-level mask.
    if head_level:
        r = swa.sum() / swa.size
        rp = sum(want_layers) / layers
        m1 = re.search(r"head-level mask:\s+SWA ratio ([0-9.]+).*KV saving ([0-9.]+)", stdout)
        m2 = re.search(r"layer projection:\s+SWA ratio ([0-9.]+).*KV saving ([0-9.]+)", stdout)
        check(m1 and m2, f"{name}: no side-by-side savings in: {stdout}")
        if m1 and m2:
            check(float(m1.group(1)) == round(r, 4) and
                  float(m1.group(2)) == round(r * (1 - (WINDOW + SINK) / CONTEXT), 4),
                  f"{name}: head-level line {m1.group(0)}")
            check(float(m2.group(1)) == round(rp, 4) and
                  float(m2.group(2)) == round(rp * (1 - WINDOW / CONTEXT), 4),
                  f"{name}: projection line {m2.group(0)}")
        check("unmeasured" in stdout, f"{name}: no word that the projection is unmeasured")
    # Links: every regular file but config.json, to the model's own.
    for extra in ("model.safetensors", "tokenizer.json", "generation_config.json"):
        p = os.path.join(out, extra)
        check(os.path.islink(p) and os.path.samefile(p, os.path.join(model, extra)),
              f"{name}: {extra} not linked")
    check(not os.path.exists(os.path.join(out, "original")), f"{name}: subdirectory linked")
    check(not [e for e in os.listdir(out) if e.startswith(".")], f"{name}: temporary left")


def check_trtllm(name, path, layers, groups, bits, importance, stdout, max_seq_len):
    swa = unit_mask_array(bits, layers, groups)
    want_layers = projection(swa, importance)
    cfg = trtllm_reader.load(path)
    check(len(cfg["max_attention_window"]) == layers,
          f"{name}: {len(cfg['max_attention_window'])} windows for {layers} layers")
    got = trtllm_reader.layer_windows(cfg, layers, max_seq_len)
    want = [WINDOW if s else max_seq_len for s in want_layers]
    check(got == want, f"{name}: TensorRT-LLM windows {got} != projection {want}")
    check("sink_token_length" not in cfg, f"{name}: a sink the PyTorch backend does not serve")
    check(len(set(got)) <= 2, f"{name}: more than two distinct windows {sorted(set(got))}")
    # The window means what libbosch's means, without sink tokens; a full
    # layer sees every earlier key up to max_seq_len.
    for w in set(got):
        for qi in range(0, 3 * w if w < max_seq_len else 300):
            for j in range(0, qi + 2):
                want_seen = libbosch_sees(w, 0, qi, j) if w < max_seq_len else j <= qi
                if trtllm_reader.visible(w, qi, j) != want_seen:
                    check(False, f"{name}: window {w} semantics differ at q={qi} k={j}")
                    return
    if any(0 < swa[l].sum() < groups for l in range(layers)):
        check("layer projection:" in stdout and "unmeasured" in stdout,
              f"{name}: no projection line in: {stdout}")


def main():
    exe = sys.argv[1]
    root = tempfile.mkdtemp(prefix="bosch-export-readers-")
    try:
        for name, (layers, groups, hpg, bits, importance) in CASES.items():
            mask, model, source = write_case(root, name, layers, groups, hpg, bits, importance)
            duo = os.path.join(root, name + "-duo")
            r = bosch(exe, "--format", "duo", "--mask", mask, "--out", duo)
            check(r.returncode == 0, f"{name}: bosch export --format duo exited {r.returncode}")
            if r.returncode == 0:
                check_duo(name, duo, layers, groups, hpg, bits, r.stdout + r.stderr)
            hf = os.path.join(root, name + "-hf")
            r = bosch(exe, "--format", "hf", "--mask", mask, "--out", hf)
            check(r.returncode == 0, f"{name}: bosch export --format hf exited {r.returncode}")
            if r.returncode == 0:
                check_hf(name, hf, model, source, layers, groups, hpg, bits, importance, r.stdout)
            # TensorRT-LLM: max_seq_len from the model's config, or given.
            for given in (None, 512):
                trt = os.path.join(root, f"{name}-trtllm-{given}.yaml")
                extra = ["--max-seq-len", str(given)] if given else []
                r = bosch(exe, "--format", "trtllm", "--mask", mask, "--out", trt, *extra)
                check(r.returncode == 0,
                      f"{name}: bosch export --format trtllm exited {r.returncode}")
                if r.returncode == 0:
                    check_trtllm(name, trt, layers, groups, bits, importance, r.stdout,
                                 given or MAX_LEN)
            print(f"{name}: checked")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
