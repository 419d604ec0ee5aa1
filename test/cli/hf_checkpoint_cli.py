#!/usr/bin/env python3
"""The bosch command end to end on checkpoints that transformers itself
wrote (save_pretrained): a Qwen3ForCausalLM, and a Qwen3MoeForCausalLM in
both of transformers 5's expert layouts (one tensor per expert, its default,
and fused: save_original_format=False). For each: search, eval, a static
and an evaluated baseline, export (duo; hf of an all-sliding selection,
which the exported config must then load with every layer sliding). The
two MoE layouts must give the same scores. Then a LlamaForCausalLM, a
MistralForCausalLM and a Qwen2ForCausalLM: search, eval, every baseline
kind, generate --check, export duo and trtllm, and hf where the family's
config can say the mask (Mistral, Qwen2; Llama's refusal).

  hf_checkpoint_cli.py BOSCH

Run with a Python that has PyTorch 2.x and transformers (meson option
torch_python); exit 77 (skipped) without them."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TINY = dict(vocab_size=128, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6,
            tie_word_embeddings=False, max_position_embeddings=4096)
MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, norm_topk_prob=True,
           mlp_only_layers=[1])
SEED = 5
COMMON = ["--niah", "--context", "64", "--samples", "2", "--metric", "logprob", "--device",
          "cpu"]


def fail(msg):
    sys.stderr.write("FAIL: %s\n" % msg)
    sys.exit(1)


def run(bosch, args, expect=0):
    r = subprocess.run([bosch] + args, capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode != expect:
        sys.stderr.write(out)
        fail("'bosch %s' exited %d, expected %d" % (" ".join(args), r.returncode, expect))
    return out


def write_models(tmp):
    import torch
    import transformers
    from transformers import (Qwen3Config, Qwen3ForCausalLM, Qwen3MoeConfig,
                              Qwen3MoeForCausalLM)
    transformers.utils.logging.disable_progress_bar()
    dirs = {}
    for name, cls, cfg in (("dense", Qwen3ForCausalLM, Qwen3Config(**TINY)),
                           ("moe", Qwen3MoeForCausalLM, Qwen3MoeConfig(**TINY, **MOE))):
        torch.manual_seed(SEED)
        model = cls(cfg).eval()
        with torch.no_grad():  # weights large enough that full attention beats sliding
            for p in model.parameters():
                if p.dim() > 1:
                    p.normal_(0, 0.3)
        dirs[name] = os.path.join(tmp, name)
        model.save_pretrained(dirs[name])
        if name == "moe":
            dirs["moe-fused"] = os.path.join(tmp, "moe-fused")
            model.save_pretrained(dirs["moe-fused"], save_original_format=False)
    from safetensors import safe_open
    layouts = {}
    for name in ("moe", "moe-fused"):
        with safe_open(os.path.join(dirs[name], "model.safetensors"), "pt") as f:
            keys = set(f.keys())
        layouts[name] = ("model.layers.0.mlp.experts.0.gate_proj.weight" in keys,
                         "model.layers.0.mlp.experts.gate_up_proj" in keys)
    if layouts != {"moe": (True, False), "moe-fused": (False, True)}:
        fail("transformers did not write the two expert layouts: %s" % layouts)
    return dirs


# The families beyond Qwen3 (issue 51): config class, model class, the
# config's own fields. Mistral without a window (Mistral v0.2 and later;
# a window would fix every layer as sliding), Llama with both biases.
FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(attention_bias=True, mlp_bias=True)),
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(sliding_window=None)),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(use_sliding_window=False)),
}
# What `bosch export --format hf` of an all-sliding mask does per family:
# a config that slides every layer, or a refusal naming why (Llama's config
# has no window).
HF_EXPORT = {"llama": None, "mistral": "sliding_window", "qwen2": "use_sliding_window"}
# The seed of each family's random weights: one whose all-full anchor beats
# all-SWA on the NIAH task (random weights do so about half the time; search
# refuses anchors that do not, BOSCH_E_ANCHORS), found with PyTorch 2.15.
FAMILY_SEEDS = {"llama": 7, "mistral": 8, "qwen2": 5}
KINDS = ["rand", "intr", "bme", "ablation", "layer-probe", "locality", "retrieval",
         "echo-induction", "fisher", "duo-on-the-fly"]


def write_family(tmp, family):
    import torch
    import transformers
    cfg_name, cls_name, extra = FAMILIES[family]
    cfg = getattr(transformers, cfg_name)(**TINY, **extra)
    torch.manual_seed(FAMILY_SEEDS[family])
    model = getattr(transformers, cls_name)(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
    d = os.path.join(tmp, family)
    model.save_pretrained(d)
    return d


def check_family(bosch, tmp, family):
    """search, eval, every baseline kind, generate --check and the exports
    on a checkpoint of the family that transformers wrote."""
    d = write_family(tmp, family)
    model = ["--model", d]
    out = run(bosch, ["search"] + model + COMMON +
              ["--budget", "24", "--out", os.path.join(tmp, family + "-s")])
    mask = os.path.join(tmp, family + "-s.json")
    out = run(bosch, ["eval", "--mask", mask] + model + COMMON)
    score = re.findall(r"^score .*$", out, re.M)
    if not score:
        fail("%s: eval printed no score:\n%s" % (family, out))
    for kind in KINDS:
        run(bosch, ["baseline", "--kind", kind] + model + COMMON +
            ["--ratio", "0.5", "--out", os.path.join(tmp, "%s-%s" % (family, kind))])
    out = run(bosch, ["generate", "--check", "--mask", mask, "--max-new", "6"] + model +
              [a for a in COMMON if a not in ("--metric", "logprob")])
    if "check: the masked forward over the whole sequence gives the same" not in out:
        fail("%s: generate --check did not check:\n%s" % (family, out))
    run(bosch, ["export", "--format", "duo", "--out", os.path.join(tmp, family + "-duo"), mask])
    run(bosch, ["export", "--format", "trtllm", "--model", d, "--out",
                os.path.join(tmp, family + "-trt.yaml"), os.path.join(tmp, family + "-rand.json")])
    run(bosch, ["baseline", "--kind", "layer-probe"] + model + COMMON +
        ["--ratio", "1", "--out", os.path.join(tmp, family + "-all")])
    hf = os.path.join(tmp, family + "-hf")
    all_mask = os.path.join(tmp, family + "-all.json")
    if HF_EXPORT[family] is None:
        out = run(bosch, ["export", "--format", "hf", "--model", d, "--out", hf, all_mask],
                  expect=1)
        if os.path.exists(hf) or "trtllm" not in out:
            fail("%s: the hf export was not refused cleanly:\n%s" % (family, out))
    else:
        run(bosch, ["export", "--format", "hf", "--model", d, "--out", hf, all_mask])
        out = run(bosch, ["eval", "--mask", all_mask, "--model", hf] + COMMON)
        if "0,1,2,3 slide over 16 tokens" not in out:
            fail("%s: the exported config does not slide every layer:\n%s" % (family, out))
    print("%s: search, eval, %d baselines, generate --check, exports ok; %s"
          % (family, len(KINDS), score))


def main():
    bosch = sys.argv[1]
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        from transformers import Qwen3MoeForCausalLM  # noqa: F401
    except ImportError as exc:
        print("skipped: %s" % exc)
        return 77
    tmp = tempfile.mkdtemp(prefix="bosch-hf-cli-")
    try:
        dirs = write_models(tmp)
        scores = {}
        for name, d in dirs.items():
            model = ["--model", d]
            out = run(bosch, ["search"] + model + COMMON +
                      ["--budget", "24", "--out", os.path.join(tmp, name + "-s")])
            if name.startswith("moe") and "MoE: 4 experts (2 per token) in 3 of 4 layers" not in out:
                fail("%s: the experts not described:\n%s" % (name, out))
            mask = os.path.join(tmp, "moe-s.json" if name.startswith("moe") else name + "-s.json")
            out = run(bosch, ["eval", "--mask", mask] + model + COMMON)
            scores[name] = re.findall(r"^score .*$", out, re.M)
            for kind in ("fisher", "ablation"):
                run(bosch, ["baseline", "--kind", kind] + model + COMMON +
                    ["--ratio", "0.5", "--out", os.path.join(tmp, "%s-%s" % (name, kind))])
            run(bosch, ["export", "--format", "duo", "--out", os.path.join(tmp, name + "-duo"),
                        mask])
            run(bosch, ["baseline", "--kind", "layer-probe"] + model + COMMON +
                ["--ratio", "1", "--out", os.path.join(tmp, name + "-all")])
            hf = os.path.join(tmp, name + "-hf")
            run(bosch, ["export", "--format", "hf", "--out", hf,
                        os.path.join(tmp, name + "-all.json")])
            with open(os.path.join(hf, "config.json")) as f:
                if json.load(f).get("use_sliding_window") is not True:
                    fail("%s: exported config without use_sliding_window" % name)
            out = run(bosch, ["eval", "--mask", os.path.join(tmp, name + "-all.json"),
                              "--model", hf] + COMMON)
            if "0,1,2,3 slide over 16 tokens" not in out:
                fail("%s: the exported config does not slide every layer:\n%s" % (name, out))
            print("%s: search, eval, baselines, export ok; %s" % (name, scores[name]))
        if not scores["moe"] or scores["moe"] != scores["moe-fused"]:
            fail("the two expert layouts score differently: %s / %s"
                 % (scores["moe"], scores["moe-fused"]))
        for family in FAMILIES:
            check_family(bosch, tmp, family)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("hf checkpoints through the bosch command: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
