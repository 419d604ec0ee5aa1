"""The transformers side: Qwen3ForCausalLM, Qwen3MoeForCausalLM,
Qwen2ForCausalLM, LlamaForCausalLM and MistralForCausalLM with per-unit
sliding windows.

transformers has no per-head sliding window, so the reference runs inside
transformers' own forward with an attention function of ours registered in
its attention registry (AttentionInterface). It is transformers' eager
attention (repeat KV, scores, fp32 softmax cast back, times values) with a
per-head mask: query t sees key s iff s <= t and, when the unit (layer,
h // r) of head h is sliding for that batch element, s > t - window or
s < sink. A layer the config makes sliding (hybrid layer_types) slides over
the config's window with no sink whatever the unit mask, as libbosch-torch
runs it. hf_parity.py checks this function against transformers' stock
eager attention (all full, stock all-sliding, stock layer_types) before
trusting it.

Mixture-of-experts models (a CONFIGS entry with "arch": "moe") run their
experts with transformers' eager experts implementation (the per-expert
loop) so that the reference does not depend on which grouped kernels a
build has; hf_parity.py checks it against the default implementation.
"""
import contextlib

import torch

NAME = "bosch_units"

# What the next forward uses: unit masks bool [B, layers, kv_heads] (None:
# all full), window, sink. Set through unit_masks().
_SPEC = {"masks": None, "window": 1, "sink": 0}


def repeat_kv(x, n_rep):
    # As transformers' repeat_kv: [B, G, T, D] -> [B, G * n_rep, T, D].
    if n_rep == 1:
        return x
    B, G, T, D = x.shape
    return x[:, :, None].expand(B, G, n_rep, T, D).reshape(B, G * n_rep, T, D)


def allowed_keys(layer, B, nH, r, T, S, config_window, device):
    """Bool [B or 1, nH or 1, T, S]: which keys each query of each head sees."""
    t = torch.arange(S - T, S, device=device).view(T, 1)  # query positions (no cache: 0..T-1)
    s = torch.arange(S, device=device).view(1, S)
    causal = s <= t
    if config_window:  # a sliding layer of a hybrid config
        return (causal & (s > t - config_window)).view(1, 1, T, S)
    masks = _SPEC["masks"]
    if masks is None:
        return causal.view(1, 1, T, S)
    window, sink = _SPEC["window"], _SPEC["sink"]
    sliding = causal & ((s > t - window) | (s < sink))
    heads = masks[:, layer].to(device).repeat_interleave(r, dim=1)  # [B, nH]: unit h // r
    return torch.where(heads.view(B, nH, 1, 1), sliding.view(1, 1, T, S),
                       causal.view(1, 1, T, S))


def unit_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                   **kwargs):
    """transformers' eager_attention_forward with the per-head mask above
    in place of attention_mask (the eager mask register() has transformers
    build, unused). Masked scores are -inf where eager adds finfo.min: both
    give probability 0 exactly."""
    r = module.num_key_value_groups
    if scaling is None:
        scaling = module.head_dim ** -0.5
    k = repeat_kv(key, r)
    v = repeat_kv(value, r)
    scores = torch.matmul(query, k.transpose(2, 3)) * scaling
    B, nH, T, S = scores.shape
    ok = allowed_keys(module.layer_idx, B, nH, r, T, S, kwargs.get("sliding_window"),
                      query.device)
    scores = scores.masked_fill(~ok, float("-inf"))
    probs = torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    out = torch.matmul(probs, v).transpose(1, 2).contiguous()
    return out, probs


def register():
    """Registers unit_attention under NAME (transformers >= 4.52 has
    AttentionInterface; older ones a plain dict)."""
    try:
        from transformers import AttentionInterface
        AttentionInterface.register(NAME, unit_attention)
    except ImportError:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        ALL_ATTENTION_FUNCTIONS[NAME] = unit_attention
    # Masks built as for eager attention (>= 4.53), so that every version
    # prepares its mask arguments alike; unit_attention ignores them.
    try:
        from transformers.masking_utils import AttentionMaskInterface, eager_mask
        AttentionMaskInterface.register(NAME, eager_mask)
    except ImportError:
        pass


def set_attention(model, name):
    """Switches a built model between "eager" and NAME (the checks against
    stock attention would show a switch that did not happen)."""
    if hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation(name)
        except (ValueError, KeyError):  # a version that validates names its own way
            pass
    model.config._attn_implementation = name  # older versions read the field per call
    return model


@contextlib.contextmanager
def unit_masks(masks, window, sink):
    old = dict(_SPEC)
    _SPEC.update(masks=masks, window=window, sink=sink)
    try:
        yield
    finally:
        _SPEC.update(old)


def logits(model, tokens, masks=None, window=1, sink=0):
    """fp32 logits [B, T, V] of `tokens` (list of rows or a tensor) under
    per-element unit masks (nested lists [B][L * G], a bool tensor
    [B, L, G], or None for all full)."""
    device = next(model.parameters()).device
    ids = torch.as_tensor(tokens, device=device)
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    m = None
    if masks is not None:
        cfg = model.config
        m = torch.as_tensor(masks, dtype=torch.bool, device=device).view(
            ids.shape[0], cfg.num_hidden_layers, cfg.num_key_value_heads)
    with torch.no_grad(), unit_masks(m, window, sink):
        return model(input_ids=ids, use_cache=False).logits.float()


# ---------------------------------------------------------------------------
# Models

MOE_ARCH = "moe"

# A CONFIGS entry's "arch" -> (config class, model class, model_type);
# Qwen3 when absent.
FAMILIES = {
    None: ("Qwen3Config", "Qwen3ForCausalLM", "qwen3"),
    MOE_ARCH: ("Qwen3MoeConfig", "Qwen3MoeForCausalLM", "qwen3_moe"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", "qwen2"),
    "llama": ("LlamaConfig", "LlamaForCausalLM", "llama"),
    "mistral": ("MistralConfig", "MistralForCausalLM", "mistral"),
}
# What a family's config can say about sliding windows: per-layer
# layer_types (Qwen3, Qwen2), one window for every layer (Qwen3-MoE,
# Mistral), none (Llama).
LAYER_TYPES, ALL_LAYERS, NO_WINDOW = "layer_types", "all layers", "none"
WINDOWS = {None: LAYER_TYPES, "qwen2": LAYER_TYPES, MOE_ARCH: ALL_LAYERS,
           "mistral": ALL_LAYERS, "llama": NO_WINDOW}


def arch_of(spec_or_cfg):
    """The FAMILIES key of a CONFIGS entry or of a transformers config."""
    if isinstance(spec_or_cfg, dict):
        return spec_or_cfg.get("arch")
    kind = getattr(spec_or_cfg, "model_type", "")
    for arch, (_, _, model_type) in FAMILIES.items():
        if model_type == kind:
            return arch
    raise ValueError("no family for model_type %r" % kind)


def is_moe(spec_or_cfg):
    """A CONFIGS entry with "arch": "moe", or a Qwen3MoeConfig."""
    if isinstance(spec_or_cfg, dict):
        return spec_or_cfg.get("arch") == MOE_ARCH
    return getattr(spec_or_cfg, "model_type", "") == "qwen3_moe"


def windows_of(spec_or_cfg):
    return WINDOWS[arch_of(spec_or_cfg)]


def make_config(spec, max_len, swa=None, layer_types=None, first_sliding=0):
    """A config of the entry's family (Qwen3 when it names none): all full;
    every layer sliding over `swa` (Qwen3 and Qwen2: stock
    use_sliding_window with max_window_layers 0; Qwen3-MoE and Mistral:
    their one window); or `layer_types` (a list of "full_attention" /
    "sliding_attention") over `swa` (Qwen3 and Qwen2 only); `first_sliding`:
    the max_window_layers of a `swa` config of Qwen3 or Qwen2. Llama has no
    window: `swa` or `layer_types` is a ValueError. The entry's
    rope_parameters (a dict: rope_type and its parameters) and
    max_position_embeddings are used when given."""
    import transformers

    kw = dict(spec)
    arch = kw.pop("arch", None)
    cfg_class = getattr(transformers, FAMILIES[arch][0])
    windows = WINDOWS[arch]
    rope = kw.pop("rope_parameters", None)
    kw.setdefault("max_position_embeddings", max(4096, max_len))
    kw.update(hidden_act="silu")
    if arch not in ("qwen2", "mistral"):
        kw.setdefault("attention_bias", False)
    if (swa or layer_types) and windows == NO_WINDOW:
        raise ValueError("%s has no sliding window" % FAMILIES[arch][0])
    if layer_types:
        if windows != LAYER_TYPES:
            raise ValueError("%s has no layer_types" % FAMILIES[arch][0])
        kw.update(use_sliding_window=True, sliding_window=swa, layer_types=layer_types)
    elif swa and windows == LAYER_TYPES:
        kw.update(use_sliding_window=True, sliding_window=swa, max_window_layers=first_sliding)
    elif swa:
        kw.update(sliding_window=swa)
        if arch == MOE_ARCH:
            kw.update(use_sliding_window=True)
    elif windows != NO_WINDOW:
        kw.update(sliding_window=None)
        if arch != "mistral":
            kw.update(use_sliding_window=False)
    if rope is not None:
        kw["rope_parameters"] = dict(rope, rope_theta=spec["rope_theta"])
    cfg = cfg_class(**kw)
    # transformers >= 5 keeps RoPE settings in rope_parameters.
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict):
        rp["rope_theta"] = spec["rope_theta"]
    cfg._attn_implementation = "eager"
    return cfg


def model_class(arch):
    import transformers
    return getattr(transformers, FAMILIES[arch][1])


def sparse_layers(cfg):
    """The layers whose MLP is the experts block (as Qwen3MoeDecoderLayer
    decides); [] for the dense architecture."""
    if not is_moe(cfg):
        return []
    return [l for l in range(cfg.num_hidden_layers)
            if l not in (cfg.mlp_only_layers or []) and cfg.num_experts > 0
            and (l + 1) % cfg.decoder_sparse_step == 0]


def no_init_weights():
    """transformers' context that skips weight initialisation (every caller
    overwrites the weights: a 1.7b layer's init costs seconds)."""
    try:
        from transformers.initialization import no_init_weights as ctx  # >= 5
    except ImportError:
        try:
            from transformers.modeling_utils import no_init_weights as ctx
        except ImportError:
            return contextlib.nullcontext()
    return ctx()


def build_model(cfg):
    """A Qwen3ForCausalLM (Qwen3MoeForCausalLM) of `cfg` with eager
    attention (and eager experts) and uninitialised weights (buffers such as
    RoPE's inv_freq are computed)."""
    cls = model_class(arch_of(cfg))
    kw = dict(attn_implementation="eager")
    if is_moe(cfg):
        kw.update(experts_implementation="eager")
    with no_init_weights():
        try:
            model = cls._from_config(cfg, **kw)
        except (TypeError, AttributeError, ValueError):
            model = cls(cfg)
    return set_attention(model, "eager").eval()


def reinit(model, seed):
    """Weights at a scale that gives O(1) logits (embeddings N(0, 1), linear
    layers N(0, 1/fan_in), the fused experts [E, out, in] alike, norms
    1 + N(0, 0.1^2); tied embeddings, which are also lm_head, N(0, 1/hidden);
    the MoE router N(0, 1/hidden): O(1) router logits spread the tokens over
    the experts); transformers' own init (std 0.02) makes
    every logit nearly 0 and hides errors, N(0, 1) tied embeddings make
    logits of ~sqrt(hidden) and one-hot softmaxes."""
    g = torch.Generator().manual_seed(seed)
    tied = model.config.tie_word_embeddings
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=g) / (p.shape[1] ** 0.5 if tied else 1))
            elif p.dim() >= 2:  # [out, in], or experts [E, out, in]
                p.copy_(torch.randn(p.shape, generator=g) / (p.shape[-1] ** 0.5))
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
    if model.config.tie_word_embeddings:
        model.tie_weights()


def like(model, cfg):
    """A model of config `cfg` with `model`'s weights, buffers (RoPE's
    inv_freq as loaded), dtype and device."""
    p = next(model.parameters())
    other = build_model(cfg).to(device=p.device, dtype=p.dtype)
    other.load_state_dict(model.state_dict())
    if cfg.tie_word_embeddings:
        other.tie_weights()
    src = dict(model.named_buffers())
    for name, buf in other.named_buffers():
        if name in src:
            buf.data = src[name].clone()
    return other


def transformers_version():
    import transformers
    return transformers.__version__


def load(path, dtype, device):
    """from_pretrained in `dtype` (bf16 weights upcast exactly for f32),
    with the registered attention (and eager experts); the class from
    config.json's architectures."""
    import json
    import os

    with open(os.path.join(path, "config.json")) as f:
        archs = json.load(f).get("architectures") or []
    arch = next((a for a, names in FAMILIES.items() if names[1] in archs), None)
    moe = arch == MOE_ARCH
    major, minor = (int(x) for x in transformers_version().split(".")[:2])
    # transformers < 4.56 names the argument torch_dtype (and would take an
    # unknown dtype= for a config field).
    kw = {"dtype" if (major, minor) >= (4, 56) else "torch_dtype": dtype}
    if moe:
        kw.update(experts_implementation="eager")
    model = model_class(arch).from_pretrained(path, attn_implementation="eager", **kw)
    if next(model.parameters()).dtype != dtype:
        raise RuntimeError("from_pretrained gave %s, not %s"
                           % (next(model.parameters()).dtype, dtype))
    return set_attention(model.to(device).eval(), NAME)


def set_experts(model, name):
    """Switches a MoE model's experts implementation ("eager", "grouped_mm",
    ...); returns the previous one."""
    old = model.config._experts_implementation
    model.set_experts_implementation(name)
    if model.config._experts_implementation != name:
        raise RuntimeError("experts implementation %s did not take" % name)
    return old


def routers(model):
    """The routers of a MoE model's sparse layers, in layer order."""
    return [mod for _, mod in model.named_modules() if type(mod).__name__.endswith("TopKRouter")]


@contextlib.contextmanager
def routing(model):
    """Collects, during the forwards inside, each sparse layer's routing: a
    list (one entry per forward and sparse layer, in order) of (router
    logits f32 [tokens, E], chosen experts [tokens, k]); token row b * T + t."""
    out, hooks = [], []

    def hook(module, args, result):
        logits, _, idx = result
        out.append((logits.detach().float(), idx.detach()))
    for r in routers(model):
        hooks.append(r.register_forward_hook(hook))
    try:
        yield out
    finally:
        for h in hooks:
            h.remove()


def route_gaps(logits, k):
    """(router logit gap between the k-th and (k+1)-th expert [tokens], the
    top k with those two swapped [tokens, k]) of one sparse layer."""
    top = logits.topk(k + 1, dim=-1)
    gap = top.values[:, k - 1] - top.values[:, k]
    alt = top.indices[:, :k].clone()
    alt[:, k - 1] = top.indices[:, k]
    return gap, alt


@contextlib.contextmanager
def forced_routes(model, forced):
    """Routes some tokens to other experts in the forwards inside: forced
    {(sparse layer #, token row b * T + t): [expert ids]}. Their weights are
    the router's softmax probabilities of those experts (renormalised under
    norm_topk_prob), as the router weighs its own choice; the other tokens
    route as usual."""
    patched = []
    for li, r in enumerate(routers(model)):
        mine = {n: e for (l, n), e in forced.items() if l == li}
        if not mine:
            continue

        def forward(h, r=r, mine=mine, orig=type(r).forward):
            logits, scores, idx = orig(r, h)
            probs = torch.softmax(logits, dim=-1, dtype=torch.float)
            idx, scores = idx.clone(), scores.clone()
            for n, experts in mine.items():
                sel = torch.tensor(experts, device=idx.device)
                w = probs[n, sel]
                if r.norm_topk_prob:
                    w = w / w.sum()
                idx[n] = sel
                scores[n] = w.to(scores.dtype)
            return logits, scores, idx
        r.forward = forward  # shadows the class's forward for this module
        patched.append(r)
    try:
        yield
    finally:
        for r in patched:
            del r.forward


def layer_types_of(cfg):
    return list(getattr(cfg, "layer_types", None) or [])


# ---------------------------------------------------------------------------
# Greedy decoding (no cache: every step re-runs the sequence, as the
# evaluator's MATCH does).

def greedy(model, prompt, steps, masks=None, window=1, sink=0, stop=None, gaps=None):
    """Greedy continuation of `prompt` under one unit mask ([L * G] or None).
    stop(id) -> None (keep going), "keep" (append and stop) or "drop" (stop
    without it). `gaps` (a list) gets each step's top-1 / top-2 logit gap."""
    ids = list(prompt)
    for _ in range(steps):
        row = logits(model, [ids], None if masks is None else [masks], window, sink)[0, -1]
        nxt = int(row.argmax())
        if gaps is not None:
            top2 = row.topk(2).values
            gaps.append((top2[0] - top2[1]).item())
        verdict = stop(nxt) if stop else None
        if verdict == "drop":
            break
        ids.append(nxt)
        if verdict == "keep":
            break
    return ids[len(prompt):]
