// Qwen3MoeForCausalLM (modeling_qwen3_moe.py): Qwen3's attention, and a
// block of routed SwiGLU experts in place of the MLP on its sparse layers.
#include "config_json.hpp"
#include "family.hpp"

#include <vector>

namespace bosch_torch {
namespace {

using namespace cfgjson;

// Qwen3MoeForCausalLM's fields, with Qwen3MoeConfig's defaults. Its sliding
// window is all or nothing, as transformers applies it: with
// use_sliding_window every layer slides over sliding_window (Qwen3MoeConfig
// has no layer_types or max_window_layers, and transformers ignores them).
std::string read_moe(json_object *r, ModelConfig &cfg) {
    bool bias = false;
    std::string e = get_bool(r, "attention_bias", bias);
    if (!e.empty())
        return e;
    cfg.qk_norm = true;
    cfg.qkv_bias = cfg.o_bias = bias;
    cfg.moe = true;
    const int64_t L = cfg.num_hidden_layers;
    int64_t experts = 0, local = 0, step = 0, moe_i = 0, k = 0;
    if (!(e = get_count(r, "num_experts", -1, experts)).empty() ||
        !(e = get_count(r, "num_local_experts", -1, local)).empty() ||
        !(e = get_count(r, "decoder_sparse_step", 1, step)).empty() ||
        !(e = get_count(r, "moe_intermediate_size", 768, moe_i)).empty() ||
        !(e = get_count(r, "num_experts_per_tok", 8, k)).empty())
        return e;
    // transformers 5 writes num_local_experts (its attribute_map), the
    // published checkpoints num_experts.
    if (experts >= 0 && local >= 0 && experts != local)
        return "num_experts (" + std::to_string(experts) + ") conflicts with num_local_experts (" +
               std::to_string(local) + ")";
    cfg.num_experts = experts >= 0 ? experts : local >= 0 ? local : 128;
    if (step == 0)
        return "field decoder_sparse_step must be positive (got 0)";
    cfg.moe_intermediate_size = moe_i;
    cfg.num_experts_per_tok = k;
    if (!(e = get_bool(r, "norm_topk_prob", cfg.norm_topk_prob)).empty())
        return e;
    std::vector<uint8_t> mlp_only(size_t(L), 0);
    json_object *m = field(r, "mlp_only_layers");
    if (m && json_object_get_type(m) != json_type_null) {
        if (json_object_get_type(m) != json_type_array)
            return std::string("field mlp_only_layers must be an array (got ") +
                   jsonu::type_name(m) + ")";
        for (size_t i = 0; i < json_object_array_length(m); i++) {
            json_object *x = json_object_array_get_idx(m, i);
            if (!x || json_object_get_type(x) != json_type_int || json_object_get_int64(x) < 0 ||
                json_object_get_int64(x) >= L)
                return "mlp_only_layers[" + std::to_string(i) + "] is " +
                       (x ? json_object_to_json_string(x) : "null") + " (layers are 0.." +
                       std::to_string(L - 1) + ")";
            mlp_only[size_t(json_object_get_int64(x))] = 1;
        }
    }
    cfg.layer_sparse.assign(size_t(L), 0);
    for (int64_t l = 0; l < L; l++)
        cfg.layer_sparse[size_t(l)] =
            !mlp_only[size_t(l)] && cfg.num_experts > 0 && (l + 1) % step == 0;
    bool sparse = false;
    for (uint8_t s : cfg.layer_sparse)
        sparse = sparse || s;
    if (sparse && (cfg.moe_intermediate_size == 0 || cfg.num_experts_per_tok == 0))
        return std::string("field ") +
               (cfg.moe_intermediate_size == 0 ? "moe_intermediate_size" : "num_experts_per_tok") +
               " must be positive";
    if (sparse && cfg.num_experts_per_tok > cfg.num_experts)
        return "num_experts_per_tok (" + std::to_string(cfg.num_experts_per_tok) +
               ") exceeds num_experts (" + std::to_string(cfg.num_experts) + ")";

    cfg.layer_sliding.assign(size_t(L), 0);
    cfg.sliding_window = 0;
    bool use = false;
    if (!(e = get_bool(r, "use_sliding_window", use)).empty() || !use)
        return e;
    if (absent(r, "sliding_window"))
        return "use_sliding_window is true but sliding_window is not set";
    if (!(e = get_int(r, "sliding_window", cfg.sliding_window)).empty())
        return e;
    cfg.layer_sliding.assign(size_t(L), 1);
    return "";
}

} // namespace

// Qwen3MoeConfig: head_dim hidden_size / heads and intermediate_size 6144
// when absent (transformers does not write head_dim for it).
const ModelFamily kQwen3MoeFamily = {"Qwen3MoeForCausalLM", 32768, false, 6144, read_moe};

} // namespace bosch_torch
