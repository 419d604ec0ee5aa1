// LlamaForCausalLM (modeling_llama.py), the layer the others differ from:
// no q/k norm, attention_bias on q/k/v/o, mlp_bias on the MLP, no sliding
// window (LlamaConfig has none; a sliding_window in its config.json is
// ignored by transformers, and so here).
#include "config_json.hpp"
#include "family.hpp"

namespace bosch_torch {
namespace {

using namespace cfgjson;

std::string read_llama(json_object *r, ModelConfig &cfg) {
    bool attention_bias = false, mlp_bias = false;
    std::string e;
    if (!(e = get_bool(r, "attention_bias", attention_bias)).empty() ||
        !(e = get_bool(r, "mlp_bias", mlp_bias)).empty())
        return e;
    cfg.qk_norm = false;
    cfg.qkv_bias = cfg.o_bias = attention_bias;
    cfg.mlp_bias = mlp_bias;
    // pretraining_tp > 1 only split the projections in transformers 4's
    // Llama; transformers 5 computes the same layer whatever it says.
    return "";
}

} // namespace

const ModelFamily kLlamaFamily = {"LlamaForCausalLM", 2048, false, 0, read_llama};

} // namespace bosch_torch
