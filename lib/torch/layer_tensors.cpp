// The tensors of one layer, by the config's family flags (model.hpp).
#include "model.hpp"

namespace bosch_torch {

std::vector<LayerTensor> layer_tensors(const ModelConfig &c, int64_t l) {
    const int64_t H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
    const int64_t nq = c.num_attention_heads * D, nkv = c.num_key_value_heads * D;
    using W = LayerWeights;
    std::vector<LayerTensor> t = {
        {"input_layernorm.weight", {H}, &W::input_norm},
        {"self_attn.q_proj.weight", {nq, H}, &W::q_proj},
        {"self_attn.k_proj.weight", {nkv, H}, &W::k_proj},
        {"self_attn.v_proj.weight", {nkv, H}, &W::v_proj},
        {"self_attn.o_proj.weight", {H, nq}, &W::o_proj},
    };
    if (c.qkv_bias)
        t.insert(t.end(), {{"self_attn.q_proj.bias", {nq}, &W::q_bias},
                           {"self_attn.k_proj.bias", {nkv}, &W::k_bias},
                           {"self_attn.v_proj.bias", {nkv}, &W::v_bias}});
    if (c.o_bias)
        t.push_back({"self_attn.o_proj.bias", {H}, &W::o_bias});
    if (c.qk_norm)
        t.insert(t.end(), {{"self_attn.q_norm.weight", {D}, &W::q_norm},
                           {"self_attn.k_norm.weight", {D}, &W::k_norm}});
    t.push_back({"post_attention_layernorm.weight", {H}, &W::post_norm});
    if (c.sparse(l)) {
        const int64_t E = c.num_experts, Im = c.moe_intermediate_size;
        t.insert(t.end(), {{"mlp.gate.weight", {E, H}, &W::router},
                           {"mlp.experts.gate_up_proj", {E, 2 * Im, H}, &W::experts_gate_up},
                           {"mlp.experts.down_proj", {E, H, Im}, &W::experts_down}});
        return t;
    }
    t.insert(t.end(), {{"mlp.gate_proj.weight", {I, H}, &W::gate_proj},
                       {"mlp.up_proj.weight", {I, H}, &W::up_proj},
                       {"mlp.down_proj.weight", {H, I}, &W::down_proj}});
    if (c.mlp_bias)
        t.insert(t.end(), {{"mlp.gate_proj.bias", {I}, &W::gate_bias},
                           {"mlp.up_proj.bias", {I}, &W::up_bias},
                           {"mlp.down_proj.bias", {H}, &W::down_bias}});
    return t;
}

std::vector<torch::Tensor LayerWeights::*> layer_members() {
    using W = LayerWeights;
    return {&W::input_norm, &W::q_proj,    &W::k_proj,    &W::v_proj,          &W::o_proj,
            &W::q_norm,     &W::k_norm,    &W::post_norm, &W::gate_proj,       &W::up_proj,
            &W::down_proj,  &W::router,    &W::q_bias,    &W::k_bias,          &W::v_bias,
            &W::o_bias,     &W::gate_bias, &W::up_bias,   &W::down_bias,       &W::experts_gate_up,
            &W::experts_down};
}

} // namespace bosch_torch
