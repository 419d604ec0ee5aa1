"""What Hugging Face transformers does with a Qwen3 config.json's window
members, written from its code (src/transformers/models/qwen3/
configuration_qwen3.py Qwen3Config.__init__, configuration_utils.py
layer_type_validation, modeling_qwen3.py Qwen3Attention.__init__,
masking_utils.py causal_mask_function and sliding_window_overlay).
No transformers import: the logic, not the package, is under test.
"""
import json

ALLOWED_LAYER_TYPES = (
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "linear_attention",
)


def layer_type_validation(layer_types, num_hidden_layers=None):
    # The newer signature also checks the length; both checks apply here.
    if not all(layer_type in ALLOWED_LAYER_TYPES for layer_type in layer_types):
        raise ValueError(f"The `layer_types` entries must be in {ALLOWED_LAYER_TYPES}")
    if num_hidden_layers is not None and num_hidden_layers != len(layer_types):
        raise ValueError(
            f"`num_hidden_layers` ({num_hidden_layers}) must be equal to the number of layer types "
            f"({len(layer_types)})"
        )


class Qwen3Config:
    """The members of Qwen3Config.__init__ that decide the attention windows."""

    def __init__(
        self,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=32,
        use_sliding_window=False,
        sliding_window=4096,
        max_window_layers=28,
        layer_types=None,
        **kwargs,
    ):
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.use_sliding_window = use_sliding_window
        self.sliding_window = sliding_window if self.use_sliding_window else None
        self.max_window_layers = max_window_layers
        if num_key_value_heads is None:
            num_key_value_heads = num_attention_heads
        self.num_key_value_heads = num_key_value_heads
        self.layer_types = layer_types
        if self.layer_types is None:
            self.layer_types = [
                "sliding_attention"
                if self.sliding_window is not None and i >= self.max_window_layers
                else "full_attention"
                for i in range(self.num_hidden_layers)
            ]
        layer_type_validation(self.layer_types, self.num_hidden_layers)
        self.extra = kwargs


def from_file(path):
    with open(path) as f:
        return Qwen3Config(**json.load(f))


def attention_windows(config):
    """Qwen3Attention.sliding_window of each layer (None = full attention)."""
    return [
        config.sliding_window if config.layer_types[layer_idx] == "sliding_attention" else None
        for layer_idx in range(config.num_hidden_layers)
    ]


def causal_mask_function(q_idx, kv_idx):
    return kv_idx <= q_idx


def sliding_window_overlay(sliding_window):
    def inner_mask(q_idx, kv_idx):
        return kv_idx > q_idx - sliding_window

    return inner_mask


def visible(window, q_idx, kv_idx):
    """Whether query q_idx sees key kv_idx in a layer with this window."""
    if window is None:
        return causal_mask_function(q_idx, kv_idx)
    return causal_mask_function(q_idx, kv_idx) and sliding_window_overlay(window)(q_idx, kv_idx)
