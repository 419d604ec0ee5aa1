#!/usr/bin/env python3
"""libbosch-torch's generation through its hybrid KV cache
(bosch_torch_generate) against transformers' own generation for
layer-level masks, per family (--families: Qwen3, Qwen2, Mistral, Llama):
generate(), greedy, with its stock attention (eager and sdpa) and its own
cache, which for a config.json with sliding layers keeps a sliding window
on them.

A random model of the family (the "tiny" shape of hf_parity.py, 4 layers,
f32; Llama with attention and MLP biases) is saved twice with the same
weights: "base" (every layer full) and "types": odd layers
"sliding_attention" over --window tokens (Qwen3, Qwen2: layer_types), every
layer (Mistral: its sliding_window). Llama's config has no window: its
"types" reference is transformers' generate() with the per-unit attention
of tools/parity/reference.py on the odd layers (eager arithmetic, its full
cache), which hf_parity.py checks against stock attention. For each prompt (one
longer than the window, so that the sliding layers drop keys while
decoding; one shorter, so that the window is crossed during decoding):

  hf-full   transformers on base          = ours on base, no mask
  hf-types  transformers on types          = ours on types, no mask (the
                                             config's windows), and ours on
                                             base with the odd layers' units
                                             sliding (window W, sink 0)
Tokens must be identical; transformers' per-step logits (output_logits)
are compared with libbosch-torch's masked forward over the whole sequence
at the same positions (max abs <= --tol); transformers' cache must hold
fewer than the prompt + new tokens on the sliding layers (else it would
not be the layer_types cache under test), and ours the bytes its mask
says. Exit 77 without torch and transformers.

  tools/hf_generate_parity.py --lib BUILD/lib/torch/libbosch-torch.so.0
"""
import argparse
import os
import random
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SPEC = dict(vocab_size=264, hidden_size=64, intermediate_size=96, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            tie_word_embeddings=False, rope_theta=10000.0, rms_norm_eps=1e-6)


def hf_generate(model, prompt, max_new):
    """transformers' greedy generation with its own cache: (tokens, [steps, V]
    logits, tokens held per layer by its cache at the end)."""
    import torch
    out = model.generate(torch.tensor([prompt]), max_new_tokens=max_new, min_new_tokens=max_new,
                         do_sample=False, output_logits=True, return_dict_in_generate=True,
                         eos_token_id=None, pad_token_id=0)
    tokens = out.sequences[0, len(prompt):].tolist()
    logits = torch.stack([l[0] for l in out.logits]).float()
    held = []
    cache = out.past_key_values
    for layer in getattr(cache, "layers", []):
        keys = getattr(layer, "keys", None)
        held.append(int(keys.shape[-2]) if keys is not None else -1)
    return tokens, logits, held


# Per family: the CONFIGS entry's "arch" (Qwen3 when None) and how its
# config slides the "types" checkpoint's layers: layer_types (odd layers),
# one window on every layer (Mistral), or none (Llama: its "types"
# generation is transformers' generate() with the per-unit attention of
# tools/parity/reference.py on the odd layers, checked against stock
# attention by hf_parity.py).
FAMILIES = ("qwen3", "qwen2", "mistral", "llama")


def family_spec(family):
    spec = dict(SPEC)
    if family == "llama":
        spec.update(arch="llama", attention_bias=True, mlp_bias=True)
    elif family != "qwen3":
        spec.update(arch=family)
    return spec


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libbosch-torch.so.0 of a build")
    ap.add_argument("--window", type=int, default=8)
    ap.add_argument("--new", type=int, default=24, help="new tokens per prompt")
    ap.add_argument("--prompts", default="40,5", help="prompt lengths")
    ap.add_argument("--tol", type=float, default=1e-5, help="max abs logit difference")
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="comma-separated, of %s" % ", ".join(FAMILIES))
    args = ap.parse_args(argv)
    try:
        import torch
        import transformers

        import hf_parity
        from parity import reference
    except ImportError as exc:
        print("skipped: %s" % exc)
        return 77
    if not os.path.exists(args.lib):
        sys.stderr.write("libbosch-torch not found: %s\n" % args.lib)
        return 2
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    reference.register()  # Llama's reference: the per-unit attention
    print("torch %s, transformers %s" % (torch.__version__, transformers.__version__))
    failed = []
    for family in args.families.split(","):
        if family not in FAMILIES:
            raise SystemExit("unknown family %r" % family)
        run_family(family, args, failed)
    print("%s: %d failed" % ("FAIL" if failed else "ok", len(failed)))
    return 1 if failed else 0


def run_family(family, args, failed):
    import torch

    import hf_parity
    from parity import reference
    spec = family_spec(family)
    windows = reference.windows_of(spec)
    W, L, G = args.window, SPEC["num_hidden_layers"], SPEC["num_key_value_heads"]
    every = windows == reference.ALL_LAYERS  # Mistral: its window slides every layer
    sliding = [every or l % 2 == 1 for l in range(L)]
    kinds = ["sliding_attention" if s else "full_attention" for s in sliding]
    layer_mask = [1 if sliding[l] else 0 for l in range(L) for _ in range(G)]
    lengths = [int(x) for x in args.prompts.split(",")]
    rng = random.Random(7)
    prompts = [[rng.randrange(3, SPEC["vocab_size"]) for _ in range(n)] for n in lengths]
    tmp = tempfile.mkdtemp(prefix="bosch-hf-generate-")
    cls = reference.model_class(spec.get("arch"))

    def line(what, detail, ok):
        what = "%s %s" % (family, what)
        print("%-42s %s%s" % (what, detail, "" if ok else "  FAILED"), flush=True)
        if not ok:
            failed.append(what)

    try:
        max_len = max(lengths) + args.new
        base = reference.build_model(reference.make_config(spec, max_len))
        reference.reinit(base, 1234)
        models = [("base", base)]
        if windows != reference.NO_WINDOW:
            types_cfg = (reference.make_config(spec, max_len, W) if every else
                         reference.make_config(spec, max_len, W, kinds))
            models.append(("types", reference.like(base, types_cfg)))
        ckpt = {}
        for name, m in models:
            ckpt[name] = os.path.join(tmp, name)
            m.save_pretrained(ckpt[name], safe_serialization=True)
        # transformers' own generation, as its users run it: stock attention.
        ref = {}
        for impl in ("eager", "sdpa"):
            for name in ckpt:
                m = cls.from_pretrained(ckpt[name], dtype=torch.float32,
                                        attn_implementation=impl).eval()
                with torch.no_grad():
                    ref[impl, name] = [hf_generate(m, p, args.new) for p in prompts]
        if "types" not in ckpt:
            # Llama: the per-unit attention on the odd layers, in transformers'
            # generate() and its full cache (eager's arithmetic).
            m = reference.load(ckpt["base"], torch.float32, torch.device("cpu"))
            with torch.no_grad(), reference.unit_masks(
                    torch.tensor(layer_mask, dtype=torch.bool).view(1, L, G), W, 0):
                units = [hf_generate(m, p, args.new) for p in prompts]
            ref["eager", "types"] = ref["sdpa", "types"] = units
        for i, p in enumerate(prompts):
            for name in ckpt:
                same = ref["eager", name][i][0] == ref["sdpa", name][i][0]
                line("hf eager = sdpa %s p%d" % (name, len(p)),
                     "tokens %s" % ("equal" if same else "differ"), same)
            if "types" not in ckpt:
                continue
            held = ref["sdpa", "types"][i][2]
            want = len(p) + args.new - 1  # the last token is never fed back
            slid = all(held[l] < want for l in range(L) if sliding[l]) and \
                all(held[l] == want for l in range(L) if not sliding[l])
            line("hf sliding cache p%d" % len(p), "tokens held per layer %s (full: %d)"
                 % (held, want), slid or len(p) + args.new - 1 <= W)
        # Ours: the cache's tokens; the masked forward's logits at the
        # positions where transformers produced each new token.
        runs = {name: [] for name in ckpt}
        for i, p in enumerate(prompts):
            for name, mask, expect in (("base", None, "base"), ("base", layer_mask, "types"),
                                       ("types", None, "types")):
                if name not in ckpt:
                    continue
                tag = "%s-%s-p%d" % (name, "layers" if mask else "nomask", len(p))
                seq = p + ref["sdpa", expect][i][0]
                pos = list(range(len(p) - 1, len(seq) - 1))
                runs[name].append(dict(
                    tag=tag, expect=expect, i=i,
                    gen=dict(name=tag, prompt=p, mask=mask, window=W, sink=0,
                             max_new=args.new),
                    fw=dict(name=tag, tokens=[seq], masks=None if mask is None else [mask],
                            window=W, sink=0, positions=pos,
                            out=os.path.join(tmp, tag + ".bin"))))
        for name, cases in runs.items():
            # hf_parity.py's child process (tools/parity/child.py), on the CPU in f32
            res = hf_parity.run_backend(argparse.Namespace(lib=args.lib, device="cpu"),
                                        ckpt[name], "f32", [c["fw"] for c in cases], [], tmp,
                                        name, generations=[c["gen"] for c in cases])
            if isinstance(res, str):
                raise SystemExit(res)
            V = SPEC["vocab_size"]
            for c in cases:
                want_tokens, want_logits, _ = ref["sdpa", c["expect"]][c["i"]]
                g = res["generations"][c["tag"]]
                if isinstance(g, str):
                    line(c["tag"], g, False)
                    continue
                same = g["tokens"] == want_tokens
                line(c["tag"] + " tokens", "%d new tokens %s hf-%s's" % (
                    len(g["tokens"]), "equal" if same else "differ from", c["expect"]), same)
                ours = res["forwards"][c["tag"]]
                if isinstance(ours, str):
                    line(c["tag"] + " logits", ours, False)
                    continue
                ours = ours.view(len(want_tokens), V)
                d = (ours.double() - want_logits.double()).abs().max().item()
                line(c["tag"] + " logits", "max abs %.2e vs hf's generate steps (tol %g)"
                     % (d, args.tol), d <= args.tol)
                p = prompts[c["i"]]
                cap = len(p) + args.new
                slides = c["expect"] == "types" and W < cap
                units_swa = sum(sliding) * G if slides else 0
                elem = 2 * SPEC["head_dim"] * 4
                want_bytes = elem * ((L * G - units_swa) * cap + units_swa * W)
                ok = g["kv_bytes"] == want_bytes and g["kv_bytes_full"] == elem * L * G * cap
                line(c["tag"] + " bytes", "%d held of %d (expected %d)" % (
                    g["kv_bytes"], g["kv_bytes_full"], want_bytes), ok)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
