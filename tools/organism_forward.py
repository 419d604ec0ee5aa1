#!/usr/bin/python3
"""The organism training script's own forward, behind ref_qwen3.py's interface.

    organism_forward.py CKPT_DIR INPUT_JSON OUTPUT_BIN

Loads a checkpoint in the Hugging Face layout into train_organism.Qwen3 (the
very module the organism is trained with) and writes its logits at every
position, float32 [B, T, vocab], for the per-unit masks of INPUT_JSON (same
format as tools/ref_qwen3.py; f32 only). test/torch runs it against
libbosch-torch: equal logits show that the model the search sees is the model
that was trained. Exit 2 for an input it does not support (dtype other than
f32).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_qwen3  # noqa: E402  (only its file reader: safetensors + index)
import train_organism  # noqa: E402


def load(ckpt):
    cfg, w = ref_qwen3.load_checkpoint(ckpt)
    c = dict(cfg)
    if c.get("rope_theta") is None:
        c["rope_theta"] = cfg["rope_parameters"]["rope_theta"]
    if "head_dim" not in c:
        c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
    model = train_organism.Qwen3(c)
    if cfg.get("tie_word_embeddings", False):
        w = dict(w)
        w["lm_head.weight"] = w["model.embed_tokens.weight"]
    # hf_tensors() names every parameter; load through the same mapping.
    names = {id(p): n for n, p in model.hf_params().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(w[names[id(p)]].float())
    return model.eval()


def load_with_stream(ckpt, lag=2):
    """The checkpoint in eval mode and the Markov chain of its training stream
    (seed 12345, recipe.json's markov_seed), for drawing prompts like it was
    trained on."""
    model = load(ckpt)
    markov = train_organism.Markov(model.c["vocab_size"], 12345)
    markov.lag = lag
    return model, markov


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: organism_forward.py CKPT_DIR INPUT_JSON OUTPUT_BIN")
    ckpt, inp, outp = sys.argv[1:]
    with open(inp) as f:
        req = json.load(f)
    if req.get("dtype", "f32") != "f32":
        print("organism_forward.py: f32 only", file=sys.stderr)
        sys.exit(2)
    model = load(ckpt)
    tok = torch.tensor(req["tokens"], dtype=torch.int64)
    B = tok.shape[0]
    L, G = model.c["num_hidden_layers"], model.c["num_key_value_heads"]
    swa = None
    if req.get("masks") is not None:
        swa = torch.tensor(req["masks"], dtype=torch.bool).view(B, L, G)
    with torch.no_grad():
        logits = model(tok, swa, req["window"], req["sink"]).float().contiguous()
    with open(outp, "wb") as f:
        f.write(logits.numpy().tobytes())


if __name__ == "__main__":
    main()
