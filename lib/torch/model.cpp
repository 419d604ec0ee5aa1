// The decoder forward with per-unit (layer, KV group) full / sliding-window
// attention.
// See model.hpp for the semantics; the order of operations (and of dtype
// casts) mirrors Hugging Face modeling_qwen3.py with eager attention so that
// bf16 results match it as closely as the kernels allow.
//
// This file: the forward itself (norms, RoPE, projections, attention through
// the kernels, MLP, layers, logits); loading in model_load.cpp, the masked
// reference attention and the last layer at selected rows in
// model_masked.cpp.
#include "model.hpp"

#include "attention.hpp"
#include "failure.hpp"
#include "rope.hpp"

#include <algorithm>
#include <cmath>

namespace bosch_torch {

torch::Tensor Model::rms_norm(const torch::Tensor &x, const torch::Tensor &weight) const {
    // HF Qwen3RMSNorm: fp32 statistics, cast back to the input dtype, then
    // weight * x (in the model dtype).
    torch::Tensor h = x.to(torch::kFloat32);
    torch::Tensor var = h.pow(2).mean(-1, /*keepdim=*/true);
    h = h * torch::rsqrt(var + cfg_.rms_norm_eps);
    return weight * h.to(x.scalar_type());
}

torch::Tensor Model::head_norm(const torch::Tensor &x, const torch::Tensor &weight) const {
    return weight.defined() ? rms_norm(x, weight) : x;
}

void Model::ensure_rope(int64_t len) {
    const int64_t key = rope_length_key(cfg_, len);
    if (cos_.defined() && cos_.size(0) >= len && key == rope_key_)
        return;
    // Same arithmetic as transformers' rotary embeddings: fp32 inv_freq
    // (rope.cpp, by the config's rope type), freqs = pos * inv_freq,
    // emb = cat(freqs, freqs); cos/sin in fp32 times the type's attention
    // scaling (1 but for yarn and longrope), then cast to the dtype. The
    // types whose frequencies depend on the length build the table for
    // exactly `len` positions.
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
    const auto freq = rope_frequencies(cfg_, len, device_);
    torch::Tensor pos = torch::arange(len, f32);
    torch::Tensor freqs = pos.unsqueeze(1) * freq.first.unsqueeze(0); // [T, D/2]
    torch::Tensor emb = torch::cat({freqs, freqs}, -1);
    cos_ = (emb.cos() * freq.second).to(dtype_);
    sin_ = (emb.sin() * freq.second).to(dtype_);
    rope_key_ = key;
}

torch::Tensor Model::embed(const torch::Tensor &tokens) const {
    return torch::embedding(embed_, tokens);
}

torch::Tensor rotate_half(const torch::Tensor &x) {
    const int64_t half = x.size(-1) / 2;
    return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

namespace {

// out = x2 w^T (+ bias), as torch::linear computes it (addmm with a bias),
// into a workspace tensor.
void linear_out(torch::Tensor &out, const torch::Tensor &x2, const torch::Tensor &w,
                const torch::Tensor &bias) {
    if (bias.defined())
        at::addmm_out(out, bias, x2, w.t());
    else
        at::mm_out(out, x2, w.t());
}

} // namespace

torch::Tensor Model::heads_f32(const torch::Tensor &x2, const torch::Tensor &proj_w,
                               const torch::Tensor &bias, const torch::Tensor &norm_w, int64_t B,
                               int64_t T, int64_t heads, const torch::Tensor &cos,
                               const torch::Tensor &sin, torch::Tensor &slot) {
    const int64_t D = cfg_.head_dim, half = D / 2, n = B * T * heads * D;
    const auto opts = x2.options();
    torch::Tensor p = take(ws_.proj, n, opts).view({B, T, heads, D});
    torch::Tensor p2 = p.view({B * T, heads * D});
    linear_out(p2, x2, proj_w, bias);
    torch::Tensor h = p;
    if (norm_w.defined()) {
        // Qwen3RMSNorm over head_dim: h = p * rsqrt(mean(p^2) + eps), then
        // weight * h (the product commutes exactly).
        h = take(ws_.sq, n, opts).view({B, T, heads, D});
        at::pow_out(h, p, 2);
        torch::Tensor rs = h.mean(-1, /*keepdim=*/true).add_(cfg_.rms_norm_eps).rsqrt_();
        at::mul_out(h, p, rs);
        h.mul_(norm_w);
    }
    // RoPE, h * cos + rotate_half(h) * sin, written [B, heads, T, D]: the
    // rotated half enters as addcmul with value -1 / +1 ((-1 * a) * b is
    // exactly (-a) * b), so no rotated copy and no concatenation is made.
    torch::Tensor ht = h.transpose(1, 2);
    torch::Tensor out = take(slot, n, opts).view({B, heads, T, D});
    at::mul_out(out, ht, cos);
    out.narrow(3, 0, half).addcmul_(ht.narrow(3, half, half), sin.narrow(1, 0, half), -1.0);
    out.narrow(3, half, half).addcmul_(ht.narrow(3, 0, half), sin.narrow(1, half, half), 1.0);
    return out;
}

torch::Tensor Model::project_heads(const torch::Tensor &x, const torch::Tensor &w,
                                   const torch::Tensor &bias, const torch::Tensor &norm,
                                   int64_t heads) const {
    return head_norm(torch::linear(x, w, bias).view({x.size(0), x.size(1), heads, cfg_.head_dim}),
                     norm);
}

void Model::project_qkv(const LayerWeights &L, const torch::Tensor &x, torch::Tensor &q,
                        torch::Tensor &k, torch::Tensor &v) {
    const int64_t B = x.size(0), T = x.size(1);
    const int64_t nH = cfg_.num_attention_heads;
    ensure_rope(T);
    torch::Tensor cos = cos_.narrow(0, 0, T), sin = sin_.narrow(0, 0, T);
    if (x.scalar_type() == torch::kFloat32 && x.device().is_cpu()) {
        q = heads_f32(x.reshape({B * T, x.size(2)}), L.q_proj, L.q_bias, L.q_norm, B, T, nH, cos,
                      sin, ws_.q);
    } else {
        q = project_heads(x, L.q_proj, L.q_bias, L.q_norm, nH).transpose(1, 2);
        q = (q * cos + rotate_half(q) * sin).contiguous();
    }
    project_kv(L, x, k, v);
}

void Model::project_kv(const LayerWeights &L, const torch::Tensor &x, torch::Tensor &k,
                       torch::Tensor &v) {
    const int64_t B = x.size(0), T = x.size(1), D = cfg_.head_dim;
    const int64_t G = cfg_.num_key_value_heads;
    ensure_rope(T);
    torch::Tensor cos = cos_.narrow(0, 0, T), sin = sin_.narrow(0, 0, T);
    if (x.scalar_type() == torch::kFloat32 && x.device().is_cpu()) {
        torch::Tensor x2 = x.reshape({B * T, x.size(2)});
        k = heads_f32(x2, L.k_proj, L.k_bias, L.k_norm, B, T, G, cos, sin, ws_.k);
        torch::Tensor p = take(ws_.proj, B * T * G * D, x.options()).view({B * T, G * D});
        linear_out(p, x2, L.v_proj, L.v_bias);
        v = take(ws_.v, B * G * T * D, x.options()).view({B, G, T, D});
        v.copy_(p.view({B, T, G, D}).transpose(1, 2));
    } else {
        k = project_heads(x, L.k_proj, L.k_bias, L.k_norm, G).transpose(1, 2);
        v = project_heads(x, L.v_proj, L.v_bias, torch::Tensor(), G).transpose(1, 2).contiguous();
        k = (k * cos + rotate_half(k) * sin).contiguous();
    }
}

void Model::attend_kernels(const torch::Tensor &q5, const torch::Tensor &k,
                           const torch::Tensor &v, torch::Tensor &out,
                           const torch::Tensor &swa_units, bool layer_slides, const Window &w) {
    const int64_t B = q5.size(0), G = q5.size(1), r = q5.size(2), T = q5.size(3),
                  D = q5.size(4);
    const double scale = std::pow(double(D), -0.5);
    // Banded SWA pairs, causal full pairs, over the flattened [B * G]
    // (batch element, KV group) pairs.
    const int64_t P = B * G;
    torch::Tensor qf = q5.view({P, r, T, D}), kf = k.view({P, T, D}), vf = v.view({P, T, D});
    torch::Tensor outf = out.view({P, r, T, D});
    // The fused kernels take the model's scale as their default.
    const bool fused_band = fused_band_ && std::abs(scale * std::sqrt(double(D)) - 1.0) < 1e-12;
    auto banded = [&](const torch::Tensor &qs, const torch::Tensor &ks, const torch::Tensor &vs,
                      torch::Tensor os, int64_t window, int64_t sink) {
        if (fused_band)
            banded_fused(qs, ks, vs, os, window, sink, block_bytes_);
        else
            banded_pairs(qs, ks, vs, os, scale, window, sink, block_bytes_, ws_);
    };
    if (layer_slides) {
        banded(qf, kf, vf, outf, cfg_.sliding_window, 0);
    } else if (!swa_units.defined()) { // an all-full layer
        causal_pairs(qf, kf, vf, outf, scale, block_bytes_, ws_, tiled_attention_);
    } else {
        torch::Tensor flat = swa_units.reshape({P});
        torch::Tensor swa_idx = flat.nonzero().view({-1});
        torch::Tensor full_idx = flat.logical_not().nonzero().view({-1});
        auto run = [&](const torch::Tensor &idx, bool is_banded) {
            const int64_t S = idx.size(0);
            if (S == 0)
                return;
            if (S == P) { // every pair: no gather / scatter
                if (is_banded)
                    banded(qf, kf, vf, outf, w.window, w.sink);
                else
                    causal_pairs(qf, kf, vf, outf, scale, block_bytes_, ws_,
                                 tiled_attention_);
                return;
            }
            torch::Tensor qs = qf.index_select(0, idx), ks = kf.index_select(0, idx),
                          vs = vf.index_select(0, idx);
            torch::Tensor os = torch::empty_like(qs);
            if (is_banded)
                banded(qs, ks, vs, os, w.window, w.sink);
            else
                causal_pairs(qs, ks, vs, os, scale, block_bytes_, ws_, tiled_attention_);
            outf.index_copy_(0, idx, os);
        };
        run(full_idx, false);
        run(swa_idx, true);
    }
}

// How layer `l` attends over T positions, for attention() and last_layer_at:
// a layer the config makes sliding (hybrid models) slides in every group,
// over the config's window without sink tokens, whatever the unit mask. A
// window that covers the sequence (every query sees every earlier key:
// window + sink >= T) is full attention and takes the full kernel, so that
// it is full attention bit for bit whatever the kernels: on PyTorch 2 the
// full path is one causal fused call and the banded one masked chunks (or
// tiles), and the two round differently. Else the units of layer l that
// slide, bool [B, G, 1, 1, 1], undefined when none does.
torch::Tensor Model::sliding_units(int64_t l, const torch::Tensor &units, const Window &w,
                                   int64_t T, bool *layer_slides, int any_sliding) const {
    *layer_slides = size_t(l) < cfg_.layer_sliding.size() && cfg_.layer_sliding[size_t(l)] &&
                    cfg_.sliding_window < T;
    if (!units.defined() || *layer_slides || w.window + w.sink >= T || any_sliding == 0)
        return torch::Tensor();
    torch::Tensor m = units.select(1, l); // [B, G]
    if (any_sliding < 0 && !m.any().item<bool>())
        return torch::Tensor();
    return m.view({m.size(0), m.size(1), 1, 1, 1});
}

torch::Tensor Model::attention(int64_t layer, const torch::Tensor &x, const torch::Tensor &units,
                               const Window &w, int any_sliding) {
    const LayerWeights &L = layers_[size_t(layer)];
    const int64_t B = x.size(0), T = x.size(1), D = cfg_.head_dim;
    const int64_t G = cfg_.num_key_value_heads, nH = cfg_.num_attention_heads, r = nH / G;
    torch::Tensor q, k, v;
    project_qkv(L, x, q, k, v);
    if (kv_hook)
        kv_hook(layer, k, v);

    // GQA without repeat_kv: query head g*r+i of KV group g is row block i of
    // [B, G, r*n, D] against the group's keys [B, G, D, t1].
    torch::Tensor q5 = q.view({B, G, r, T, D});
    torch::Tensor out = torch::empty({B, G, r, T, D}, q.options());

    bool layer_slides = false;
    const torch::Tensor swa_units = sliding_units(layer, units, w, T, &layer_slides, any_sliding);

    if (masked_attention_)
        attend_masked(q5, k, v, out, swa_units, layer_slides, w);
    else
        attend_kernels(q5, k, v, out, swa_units, layer_slides, w);
    if (hook)
        hook(layer, out.view({B, nH, T, D}));
    // [B, G, r, T, D] -> [B, T, nH * D] with head index g*r + i (HF order).
    torch::Tensor o = out.permute({0, 3, 1, 2, 4}).reshape({B, T, nH * D});
    return torch::linear(o, L.o_proj, L.o_bias);
}

torch::Tensor Model::mlp(int64_t layer, const torch::Tensor &x) const {
    const LayerWeights &L = layers_[size_t(layer)];
    const int64_t B = x.size(0), T = x.size(1), H = x.size(2);
    const int64_t rows = B * T;
    torch::Tensor flat = x.reshape({rows, H});
    // The experts tile their own rows: row blocks here would read every
    // expert's weights once per block (measured 5x the dense MLP's time).
    if (L.router.defined())
        return feed_forward(cfg_, L, flat, block_bytes_).view({B, T, H});
    const int64_t per_row =
        std::max<int64_t>(1, cfg_.intermediate_size * int64_t(x.element_size()) * 3);
    const int64_t block = std::max<int64_t>(1, block_bytes_ / per_row);
    if (block >= rows)
        return feed_forward(cfg_, L, flat, block_bytes_).view({B, T, H});
    torch::Tensor out = torch::empty({rows, H}, x.options());
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
        const int64_t n = std::min(block, rows - r0);
        out.narrow(0, r0, n).copy_(feed_forward(cfg_, L, flat.narrow(0, r0, n), block_bytes_));
    }
    return out.view({B, T, H});
}

torch::Tensor Model::run_layers(torch::Tensor h, const torch::Tensor &units, const Window &w,
                                int64_t from, int64_t to) {
    if (from < 0 || to > layers() || from > to)
        invalid("run_layers: bad layer range");
    if (units.defined()) {
        TORCH_CHECK(units.dim() == 3 && units.size(0) == h.size(0) && units.size(1) == layers() &&
                        units.size(2) == kv_heads() && units.scalar_type() == torch::kBool,
                    "run_layers: units must be bool [B, layers, kv_heads]");
    }
    // Which of the layers have a sliding unit, read to the host once: on
    // CUDA a read per layer would make the host wait for the device's queue
    // to drain before each layer's launches.
    torch::Tensor any_sliding;
    if (units.defined() && to > from)
        any_sliding = units.narrow(1, from, to - from).any(2).any(0).to(torch::kCPU);
    for (int64_t l = from; l < to; l++) {
        const LayerWeights &L = layers_[size_t(l)];
        const int any = any_sliding.defined() ? int(any_sliding[l - from].item<bool>()) : -1;
        // Functional updates only: callers may keep earlier hidden states.
        h = h + attention(l, rms_norm(h, L.input_norm), units, w, any);
        h = h + mlp(l, rms_norm(h, L.post_norm));
    }
    return h;
}

torch::Tensor Model::logits(const torch::Tensor &h) const {
    return torch::linear(rms_norm(h, final_norm_), lm_head_).to(torch::kFloat32);
}

torch::Tensor Model::forward(const torch::Tensor &tokens, const torch::Tensor &units,
                             const Window &w, const torch::Tensor &positions) {
    torch::Tensor h = run_layers(embed(tokens), units, w, 0, layers());
    return logits(h.index_select(1, positions));
}

} // namespace bosch_torch
