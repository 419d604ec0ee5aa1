// The model families libbosch-torch reads, as a table (family.cpp): what
// config.json's `architectures` names, transformers' defaults for the
// fields a config may omit, and a reader of the family's own fields. How a
// family's layer differs from Llama's is data in ModelConfig (q/k norm,
// biases, experts, sliding layers), which the forward reads; no code outside
// the family files asks which family it runs. Adding a family is one file,
// family_NAME.cpp, and one line in family.cpp (as transformers' modeling
// files differ from modeling_llama.py by a few lines each). Internal.
#pragma once

#include "checkpoint.hpp"

#include <json-c/json.h>

#include <string>

namespace bosch_torch {

struct ModelFamily {
    const char *architecture;       // e.g. "LlamaForCausalLM"
    int64_t max_position_default;   // max_position_embeddings when absent
    bool head_dim_required;         // else hidden_size / num_attention_heads
    int64_t intermediate_default;   // intermediate_size when absent (0: required)
    // Sets cfg's layer flags and reads the family's own fields after the
    // shared ones (sizes, RoPE, act, ties); "" or a message without the
    // file's name.
    std::string (*read)(json_object *root, ModelConfig &cfg);
};

extern const ModelFamily kQwen3Family, kQwen3MoeFamily, kQwen2Family, kLlamaFamily,
    kMistralFamily;

// The family of an architecture name, or nullptr.
const ModelFamily *find_family(const std::string &architecture);
// "Qwen3ForCausalLM, Qwen3MoeForCausalLM, ...", for messages.
std::string supported_architectures();

// Hybrid attention as transformers' Qwen3Config and Qwen2Config read it
// (family_qwen3.cpp): use_sliding_window, sliding_window, layer_types,
// max_window_layers.
std::string read_layer_types(json_object *r, ModelConfig &cfg);

} // namespace bosch_torch
