#!/usr/bin/env python3
"""`bosch export` per model family (docs/export.md, "Families") on the
config.json files transformers 5.25 wrote (test/export/configs): for each
family and a mixed, an all-sliding and a no-sliding layer-level mask,
`--format hf` writes a config whose per-layer windows are the mask's, or is
refused (exit 1, the cause named, no directory left) where the family's
config cannot say it; `--format trtllm` serves every family; `--format duo`
reads no model.

The exported configs are read with code written from transformers 5.25
(hf_reader.py's Qwen3Config, which Qwen2Config matches line for line;
MistralConfig's one sliding_window; LlamaConfig's none), and with
--transformers by transformers itself: AutoConfig.from_pretrained on the
exported directory and the attention modules of a model built from it
(run with a Python that has PyTorch 2 and transformers 5: meson option
torch_python; exit 77 without them).

  families.py BOSCH CONFIG_DIR [--transformers]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_reader  # noqa: E402

WINDOW = 128
MASKS = {"mixed": "11000011", "all": "11111111", "none": "00000000"}
# fixture: family, the masks its hf config can express
FIXTURES = {
    "qwen3": ("per-layer", {"mixed", "all", "none"}),
    "qwen2": ("per-layer", {"mixed", "all", "none"}),
    "qwen2_sliding": ("per-layer", {"mixed", "all", "none"}),
    "qwen3_moe": ("moe", {"all", "none"}),
    "mistral": ("mistral", {"all", "none"}),
    "mistral_sliding": ("mistral", {"all", "none"}),
    "llama": ("llama", {"none"}),
}
REFUSAL = {
    "moe": ["is a Qwen3MoeForCausalLM config", "all layers or none",
            "the selection slides 4 of 4 layers"],
    "mistral": ["is a MistralForCausalLM config", "one sliding_window applies to every layer",
                "all layers or none", "the selection slides 4 of 4 layers"],
    "llama": ["is a LlamaForCausalLM config", "LlamaConfig has no sliding window"],
}
POINTERS = ["bosch export --format trtllm|duo", "bosch.hf.apply (Python)"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def windows_from_code(family, cfg):
    """Each layer's window as transformers 5.25 builds it, from its code."""
    n = cfg["num_hidden_layers"]
    if family == "per-layer":  # Qwen3Config / Qwen2Config, Qwen3Attention / Qwen2Attention
        return hf_reader.attention_windows(hf_reader.Qwen3Config(**cfg))
    if family == "moe":  # Qwen3MoeConfig: use_sliding_window gates the one window
        return [cfg.get("sliding_window") if cfg.get("use_sliding_window") else None] * n
    if family == "mistral":  # MistralAttention: config.sliding_window on every layer
        return [cfg.get("sliding_window")] * n
    return [None] * n  # LlamaAttention: no window


def windows_from_transformers(family, path):
    """Each layer's window as transformers itself loads the directory."""
    import torch
    import transformers
    cfg = transformers.AutoConfig.from_pretrained(path)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    layers = model.model.layers
    if family == "per-layer":
        got = [layer.self_attn.sliding_window for layer in layers]
        typed = [cfg.sliding_window if t == "sliding_attention" else None
                 for t in cfg.layer_types]
        check(got == typed, f"{path}: attention modules {got} != layer_types {typed}")
        return got
    if family == "moe":
        return [layer.self_attn.sliding_window for layer in layers]
    if family == "mistral":
        check(not hasattr(cfg, "layer_types") or cfg.layer_types is None,
              f"{path}: MistralConfig grew layer_types")
        return [cfg.sliding_window] * len(layers)
    check(getattr(cfg, "sliding_window", None) is None, f"{path}: LlamaConfig has a window")
    check(not any(hasattr(layer.self_attn, "sliding_window") for layer in layers),
          f"{path}: LlamaAttention has a sliding_window")
    return [None] * len(layers)


def write_model(root, name, config_dir):
    model = os.path.join(root, name)
    os.makedirs(model)
    shutil.copy(os.path.join(config_dir, name + ".json"), os.path.join(model, "config.json"))
    with open(os.path.join(model, "model.safetensors"), "w") as f:
        f.write("w")
    return model


def write_mask(root, name, bits, model):
    mask = {"format": "bosch-mask", "format_version": 1, "method": "bosch",
            "model": {"path": model, "layers": 4, "kv_groups": 2, "heads_per_group": 4},
            "units": 8, "unit_mask": bits,
            "kv_saving": {"context": 1024, "window": WINDOW, "sink": 0}}
    path = os.path.join(root, name + ".json")
    with open(path, "w") as f:
        json.dump(mask, f)
    return path


def bosch(exe, *args):
    r = subprocess.run([exe, "export", *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def want_windows(bits):
    return [WINDOW if bits[2 * l] == "1" else None for l in range(4)]


def check_hf(exe, root, name, family, expressible, real):
    model = write_model(root, name, sys.argv[2])
    for kind, bits in MASKS.items():
        mask = write_mask(root, f"{name}-{kind}", bits, model)
        out = os.path.join(root, f"{name}-{kind}-hf")
        rc, text = bosch(exe, "--format", "hf", "--mask", mask, "--out", out)
        what = f"{name} {kind}: bosch export --format hf"
        if kind not in expressible:
            check(rc == 1, f"{what} exited {rc}, expected 1: {text}")
            slides = f"the selection slides {bits.count('1') // 2} of 4 layers"
            for want in [w.replace("the selection slides 4 of 4 layers", slides)
                         for w in REFUSAL[family]] + POINTERS:
                check(want in text, f"{what}: no '{want}' in: {text}")
            check(not os.path.exists(out), f"{what}: the refused export left {out}")
            continue
        check(rc == 0, f"{what} exited {rc}: {text}")
        if rc:
            continue
        with open(os.path.join(out, "config.json")) as f:
            cfg = json.load(f)
        got = windows_from_code(family, cfg)
        check(got == want_windows(bits), f"{what}: windows {got} (code) != {want_windows(bits)}")
        if real:
            got = windows_from_transformers(family, out)
            check(got == want_windows(bits),
                  f"{what}: windows {got} (transformers) != {want_windows(bits)}")


def check_trtllm_duo(exe, root, name):
    model = os.path.join(root, name)
    mask = write_mask(root, f"{name}-t", MASKS["mixed"], model)
    out = os.path.join(root, f"{name}.yaml")
    rc, text = bosch(exe, "--format", "trtllm", "--mask", mask, "--out", out)
    check(rc == 0, f"{name}: bosch export --format trtllm exited {rc}: {text}")
    if rc == 0:
        with open(out) as f:
            line = re.search(r"^  max_attention_window: \[(.*)\]$", f.read(), re.M)
        check(line and line.group(1) == "128, 4096, 4096, 128",
              f"{name}: trtllm windows {line and line.group(1)}")
    # duo reads no model: the mask's model.path need not exist.
    mask = write_mask(root, f"{name}-d", "10000011", os.path.join(root, "nowhere"))
    rc, text = bosch(exe, "--format", "duo", "--mask", mask, "--out", os.path.join(root, name + "-duo"))
    check(rc == 0 and "recent_size 128" in text, f"{name}: duo exited {rc}: {text}")


def main():
    exe, real = sys.argv[1], "--transformers" in sys.argv[3:]
    if real:
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:
            print(f"skipped: {exc}")
            return 77
    root = tempfile.mkdtemp(prefix="bosch-export-families-")
    try:
        for name, (family, expressible) in FIXTURES.items():
            check_hf(exe, root, name, family, expressible, real)
            check_trtllm_duo(exe, root, name)
            print(f"{name}: checked")
        # An architecture the export does not know: refused by name, listing
        # the supported ones, nothing written.
        model = os.path.join(root, "gpt2")
        os.makedirs(model)
        with open(os.path.join(model, "config.json"), "w") as f:
            json.dump({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
                       "num_hidden_layers": 4, "max_position_embeddings": 4096}, f)
        mask = write_mask(root, "gpt2", MASKS["mixed"], model)
        for fmt, out in (("hf", "gpt2-hf"), ("trtllm", "gpt2.yaml")):
            rc, text = bosch(exe, "--format", fmt, "--mask", mask, "--out", os.path.join(root, out))
            check(rc == 1 and "architecture GPT2LMHeadModel is not one the export knows "
                  "(supported: Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2ForCausalLM, "
                  "MistralForCausalLM, LlamaForCausalLM)" in text,
                  f"gpt2 {fmt}: exited {rc}: {text}")
            check(not os.path.exists(os.path.join(root, out)), f"gpt2 {fmt}: left {out}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("export per family: ok" + (" (transformers)" if real else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
