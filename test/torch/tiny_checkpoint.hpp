// Test helper: writes tiny random Qwen3ForCausalLM (or, with experts > 0,
// Qwen3MoeForCausalLM) checkpoints in the
// Hugging Face layout (config.json + model.safetensors, or shards with
// model.safetensors.index.json), for the libbosch-torch tests.
#pragma once

#include "torch/checkpoint.hpp" // bosch_torch::TensorMap (lib/ on the include path)

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bosch_torch_test {

struct TinySpec {
    int64_t layers = 2;
    int64_t hidden = 32;
    int64_t heads = 4;    // query heads
    int64_t kv_heads = 2; // KV heads (heads % kv_heads == 0)
    int64_t head_dim = 8; // even
    int64_t intermediate = 64;
    int64_t vocab = 64;
    bool tie = false;                          // tie_word_embeddings: no lm_head.weight written
    torch::ScalarType dtype = torch::kFloat32; // stored dtype: kFloat32, kBFloat16 or kFloat16
    int shards = 1;                            // > 1: model-0000k-of-0000n.safetensors + index
    uint64_t seed = 1;                         // same spec and seed -> same bytes
    bool rope_style_new = false; // "rope_parameters": {"rope_theta", "rope_type"} instead of
                                 // top-level "rope_theta" + "rope_scaling": null
    double rope_theta = 10000.0;
    // "qwen3" (default), or "llama" (q/k/v/o and MLP biases, no q/k norm),
    // "mistral" (no window: sliding_window null), "qwen2" (q/k/v biases):
    // the other families' layers (lib/torch/family_*.cpp); dense only.
    std::string family = "qwen3";
    double rms_norm_eps = 1e-6;
    // Mixture of experts (Qwen3MoeForCausalLM) when experts > 0: layer l is
    // sparse unless it is in mlp_only_layers or (l + 1) % sparse_step != 0.
    int64_t experts = 0;
    int64_t experts_per_tok = 2;
    int64_t moe_intermediate = 16;
    bool norm_topk = true;
    int64_t sparse_step = 1;
    std::vector<int64_t> mlp_only_layers;
    bool fused_experts = false; // mlp.experts.gate_up_proj / down_proj (transformers 5's
                                // in-memory layout) instead of one tensor per expert
    bool sparse(int64_t l) const;
};

// config.json text for the spec (the fields a real Qwen3 config has).
std::string tiny_config_json(const TinySpec &spec);
// The same as a parsed config, for Model::from_weights (dense fields only).
bosch_torch::ModelConfig tiny_config(const TinySpec &spec);

// The checkpoint's tensors, in spec.dtype, with Hugging Face names and shapes.
// Deterministic in spec.seed (a private generator; the global torch seed is
// untouched). Embedding ~ N(0, 1); linear weights ~ N(0, 1/fan_in); norm
// weights ~ 1 + N(0, 0.1^2). No lm_head.weight when spec.tie.
bosch_torch::TensorMap tiny_qwen3_tensors(const TinySpec &spec);

// One safetensors file holding `tensors` (contiguous CPU F32/BF16/F16, in
// name order, header padded to 8 bytes). Returns "" or an error message.
std::string write_safetensors(const std::string &path, const bosch_torch::TensorMap &tensors);

// Creates `dir` (and parents) if needed and writes config.json plus
// model.safetensors, or spec.shards shards + model.safetensors.index.json.
// When `written` is non-null it receives the tensors written (spec.dtype).
// Returns "" on success, else an error message.
std::string write_tiny_qwen3(const std::string &dir, const TinySpec &spec,
                             bosch_torch::TensorMap *written = nullptr);

// The tests' usual shape: 3 layers, GQA with 3 query heads per KV head
// (6 / 2, head_dim 8), hidden 32, MLP 48, vocabulary 50.
TinySpec gqa_spec(uint64_t seed);
// The organism's layer shapes (models/organism, the benches' default): 4
// layers, 8 query / 4 KV heads of dim 32, hidden 128, MLP 384.
TinySpec organism_spec(int64_t vocab);
// write_tiny_qwen3 into parent/name; throws std::runtime_error on failure.
std::string write_model(const std::string &parent, const std::string &name,
                        const TinySpec &spec);
// n token ids uniform in [0, vocab), from std::mt19937(seed).
std::vector<int32_t> random_tokens(size_t n, int32_t vocab, uint32_t seed);

// A fresh empty directory under $TMPDIR (or /tmp), e.g. /tmp/bosch-<tag>-XXXXXX;
// throws std::runtime_error on failure.
std::string make_temp_dir(const std::string &tag);
// The file helpers below use POSIX calls, not std::filesystem: a PyTorch
// wheel's libtorch carries its own copy of std::filesystem's out-of-line
// functions, and a test process that resolved remove_all into it crashed
// (jump to address 0). Tests take nothing of libstdc++'s from libtorch.
// rm -r; errors ignored.
void remove_tree(const std::string &path);
// mkdir -p; returns "" or an error message.
std::string make_dirs(const std::string &path);
// Copies the file `from` to `to` (truncating); returns "" or an error message.
std::string copy_file(const std::string &from, const std::string &to);
// Writes `bytes` to `path` (truncating); returns "" or an error message.
std::string write_file(const std::string &path, const std::string &bytes);
// Reads a whole file into a string ("" when it cannot be read).
std::string read_file(const std::string &path);

} // namespace bosch_torch_test
