"""What DuoAttention and NVIDIA kvpress do with an attention-pattern directory,
written from their code (numpy in place of torch; same indexing):

- DuoAttention, duo_attn/utils.py: load_attn_pattern, sparsify_attention_heads;
  duo_attn/patch/llama.py enable_llama_duo_attention_eval (row idx of the
  array for layer idx) and demo/w8a8kv4_llama.py reorder_linear_weights
  (repeat_interleave of the layer's KV-head values over the query heads of
  each KV head, then > 0.5).
- kvpress, kvpress/presses/duo_attention_press.py: load_attention_pattern
  (loadtxt + clip), post_init_from_model (n_pruned = round(size * ratio),
  argsort(axis=None)[:n_pruned] -> streaming_mask[layer, kv_head]) and
  compress (masked_keys[:, streaming_mask[layer], sink_size:-recent_size]).
"""
import json
import os

import numpy as np


# --- DuoAttention ------------------------------------------------------------
def load_attn_pattern(attn_load_dir):
    full_attention_heads = np.loadtxt(
        os.path.join(attn_load_dir, "full_attention_heads.tsv"),
        dtype=float,
        delimiter="\t",
    )
    full_attention_heads = np.clip(full_attention_heads, 0, 1)
    with open(os.path.join(attn_load_dir, "config.json")) as f:
        config = json.load(f)
    sink_size = config["sink_size"]
    recent_size = config["recent_size"]
    return full_attention_heads, sink_size, recent_size


def sparsify_attention_heads(full_attention_heads, threshold=None, sparsity=None):
    # As upstream, including the in-place noise and the sparsity-first rule
    # (with sparsity None, upstream's `sparsity >= 1` raises TypeError).
    full_attention_heads += np.random.uniform(0, 1e-6, full_attention_heads.shape)
    if sparsity is not None:
        threshold = np.quantile(full_attention_heads, sparsity)
    else:
        assert threshold is not None, "Either threshold or sparsity must be provided"
    if sparsity >= 1:
        threshold = 2
    if sparsity <= 0:
        threshold = -1
    full_attention_heads = (full_attention_heads >= threshold).astype(float)
    sparsity = 1 - np.mean(full_attention_heads)
    return full_attention_heads, sparsity


def duo_query_head_masks(full_attention_heads, num_layers, num_key_value_groups):
    """Per layer, the full-attention flag of each query head, as the patch
    builds it: layer idx takes row full_attention_heads[idx], then
    repeat_interleave(row, num_key_value_groups) > 0.5."""
    out = []
    for idx in range(num_layers):
        layer_full_attention_heads = np.asarray(full_attention_heads[idx], dtype=float)
        repeated = np.repeat(layer_full_attention_heads.reshape(-1), num_key_value_groups)
        out.append(repeated > 0.5)
    return out


# --- kvpress -----------------------------------------------------------------
def kvpress_load(attn_load_dir):
    with open(os.path.join(attn_load_dir, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(attn_load_dir, "full_attention_heads.tsv")) as f:
        text = f.read()
    from io import StringIO

    head_scores = np.loadtxt(StringIO(text), dtype=float, delimiter="\t")
    head_scores = np.clip(head_scores, 0, 1)
    return config["sink_size"], config["recent_size"], head_scores


def kvpress_streaming_mask(head_scores, head_compression_ratio):
    n_pruned = round(head_scores.size * head_compression_ratio)
    streaming_mask = np.zeros(head_scores.shape, dtype=bool)
    if n_pruned > 0:
        indices = np.argsort(head_scores, axis=None)[:n_pruned]
        streaming_mask[np.unravel_index(indices, head_scores.shape)] = True
    return streaming_mask


def kvpress_masked_keys(streaming_mask, layer_idx, num_kv_heads, k_len, sink_size, recent_size):
    """masked_keys[kv_head, key] for batch 0 (True = dropped from attention)."""
    masked_keys = np.zeros((1, num_kv_heads, k_len), dtype=bool)
    masked_keys[:, streaming_mask[layer_idx], sink_size:-recent_size] = True
    return masked_keys[0]
