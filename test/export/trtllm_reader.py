"""What TensorRT-LLM does with an --extra_llm_api_options file's
kv_cache_config.max_attention_window, written from its code: the YAML is
loaded with yaml.safe_load into the LLM API's KvCacheConfig
(tensorrt_llm/llmapi/llm_args.py: max_attention_window, a list that
repeats from layer 0 when shorter than the layers); the PyTorch KV-cache
manager clamps every window to max_seq_len
(_torch/pyexecutor/resource_manager.py: [min(max_seq_len, w) for w in
windows], layer l takes window_vec[l % len(window_vec)]); the attention
keeps key col for query row when col <= row and col > row - W
(kernels/contextFusedMultiHeadAttention/fmhaPackedMask.cu,
SLIDING_OR_CHUNKED_CAUSAL). No TensorRT-LLM import: the logic, not the
package, is under test.
"""
import yaml


def load(path):
    """The kv_cache_config mapping of an --extra_llm_api_options file."""
    with open(path) as f:
        options = yaml.safe_load(f)
    if not isinstance(options, dict) or not isinstance(options.get("kv_cache_config"), dict):
        raise ValueError("no kv_cache_config mapping")
    return options["kv_cache_config"]


def layer_windows(kv_cache_config, num_layers, max_seq_len):
    """Each layer's attention window as the KV-cache manager sets it."""
    vec = kv_cache_config.get("max_attention_window")
    if vec is None:
        vec = [max_seq_len]
    if not isinstance(vec, list) or not vec or not all(isinstance(w, int) and w > 0 for w in vec):
        raise ValueError("max_attention_window must be a list of positive integers")
    vec = [min(max_seq_len, w) for w in vec]
    return [vec[l % len(vec)] for l in range(num_layers)]


def visible(window, row, col):
    """The context mask of a layer of window `window`."""
    return col <= row and col > row - window
