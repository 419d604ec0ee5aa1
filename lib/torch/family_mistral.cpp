// MistralForCausalLM (modeling_mistral.py): Llama's layer without biases,
// and the config's sliding_window on every layer. MistralConfig's
// sliding_window defaults to 4096 when config.json omits it; null means no
// window (transformers then builds a plain causal mask). layer_types is not
// read by Mistral (transformers warns and ignores it), nor here.
#include "config_json.hpp"
#include "family.hpp"

namespace bosch_torch {
namespace {

using namespace cfgjson;

std::string read_mistral(json_object *r, ModelConfig &cfg) {
    cfg.qk_norm = false;
    cfg.qkv_bias = cfg.o_bias = cfg.mlp_bias = false;
    const size_t L = size_t(cfg.num_hidden_layers);
    cfg.layer_sliding.assign(L, 0);
    cfg.sliding_window = 0;
    int64_t window = 4096; // MistralConfig's default
    if (present(r, "sliding_window")) {
        if (absent(r, "sliding_window"))
            return "";
        std::string e = get_int(r, "sliding_window", window);
        if (!e.empty())
            return e;
    }
    cfg.sliding_window = window;
    cfg.layer_sliding.assign(L, 1);
    return "";
}

} // namespace

const ModelFamily kMistralFamily = {"MistralForCausalLM", 4096 * 32, false, 0, read_mistral};

} // namespace bosch_torch
