// Qwen3 checkpoints in the Hugging Face layout: config.json and safetensors.
// Every reader here is bounds-checked: malformed input yields an error
// message, never a crash or a read outside the file.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace bosch_torch {

struct Qwen3Config {
    int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_hidden_layers = 0,
            num_attention_heads = 0, num_key_value_heads = 0, head_dim = 0;
    double rms_norm_eps = 0.0, rope_theta = 0.0;
    bool tie_word_embeddings = false;
    // Hybrid models (layer_types / use_sliding_window + max_window_layers):
    // layer_sliding[l] = 1 when the config makes layer l sliding-window
    // attention over sliding_window tokens (0 when no layer slides).
    std::vector<uint8_t> layer_sliding;
    int64_t sliding_window = 0;
    // max_position_embeddings when the config gives it (0: not given):
    // longer prompts are refused (check_task).
    int64_t max_position_embeddings = 0;
};

using TensorMap = std::map<std::string, torch::Tensor>;

// Each returns "" on success, else a message naming what is wrong.
std::string load_config(const std::string &dir, Qwen3Config &cfg);
// One safetensors file: every tensor, on CPU, in its stored dtype (F32, BF16, F16).
std::string read_safetensors(const std::string &path, TensorMap &out);
// model.safetensors, or every shard named in model.safetensors.index.json.
std::string load_weights(const std::string &dir, TensorMap &out);
// Checks that every tensor the forward needs exists with the right shape.
std::string check_weights(const Qwen3Config &cfg, const TensorMap &w);
// The parameters the config implies (what the weights must hold), in
// floating point so that absurd sizes do not overflow.
double implied_parameters(const Qwen3Config &cfg);
// Refuses, before any tensor is read, a config whose parameters take more
// than `memory_bytes` even in 16-bit weights; the message names the fields
// of the largest term and the limit.
std::string check_memory(const Qwen3Config &cfg, double memory_bytes);

} // namespace bosch_torch
