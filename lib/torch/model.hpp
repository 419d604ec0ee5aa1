// The decoder forward of the families in family.hpp (Qwen3 dense or
// mixture-of-experts, Qwen2, Llama, Mistral) with a per-(layer, KV group)
// attention mask: each unit attends
// either with full causal attention or with a sliding window plus sink tokens.
// Semantics follow Hugging Face modeling_qwen3.py / modeling_llama.py (eager
// attention) exactly:
//   RMSNorm: x * rsqrt(mean(x^2) + eps) in fp32, cast back, then weight * x;
//   q/k/v projections (+ biases where the config has them), per-head
//   q_norm/k_norm (Qwen3) before RoPE (rotate_half, the config's rope type),
//   GQA (KV head j serves query heads j*r .. j*r+r-1), scale head_dim^-0.5,
//   scores + mask, softmax in fp32, o_proj, residual, post-attention norm,
//   SwiGLU MLP (or Qwen3-MoE's routed experts), residual; final norm and
//   lm_head (or tied embeddings).
//
// Every function may throw (c10::Error, std::exception); the C shim catches.
#pragma once

#include "attention.hpp"
#include "checkpoint.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace bosch_torch {

struct LayerWeights {
    torch::Tensor input_norm, q_proj, k_proj, v_proj, o_proj, q_norm, k_norm, post_norm;
    // A dense layer's MLP ...
    torch::Tensor gate_proj, up_proj, down_proj;
    // Biases where the config has them (ModelConfig's qkv_bias, o_bias,
    // mlp_bias), q_norm / k_norm where qk_norm; undefined otherwise, which
    // torch::linear reads as none.
    torch::Tensor q_bias, k_bias, v_bias, o_bias, gate_bias, up_bias, down_bias;
    // ... or a mixture-of-experts layer's (Qwen3-MoE): router [E, H], the
    // experts' fused gate/up [E, 2 moe_i, H] and down [E, H, moe_i].
    torch::Tensor router, experts_gate_up, experts_down;
};

// A tensor of a layer as the checkpoint names it (after "model.layers.L."),
// its shape, and where LayerWeights holds it.
struct LayerTensor {
    std::string name;
    std::vector<int64_t> shape;
    torch::Tensor LayerWeights::*member;
};
// Every tensor layer l of this config reads (layer_tensors.cpp), the one
// list that the loader and check_weights both follow.
std::vector<LayerTensor> layer_tensors(const ModelConfig &c, int64_t l);
// Every tensor of a LayerWeights, for the code that visits them all.
std::vector<torch::Tensor LayerWeights::*> layer_members();

// The feed-forward of one layer on rows x [N, H] (moe.cpp): SwiGLU, or the
// router and its top-k experts when L.router is defined, as transformers
// computes them (each expert over its rows in chunks whose temporaries stay
// under block_bytes; the dense MLP is not tiled here).
torch::Tensor feed_forward(const ModelConfig &c, const LayerWeights &L, const torch::Tensor &x,
                           int64_t block_bytes);
// SiLU rounded once in reduced precision, as PyTorch 2 computes it.
torch::Tensor silu_rounded_once(const torch::Tensor &g);
// RoPE's rotation of the halves of the last dimension: (-x2, x1), as
// transformers' rotate_half (model.cpp; the KV cache and the scorers too).
torch::Tensor rotate_half(const torch::Tensor &x);

// Sliding-window geometry shared by all SWA units of a forward: query t sees
// key s iff s <= t and (s > t - window or s < sink).
struct Window {
    int64_t window = 1;
    int64_t sink = 0;
};

// Called after the attention of a layer (before o_proj) with the per-head
// outputs [B, heads, T, head_dim] (head h = g * r + i uses KV head g). Tests
// only; empty by default.
using AttentionHook = std::function<void(int64_t layer, const torch::Tensor &heads)>;

class Model {
public:
    // Loads and checks config + weights, converts them to `dtype` on `device`.
    // Throws std::runtime_error with the loader's message on bad input.
    static std::unique_ptr<Model> load(const std::string &dir, torch::Device device,
                                       torch::ScalarType dtype);
    // Builds a model from tensors already in memory (tests, tools).
    static std::unique_ptr<Model> from_weights(const ModelConfig &cfg, TensorMap &w,
                                               torch::Device device, torch::ScalarType dtype);

    const ModelConfig &config() const { return cfg_; }
    torch::Device device() const { return device_; }
    const std::string &device_name() const { return device_name_; } // "cpu", "cuda:0" 
    torch::ScalarType dtype() const { return dtype_; }
    int64_t layers() const { return cfg_.num_hidden_layers; }
    int64_t kv_heads() const { return cfg_.num_key_value_heads; }
    int64_t heads_per_group() const { return cfg_.num_attention_heads / cfg_.num_key_value_heads; }
    int64_t vocab() const { return cfg_.vocab_size; }
    int64_t hidden() const { return cfg_.hidden_size; }
    // Bytes of the parameters as held on the device (tied lm_head counted once).
    int64_t param_bytes() const;
    // What identifies the model's scores: a hash of the config fields the
    // forward reads and of every weight tensor (name, dtype, shape, bytes)
    // as stored, "xxh3:<config>-<weights>" in hex. Same weights in other
    // shards or another config.json layout: the same identity.
    const std::string &identity() const { return identity_; }

    // tokens: int64 [B, T] on the model's device -> hidden [B, T, H] (dtype).
    torch::Tensor embed(const torch::Tensor &tokens) const;
    // Runs layers [from, to) on hidden states h [B, T, H]. `units`: bool
    // [B, L, G] on the model's device (true = SWA), or an undefined tensor
    // for all-full. Returns the hidden state entering layer `to`.
    torch::Tensor run_layers(torch::Tensor h, const torch::Tensor &units, const Window &w,
                             int64_t from, int64_t to);
    // The last layer at selected positions only: h [B, T, H] enters layer
    // L-1; keys and values come from every position, but queries, o_proj
    // and the MLP run at rows [B, R] (positions in [0, T), per batch
    // element) only. Returns the hidden states leaving the last layer at
    // those rows [B, R, H]: run_layers(h, ..., L-1, L) gathered at `rows`,
    // up to rounding (the attention of R queries is computed as the masked
    // reference computes it). What the scores read of a whole forward: the
    // evaluator's last layer costs its rows, not its T positions. The
    // hooks are not called.
    torch::Tensor last_layer_at(const torch::Tensor &h, const torch::Tensor &units,
                                const Window &w, const torch::Tensor &rows);
    // Final norm + lm_head on selected rows h [..., H] -> fp32 logits [..., V].
    torch::Tensor logits(const torch::Tensor &h) const;
    // Full forward: tokens [B, T] int64, units as above; logits at `positions`
    // (int64 [P], same for every sequence) -> fp32 [B, P, V].
    torch::Tensor forward(const torch::Tensor &tokens, const torch::Tensor &units,
                          const Window &w, const torch::Tensor &positions);

    // Upper bound on the bytes of one attention score block (fp32) and on the
    // MLP intermediate of one row block; the forward tiles queries / rows to
    // stay below it. Results do not depend on it beyond fp rounding.
    void set_block_bytes(int64_t bytes) { block_bytes_ = bytes > 0 ? bytes : block_bytes_; }
    int64_t block_bytes() const { return block_bytes_; }
    // SWA units are computed banded (keys outside sink + window are never
    // multiplied) unless BOSCH_TORCH_ATTENTION=masked was set when the model
    // was built: then every unit scores all causal keys and the window is a
    // mask (the reference path, for tests and benchmarks).
    bool masked_attention() const { return masked_attention_; }
    // SWA units through the fused kernel (banded_fused) rather than tiles:
    // the default with PyTorch 2 (on every device), never with 1.x or
    // BOSCH_TORCH_ATTENTION=tiled.
    bool fused_band() const { return fused_band_ && !masked_attention_; }
    // Switches the path (under `mutex`): the evaluator's noise measurement
    // runs the same masks through the other one.
    void set_masked_attention(bool on) { masked_attention_ = on; }

    // Read access for the static scorers (scorers.cpp), which recompute the
    // attention untiled, with its probabilities, from the same weights.
    const LayerWeights &layer(int64_t l) const { return layers_.at(size_t(l)); }
    const torch::Tensor &final_norm_weight() const { return final_norm_; }
    const torch::Tensor &lm_head_weight() const { return lm_head_; }
    // RoPE cos, sin [len, head_dim] in dtype (the forward's tables, extended
    // to `len` when shorter).
    std::pair<torch::Tensor, torch::Tensor> rope(int64_t len) {
        ensure_rope(len);
        return {cos_.narrow(0, 0, len), sin_.narrow(0, 0, len)};
    }
    // Qwen3RMSNorm as the forward applies it.
    torch::Tensor rms_norm(const torch::Tensor &x, const torch::Tensor &weight) const;
    // The per-head norm: rms_norm where the family has one (weight defined), else x.
    torch::Tensor head_norm(const torch::Tensor &x, const torch::Tensor &weight) const;
    // x [B, T, H] -> heads [B, T, heads, D] before RoPE: the projection w
    // (+ bias), then head_norm (norm undefined: none). What every path that
    // recomputes a layer's q, k or v calls (the scorers, the KV cache).
    torch::Tensor project_heads(const torch::Tensor &x, const torch::Tensor &w,
                                const torch::Tensor &bias, const torch::Tensor &norm,
                                int64_t heads) const;

    AttentionHook hook; // tests only
    // Called in attention() with each layer's keys and values [B, G, T, D]
    // after the head norm and RoPE (the hybrid KV cache's prefill).
    std::function<void(int64_t layer, const torch::Tensor &k, const torch::Tensor &v)> kv_hook;

    // One thread at a time (torch.h): the C API holds this while computing.
    std::mutex mutex;

private:
    Model(const ModelConfig &cfg, torch::Device device, torch::ScalarType dtype)
        : cfg_(cfg), device_(device), dtype_(dtype), device_name_(device.str()) {}
    // any_sliding: whether some unit of this layer slides, when the caller
    // knows it (1 / 0; -1: ask the units, a host sync on CUDA).
    torch::Tensor attention(int64_t layer, const torch::Tensor &x, const torch::Tensor &units,
                            const Window &w, int any_sliding = -1);
    // attention()'s parts. q [B, nH, T, D], k and v [B, G, T, D], contiguous,
    // RoPE applied.
    void project_qkv(const LayerWeights &L, const torch::Tensor &x, torch::Tensor &q,
                     torch::Tensor &k, torch::Tensor &v);
    // Its keys and values alone (last_layer_at projects queries at its rows).
    void project_kv(const LayerWeights &L, const torch::Tensor &x, torch::Tensor &k,
                    torch::Tensor &v);
    // Attention of q5 [B, G, r, T, D] into out (same shape): the kernels'
    // path (banded SWA pairs, causal full pairs) and the masked reference
    // (BOSCH_TORCH_ATTENTION=masked). swa_units: bool [B, G, 1, 1, 1] of the
    // sliding units, or undefined (none); layer_slides: the config's window.
    void attend_kernels(const torch::Tensor &q5, const torch::Tensor &k, const torch::Tensor &v,
                        torch::Tensor &out, const torch::Tensor &swa_units, bool layer_slides,
                        const Window &w);
    // How layer l attends over T positions (model.cpp): *layer_slides when
    // the config slides it; the sliding units [B, G, 1, 1, 1] or undefined.
    torch::Tensor sliding_units(int64_t l, const torch::Tensor &units, const Window &w, int64_t T,
                                bool *layer_slides, int any_sliding = -1) const;
    void attend_masked(const torch::Tensor &q5, const torch::Tensor &k, const torch::Tensor &v,
                       torch::Tensor &out, const torch::Tensor &swa_units, bool layer_slides,
                       const Window &w);
    torch::Tensor mlp(int64_t layer, const torch::Tensor &x) const;
    // q or k heads [B, heads, T, D] for f32 on the CPU: projection, head norm
    // and RoPE in workspace slots, the last one `slot` (the result): the
    // generic path's [T, heads, D] temporaries are each mmap'd and
    // page-faulted afresh by glibc, and its rotate_half copies add passes.
    torch::Tensor heads_f32(const torch::Tensor &x2, const torch::Tensor &proj_w,
                            const torch::Tensor &bias, const torch::Tensor &norm_w, int64_t B,
                            int64_t T, int64_t heads, const torch::Tensor &cos,
                            const torch::Tensor &sin, torch::Tensor &slot);
    void ensure_rope(int64_t len);

    ModelConfig cfg_;
    torch::Device device_;
    torch::ScalarType dtype_;
    std::string device_name_;
    std::string identity_;
    torch::Tensor embed_, final_norm_, lm_head_;
    std::vector<LayerWeights> layers_;
    torch::Tensor cos_, sin_; // [T_cached, head_dim] in dtype
    int64_t rope_key_ = 0;    // rope_length_key of the cached tables
    int64_t block_bytes_ = int64_t(16) << 20;
    bool masked_attention_ = false; // BOSCH_TORCH_ATTENTION=masked
    bool tiled_attention_ = false;  // BOSCH_TORCH_ATTENTION=tiled
    bool fused_band_ = false;       // SWA units through banded_fused (see from_weights)
    Workspace ws_;                  // attention tiles' scratch, under `mutex`
};

// "f32"/"bf16"/... names for messages.
const char *dtype_name(torch::ScalarType t);

} // namespace bosch_torch
