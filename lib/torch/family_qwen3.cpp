// Qwen3ForCausalLM (modeling_qwen3.py): Llama's layer with a per-head
// RMSNorm of q and k before RoPE, attention_bias on all four projections,
// and the hybrid layers of layer_types / max_window_layers.
#include "config_json.hpp"
#include "family.hpp"

namespace bosch_torch {

using namespace cfgjson;

// Hybrid attention as transformers' Qwen3Config and Qwen2Config read it: sliding_window
// counts only when use_sliding_window is true; layer_types (when given)
// names each layer, else layers from max_window_layers (default 28) on
// slide. A sliding layer then attends to the last sliding_window tokens,
// itself included, with no sink tokens (masking_utils' sliding window).
std::string read_layer_types(json_object *r, ModelConfig &cfg) {
    const size_t L = size_t(cfg.num_hidden_layers);
    cfg.layer_sliding.assign(L, 0);
    cfg.sliding_window = 0;
    bool use = false;
    std::string err = get_bool(r, "use_sliding_window", use);
    if (!err.empty())
        return err;
    int64_t window = 0; // 0 = None, as transformers has it when use_sliding_window is false
    if (use) {
        if (absent(r, "sliding_window"))
            return "use_sliding_window is true but sliding_window is not set";
        if (!(err = get_int(r, "sliding_window", window)).empty())
            return err;
    }
    json_object *lt = field(r, "layer_types");
    if (lt && json_object_get_type(lt) != json_type_null) {
        if (json_object_get_type(lt) != json_type_array)
            return std::string("field layer_types must be an array (got ") +
                   jsonu::type_name(lt) + ")";
        if (json_object_array_length(lt) != L)
            return "layer_types has " + std::to_string(json_object_array_length(lt)) +
                   " entries for " + std::to_string(L) + " layers";
        for (size_t i = 0; i < L; i++) {
            json_object *e = json_object_array_get_idx(lt, i);
            std::string t = e && json_object_get_type(e) == json_type_string
                                ? json_object_get_string(e)
                                : std::string();
            if (t == "sliding_attention")
                cfg.layer_sliding[i] = 1;
            else if (t != "full_attention")
                return "layer_types[" + std::to_string(i) + "] is " +
                       (e ? json_object_to_json_string(e) : "null") +
                       " (only \"full_attention\" and \"sliding_attention\" are supported)";
        }
    } else if (window > 0) {
        int64_t first = 28; // transformers' default max_window_layers
        json_object *m = field(r, "max_window_layers");
        if (m && json_object_get_type(m) != json_type_null) {
            if (json_object_get_type(m) != json_type_int || json_object_get_int64(m) < 0)
                return std::string("field max_window_layers must be a non-negative integer (got ") +
                       json_object_to_json_string(m) + ")";
            first = json_object_get_int64(m);
        }
        for (size_t i = 0; i < L; i++)
            cfg.layer_sliding[i] = int64_t(i) >= first;
    }
    size_t n = 0;
    for (uint8_t v : cfg.layer_sliding)
        n += v;
    if (n && window == 0)
        return "layer_types names sliding_attention layers but use_sliding_window is not true "
               "(transformers then has no sliding_window and refuses the model)";
    if (n)
        cfg.sliding_window = window;
    return "";
}


namespace {

std::string read_qwen3(json_object *r, ModelConfig &cfg) {
    bool bias = false;
    std::string e = get_bool(r, "attention_bias", bias);
    if (!e.empty())
        return e;
    cfg.qk_norm = true;
    cfg.qkv_bias = cfg.o_bias = bias;
    return read_layer_types(r, cfg);
}

} // namespace

// Qwen3Config: head_dim is written by transformers (its default, 128, is
// not hidden_size / heads, so a config without it is refused rather than
// guessed).
const ModelFamily kQwen3Family = {"Qwen3ForCausalLM", 32768, true, 0, read_qwen3};

} // namespace bosch_torch
