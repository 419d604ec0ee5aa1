// Decoder checkpoints in the Hugging Face layout: config.json and
// safetensors, of the families in family.cpp (Qwen3, Qwen3-MoE, Qwen2, Llama,
// Mistral), read as transformers 5 reads them.
// Every reader here is bounds-checked: malformed input yields an error
// message, never a crash or a read outside the file.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace bosch_torch {

// RoPE's frequencies as transformers 5's ROPE_INIT_FUNCTIONS compute them
// (modeling_rope_utils.py), rope.cpp. `type`: "default", "linear",
// "dynamic", "yarn", "longrope" or "llama3"; the other fields are those
// types' parameters, resolved as transformers resolves them (defaults,
// original_max_position_embeddings from max_position_embeddings, factor from
// their ratio where the type allows it).
struct RopeScaling {
    std::string type = "default";
    double factor = 1.0;
    int64_t original_max_position_embeddings = 0;
    double low_freq_factor = 0, high_freq_factor = 0;   // llama3
    double beta_fast = 32, beta_slow = 1;               // yarn
    double attention_factor = 1.0;                      // yarn, longrope (resolved)
    bool truncate = true;                               // yarn
    std::vector<double> short_factor, long_factor;      // longrope, head_dim / 2 each
};

struct ModelConfig {
    // config.json's architectures entry (family.cpp names the supported ones).
    std::string architecture;
    // What the family's layer holds beyond Llama's (family.cpp): a per-head
    // RMSNorm of q and k before RoPE (Qwen3), biases on the q/k/v
    // projections (Qwen2; Llama's attention_bias), on o_proj (Llama's
    // attention_bias) and on the MLP's three projections (Llama's mlp_bias).
    bool qk_norm = true, qkv_bias = false, o_bias = false, mlp_bias = false;
    RopeScaling rope;
    int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_hidden_layers = 0,
            num_attention_heads = 0, num_key_value_heads = 0, head_dim = 0;
    double rms_norm_eps = 0.0, rope_theta = 0.0;
    bool tie_word_embeddings = false;
    // Hybrid models (layer_types / use_sliding_window + max_window_layers):
    // layer_sliding[l] = 1 when the config makes layer l sliding-window
    // attention over sliding_window tokens (0 when no layer slides).
    std::vector<uint8_t> layer_sliding;
    int64_t sliding_window = 0;
    // max_position_embeddings, or the family's transformers default when
    // the config omits it: longer prompts are refused (check_task).
    int64_t max_position_embeddings = 0;
    // Qwen3MoeForCausalLM: layer l's MLP is a block of num_experts SwiGLU
    // experts of moe_intermediate_size (layer_sparse[l] = 1) unless l is in
    // mlp_only_layers or (l + 1) % decoder_sparse_step != 0; then it is the
    // dense MLP of intermediate_size (0 when no layer is dense). A router
    // sends each token to its num_experts_per_tok most probable experts,
    // weighted by their softmax probabilities (renormalised over those
    // experts when norm_topk_prob). Absent fields take transformers'
    // Qwen3MoeConfig defaults.
    bool moe = false;
    int64_t num_experts = 0, num_experts_per_tok = 0, moe_intermediate_size = 0;
    bool norm_topk_prob = false;
    std::vector<uint8_t> layer_sparse; // empty for the dense architecture
    bool sparse(int64_t layer) const {
        return size_t(layer) < layer_sparse.size() && layer_sparse[size_t(layer)];
    }
    bool any_dense_mlp() const {
        for (size_t l = 0; l < size_t(num_hidden_layers); l++)
            if (!sparse(int64_t(l)))
                return true;
        return false;
    }
};

using TensorMap = std::map<std::string, torch::Tensor>;

// Each returns "" on success, else a message naming what is wrong.
std::string load_config(const std::string &dir, ModelConfig &cfg);
// One safetensors file: every tensor, on CPU, in its stored dtype (F32, BF16, F16).
std::string read_safetensors(const std::string &path, TensorMap &out);
// model.safetensors, or every shard named in model.safetensors.index.json.
std::string load_weights(const std::string &dir, TensorMap &out);
// Mixture-of-experts checkpoints store each expert's projections apart
// (model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight, the hub layout)
// or fused as transformers 5 holds them (mlp.experts.gate_up_proj
// [E, 2 x moe_intermediate_size, H], mlp.experts.down_proj [E, H, moe_i]).
// Rewrites the first layout into the second in place, so that both load,
// check and hash alike; a no-op for dense configs and fused checkpoints.
std::string fuse_experts(const ModelConfig &cfg, TensorMap &w);
// Checks that every tensor the forward needs exists with the right shape
// (experts in the fused layout: call fuse_experts first).
std::string check_weights(const ModelConfig &cfg, const TensorMap &w);
// The parameters the config implies (what the weights must hold), in
// floating point so that absurd sizes do not overflow.
double implied_parameters(const ModelConfig &cfg);
// Refuses, before any tensor is read, a config whose parameters take more
// than `memory_bytes` even in 16-bit weights; the message names the fields
// of the largest term and the limit.
std::string check_memory(const ModelConfig &cfg, double memory_bytes);

} // namespace bosch_torch
