// RoPE: config.json's rope fields read as transformers 5 reads them, and the
// cos / sin tables its rotary embedding computes (modeling_rope_utils.py's
// ROPE_INIT_FUNCTIONS: default, linear, dynamic, yarn, longrope, llama3).
// Internal.
#pragma once

#include "checkpoint.hpp"

#include <json-c/json.h>
#include <torch/torch.h>

#include <string>
#include <utility>

namespace bosch_torch {

// rope_theta (top level or in rope_parameters), rope_parameters or the
// older rope_scaling, into cfg.rope_theta and cfg.rope; needs
// cfg.head_dim and cfg.max_position_embeddings. "" or a message naming the
// field; a type or a parameter the forward does not implement (say
// partial_rotary_factor below 1) is refused by name.
std::string read_rope(json_object *root, ModelConfig &cfg);

// The inverse frequencies (fp32 [head_dim / 2]) and the factor cos and sin
// are multiplied by, for a forward over `len` positions: dynamic and
// longrope choose their frequencies by the length, as transformers'
// dynamic_rope_update does for a batch of that length.
std::pair<torch::Tensor, double> rope_frequencies(const ModelConfig &cfg, int64_t len,
                                                  torch::Device device);

// A key that changes exactly when the tables for `len` positions differ
// from those for other lengths in more than their extent: 0 for the types
// whose frequencies do not depend on the length.
int64_t rope_length_key(const ModelConfig &cfg, int64_t len);

// "" for the default RoPE, else its type and parameters (the model's
// identity).
std::string rope_description(const ModelConfig &cfg);

} // namespace bosch_torch
