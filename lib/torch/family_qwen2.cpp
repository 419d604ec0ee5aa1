// Qwen2ForCausalLM (modeling_qwen2.py): Llama's layer with biases on the q,
// k and v projections (always; o_proj and the MLP have none), and Qwen3's
// hybrid layers (use_sliding_window, max_window_layers, layer_types), which
// Qwen2Config applies exactly as Qwen3Config does.
#include "config_json.hpp"
#include "family.hpp"

namespace bosch_torch {
namespace {

std::string read_qwen2(json_object *r, ModelConfig &cfg) {
    cfg.qk_norm = false;
    cfg.qkv_bias = true;
    cfg.o_bias = cfg.mlp_bias = false;
    return read_layer_types(r, cfg);
}

} // namespace

const ModelFamily kQwen2Family = {"Qwen2ForCausalLM", 32768, false, 0, read_qwen2};

} // namespace bosch_torch
