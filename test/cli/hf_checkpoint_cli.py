#!/usr/bin/env python3
"""The bosch command end to end on checkpoints that transformers itself
wrote (save_pretrained): a Qwen3ForCausalLM, and a Qwen3MoeForCausalLM in
both of transformers 5's expert layouts (one tensor per expert, its default,
and fused: save_original_format=False). For each: search, eval, a static
and an evaluated baseline, export (duo; hf of an all-sliding selection,
which the exported config must then load with every layer sliding). The
two MoE layouts must give the same scores.

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
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("hf checkpoints through the bosch command: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
