"""bosch.hf: a selection inside Hugging Face transformers (issue 39).

``apply(model, selection)`` makes a transformers model attend per KV group
as the selection says: a sliding unit (layer, KV group) lets each query see
itself and the ``window - 1`` keys before it plus the first ``sink`` keys,
a full unit every earlier key, exactly as libbosch-torch's forward. Nothing
of the modeling code is forked: an attention function is registered in
transformers' own registry (``AttentionInterface``, with its mask builder
in ``AttentionMaskInterface``) and the model is switched to it; every
attention module of the model (Qwen3, and the Qwen2 and Llama families
that call the same registry) carries its layer's sliding KV groups.
``remove(model)`` (or ``Applied.remove()``, or leaving a ``with`` block)
switches the model back to the attention it had; ``applied(model)`` says
what is applied.

Backends (``backend=``):
  "sdpa"  PyTorch's scaled_dot_product_attention, once for the layer's full
          heads (the model's causal/padding mask) and once for its sliding
          heads (that mask and the window band): exact, any device; the
          mask is [batch, 1, queries, keys], so memory grows with the square
          of the sequence (fine to a few thousand tokens);
  "flex"  torch.nn.attention.flex_attention with a block mask built from
          the per-head rule (PyTorch >= 2.5): the sliding heads skip the
          blocks outside their band; compiled on CUDA (torch.compile), run
          as is elsewhere (slow, for checking);
  "auto"  flex on CUDA when PyTorch has it, else sdpa.

Positions: a query at the last T of S key slots is at slot S - T + i (the
positions transformers' DynamicCache and its mask builder use), so prefill,
a forward without cache, and greedy decoding through a DynamicCache are
exact. Batches must not be left-padded when ``sink > 0`` or the window
matters at the padding (the sink would count pads): pad on the right, as
bosch's evaluators do. A layer the config already makes sliding
(``layer_types``) keeps transformers' own behaviour, as libbosch-torch
keeps the config's window there.

Needs torch and transformers (>= 4.53 for AttentionMaskInterface); imported
lazily, so ``import bosch`` does not need them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["apply", "remove", "applied", "reapply", "Applied", "ATTENTION_NAME", "Evaluator", "Task",
           "Sample"]

#: The name under which the attention function is registered.
ATTENTION_NAME = "bosch_units"

_registered = False


@dataclass
class Applied:
    """What ``apply`` did to a model: the unit mask (layers x KV groups,
    1 = sliding), window, sink, backend, and the attention implementation
    the model had before (restored by ``remove``)."""
    model: object
    mask: list
    layers: int
    kv_groups: int
    window: int
    sink: int
    backend: str
    previous: str
    modules: list = field(default_factory=list, repr=False)

    def modules_by_layer(self) -> list:
        """The attention modules, layer 0 first."""
        return sorted(self.modules, key=lambda m: int(m.layer_idx))

    def sliding_groups(self, layer: int) -> list[int]:
        """The KV groups of `layer` that slide."""
        g = self.kv_groups
        return [j for j in range(g) if self.mask[layer * g + j]]

    @property
    def ratio(self) -> float:
        return sum(self.mask) / len(self.mask)

    def remove(self) -> None:
        remove(self.model)

    def __enter__(self) -> "Applied":
        return self

    def __exit__(self, *exc) -> None:
        if applied(self.model) is self:
            self.remove()


def _imports():
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without torch
        raise ImportError("bosch.hf needs torch and transformers: %s" % exc) from exc


def _mask_builder(*args, **kwargs):
    """transformers' sdpa mask, always materialised (never None for a
    plain causal batch): the attention below combines it with the band."""
    from transformers.masking_utils import sdpa_mask
    kwargs["allow_is_causal_skip"] = False
    return sdpa_mask(*args, **kwargs)


def _register() -> None:
    global _registered
    if _registered:
        return
    _imports()
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface
    AttentionInterface.register(ATTENTION_NAME, _attention)
    AttentionMaskInterface.register(ATTENTION_NAME, _mask_builder)
    _registered = True


def _repeat_kv(x, n_rep: int):
    if n_rep == 1:
        return x
    b, g, s, d = x.shape
    return x[:, :, None].expand(b, g, n_rep, s, d).reshape(b, g * n_rep, s, d)


def _first_keys(base):
    """Per batch row of the model's mask [B, 1, T, S]: the first key any query
    sees, i.e. the first token after left padding (0 without padding)."""
    import torch
    seen = base[:, 0].any(dim=1)  # [B, S]
    return torch.argmax(seen.to(torch.int32), dim=1)


def _band(T: int, S: int, window: int, sink: int, device, first):
    """Bool [B, 1, T, S]: key s is inside query t's window or sink (t at slot
    S - T + t). The sink is the first `sink` tokens of the sequence: with
    left padding (`first`, per batch row: _first_keys), the tokens after the
    padding, as if the row had none; the window counts distances, which
    padding on the left does not change."""
    import torch
    q = torch.arange(S - T, S, device=device).view(T, 1)
    k = torch.arange(S, device=device).view(1, S)
    f = first.to(device).view(-1, 1, 1, 1)
    return (k > q - window) | ((k >= f) & (k < f + sink))


def _base_mask(attention_mask, T: int, S: int, device):
    """The model's mask as bool [B or 1, 1, T, S] (True = attend)."""
    import torch
    if attention_mask is None:
        q = torch.arange(S - T, S, device=device).view(T, 1)
        return (torch.arange(S, device=device).view(1, S) <= q).view(1, 1, T, S)
    if attention_mask.dtype == torch.bool:
        return attention_mask[..., -S:]
    return attention_mask[..., -S:] == 0  # an additive float mask: 0 = attend


def _sdpa(query, key, value, mask, scaling, dropout):
    import torch
    return torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=dropout, scale=scaling)


def _attention_sdpa(module, query, key, value, attention_mask, spec, scaling, dropout):
    import torch
    B, H, T, D = query.shape
    S = key.shape[2]
    base = _base_mask(attention_mask, T, S, query.device)
    heads = spec["head_sliding"].to(query.device)  # [H], or [B, H]: a mask per batch row
    if heads.dim() == 2:
        rows = []
        for b in range(B):
            one = dict(spec, head_sliding=heads[b])
            m = base[b:b + 1] if base.shape[0] > 1 else base
            rows.append(_attention_sdpa_rows(module, query[b:b + 1], key[b:b + 1],
                                             value[b:b + 1], m, one, scaling, dropout))
        return torch.cat(rows, 0)
    return _attention_sdpa_rows(module, query, key, value, base, spec, scaling, dropout)


def _attention_sdpa_rows(module, query, key, value, base, spec, scaling, dropout):
    """The batch rows of one unit mask: its full heads, then its sliding ones."""
    import torch
    T, S = query.shape[2], key.shape[2]
    r = module.num_key_value_groups
    k = _repeat_kv(key, r)
    v = _repeat_kv(value, r)
    heads = spec["head_sliding"].to(query.device)
    out = torch.empty_like(query)
    for sliding in (False, True):
        idx = torch.nonzero(heads == sliding).view(-1)
        if idx.numel() == 0:
            continue
        mask = base & _band(T, S, spec["window"], spec["sink"], query.device,
                            _first_keys(base)) if sliding else base
        o = _sdpa(query.index_select(1, idx), k.index_select(1, idx), v.index_select(1, idx),
                  mask, scaling, dropout)
        out.index_copy_(1, idx, o)
    return out


def _attention_flex(module, query, key, value, attention_mask, spec, scaling):
    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    B, H, T, D = query.shape
    S = key.shape[2]
    heads = spec["head_sliding"].to(query.device)
    base = _base_mask(attention_mask, T, S, query.device)  # [B or 1, 1, T, S]
    Bm = base.shape[0]
    window, sink, off = spec["window"], spec["sink"], S - T
    first = _first_keys(base)  # [B or 1]: the sink starts after left padding

    per_row = heads.dim() == 2  # [B, H]: a mask per batch row

    def mask_mod(b, h, q_idx, kv_idx):
        seen = base[b % Bm, 0, q_idx, kv_idx]
        f = first[b % Bm]
        inside = (kv_idx > q_idx + off - window) | ((kv_idx >= f) & (kv_idx < f + sink))
        slides = heads[b, h] if per_row else heads[h]
        return seen & (~slides | inside)

    block = create_block_mask(mask_mod, B, H, T, S, device=query.device)
    fn = flex_attention
    if query.device.type == "cuda":
        fn = spec.setdefault("compiled", torch.compile(flex_attention))
    r = module.num_key_value_groups
    return fn(query, _repeat_kv(key, r), _repeat_kv(value, r), block_mask=block, scale=scaling)


def _attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """The registered attention: transformers' sdpa for a module without a
    selection or a layer the config makes sliding; else the per-unit rule."""
    spec = getattr(module, "_bosch_units", None)
    if spec is None or kwargs.get("sliding_window"):
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
        if attention_mask is not None and attention_mask.shape[-1] != key.shape[2]:
            attention_mask = attention_mask[..., -key.shape[2]:]
        return sdpa_attention_forward(module, query, key, value, attention_mask,
                                      dropout=dropout, scaling=scaling, **kwargs)
    if scaling is None:
        scaling = module.head_dim ** -0.5
    if spec["backend"] == "flex":
        out = _attention_flex(module, query, key, value, attention_mask, spec, scaling)
    else:
        out = _attention_sdpa(module, query, key, value, attention_mask, spec, scaling, dropout)
    return out.transpose(1, 2).contiguous(), None


def _attention_modules(model):
    """{layer_idx: attention module} of every decoder layer."""
    found = {}
    for m in model.modules():
        if hasattr(m, "layer_idx") and hasattr(m, "num_key_value_groups") and \
                hasattr(m, "q_proj") and hasattr(m, "k_proj"):
            found[int(m.layer_idx)] = m
    return found


def _read_selection(selection):
    from .selection import Selection, read_selection
    if isinstance(selection, Selection):
        return selection, False
    if isinstance(selection, (str, bytes, os.PathLike)):
        return read_selection(selection), True
    raise TypeError("selection: a bosch.Selection or the path of a saved one (PREFIX.json)")


def _current_implementation(model) -> str:
    return getattr(model.config, "_attn_implementation", None) or "eager"


def _set_implementation(model, name: str) -> None:
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(name)
    else:  # pragma: no cover - transformers without the setter
        model.config._attn_implementation = name


def apply(model, selection, window: int | None = None, sink: int | None = None,
          backend: str = "auto") -> Applied:
    """Makes `model` (a transformers causal LM) attend as `selection` (a
    bosch.Selection or a saved PREFIX.json) says, with sliding windows of
    `window` tokens plus `sink` sink tokens (default: the selection's
    recorded settings). Replaces a selection applied before. Returns an
    :class:`Applied` (also a context manager that removes it)."""
    _register()
    import torch
    if backend not in ("auto", "sdpa", "flex"):
        raise ValueError("backend: 'auto', 'sdpa' or 'flex'")
    sel, owned = _read_selection(selection)
    try:
        L, G, R = sel.layers, sel.kv_groups, sel.heads_per_group
        mask = [1 if x else 0 for x in sel.mask]
        if window is None:
            window = sel.setting("window")
        if sink is None:
            sink = sel.setting("sink", 0)
    finally:
        if owned:
            sel.close()
    if window is None:
        raise ValueError("window: the selection records none; give window=")
    window, sink = int(window), int(sink)
    if window < 1 or sink < 0:
        raise ValueError("window must be >= 1 and sink >= 0")
    cfg = model.config
    shape = (cfg.num_hidden_layers, cfg.num_key_value_heads,
             cfg.num_attention_heads // cfg.num_key_value_heads)
    if shape != (L, G, R):
        raise ValueError("the selection is %d x %d x %d (layers x KV groups x heads per group), "
                         "the model %d x %d x %d" % ((L, G, R) + shape))
    mods = _attention_modules(model)
    if sorted(mods) != list(range(L)):
        raise ValueError("found attention modules for layers %s, expected 0..%d: not a "
                         "decoder this function knows (Qwen3, Qwen2, Llama)" % (sorted(mods), L - 1))
    if backend == "auto":
        has_flex = hasattr(torch.nn, "attention") and \
            hasattr(torch.nn.attention, "flex_attention")
        device = next(model.parameters()).device
        backend = "flex" if has_flex and device.type == "cuda" else "sdpa"
    previous = applied(model)
    prev_impl = previous.previous if previous else _current_implementation(model)
    for l, m in mods.items():
        groups = torch.tensor(mask[l * G:(l + 1) * G], dtype=torch.bool)
        m._bosch_units = {"head_sliding": groups.repeat_interleave(R), "window": window,
                          "sink": sink, "backend": backend}
    _set_implementation(model, ATTENTION_NAME)
    info = Applied(model=model, mask=mask, layers=L, kv_groups=G, window=window, sink=sink,
                   backend=backend, previous=prev_impl, modules=list(mods.values()))
    model._bosch_applied = info
    return info


def reapply(model, info: Applied) -> Applied:
    """Applies what `info` (from :func:`applied`) describes again."""
    from .selection import Selection
    sel = Selection(info.layers, info.kv_groups,
                    model.config.num_attention_heads // model.config.num_key_value_heads)
    sel.mask = info.mask
    return apply(model, sel, window=info.window, sink=info.sink, backend=info.backend)


def applied(model) -> Applied | None:
    """What :func:`apply` applied to `model`, or None."""
    return getattr(model, "_bosch_applied", None)


def remove(model) -> None:
    """Undoes :func:`apply`: the attention implementation the model had
    before, no selection on its modules. A no-op when none is applied."""
    info = applied(model)
    if info is None:
        return
    for m in info.modules:
        if hasattr(m, "_bosch_units"):
            del m._bosch_units
    _set_implementation(model, info.previous)
    del model._bosch_applied


def __getattr__(name):
    # The evaluator lives in its own module (it imports this one).
    if name in ("Evaluator", "Task", "Sample"):
        from . import hf_evaluator
        return getattr(hf_evaluator, name)
    raise AttributeError(name)
