// Qwen3 forward with per-unit (layer, KV group) full / sliding-window attention.
// See model.hpp for the semantics; the order of operations (and of dtype
// casts) mirrors Hugging Face modeling_qwen3.py with eager attention so that
// bf16 results match it as closely as the kernels allow.
#include "model.hpp"

#include "attention.hpp"
#include "failure.hpp"

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <unistd.h>
#include <xxhash.h>

namespace bosch_torch {

const char *dtype_name(torch::ScalarType t) {
    switch (t) {
    case torch::kFloat32:
        return "f32";
    case torch::kBFloat16:
        return "bf16";
    case torch::kFloat16:
        return "f16";
    default:
        return "?";
    }
}

namespace {

std::string layer_name(int64_t l, const char *suffix) {
    return "model.layers." + std::to_string(l) + "." + suffix;
}

// Moves a tensor out of the map (so its CPU copy can be freed early) and
// converts it to the model's device and dtype.
torch::Tensor take(TensorMap &w, const std::string &name, torch::Device dev,
                   torch::ScalarType dt) {
    auto it = w.find(name);
    if (it == w.end())
        invalid("checkpoint: missing tensor " + name);
    torch::Tensor t = it->second.to(dev, dt).contiguous();
    w.erase(it);
    return t;
}

void expect_shape(const torch::Tensor &t, const std::string &name, c10::IntArrayRef shape) {
    if (t.sizes() != shape)
        invalid("checkpoint: tensor " + name + " has shape " + c10::str(t.sizes()) +
                ", expected " + c10::str(shape));
}

// Refuses a dtype the device's kernels lack (f16 matmul / silu on CPU in
// libtorch 1.x) at load time rather than failing in the first forward.
void probe_dtype(torch::Device dev, torch::ScalarType dt) {
    try {
        torch::Tensor a = torch::ones({2, 2}, torch::TensorOptions().dtype(dt).device(dev));
        torch::Tensor b = torch::silu(torch::linear(a, a));
        (void)torch::softmax(b, -1, torch::kFloat32);
    } catch (const c10::Error &) {
        invalid(std::string("dtype ") + dtype_name(dt) + " is not supported on " + dev.str() +
                " by this libtorch (use f32 or bf16)");
    }
}

// Model::identity(): the config fields the forward reads, then every
// tensor (name, dtype, shape, bytes) in name order, each hashed with XXH3.
std::string model_identity(const Qwen3Config &c, const TensorMap &w) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, "%lld %lld %lld %lld %lld %lld %lld %.17g %.17g %d %lld ",
                          (long long)c.vocab_size, (long long)c.hidden_size,
                          (long long)c.intermediate_size, (long long)c.num_hidden_layers,
                          (long long)c.num_attention_heads, (long long)c.num_key_value_heads,
                          (long long)c.head_dim, c.rms_norm_eps, c.rope_theta,
                          int(c.tie_word_embeddings), (long long)c.sliding_window);
    std::string cfg(buf, size_t(std::max(n, 0)));
    for (uint8_t l : c.layer_sliding)
        cfg += char('0' + l);
    if (c.moe) { // dense models keep the identity they had before MoE support
        n = std::snprintf(buf, sizeof buf, " moe %lld %lld %lld %d ", (long long)c.num_experts,
                          (long long)c.num_experts_per_tok, (long long)c.moe_intermediate_size,
                          int(c.norm_topk_prob));
        cfg.append(buf, size_t(std::max(n, 0)));
        for (uint8_t l : c.layer_sparse)
            cfg += char('0' + l);
    }
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        throw std::bad_alloc();
    XXH3_64bits_reset(st);
    for (const auto &kv : w) {
        const torch::Tensor t = kv.second.contiguous();
        std::string head = kv.first + ":" + dtype_name(t.scalar_type()) + ":" + c10::str(t.sizes());
        XXH3_64bits_update(st, head.data(), head.size() + 1);
        XXH3_64bits_update(st, t.data_ptr(), t.nbytes());
    }
    const unsigned long long wh = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    std::snprintf(buf, sizeof buf, "xxh3:%016llx-%016llx",
                  (unsigned long long)XXH3_64bits(cfg.data(), cfg.size()), wh);
    return buf;
}

} // namespace

std::unique_ptr<Model> Model::load(const std::string &dir, torch::Device device,
                                   torch::ScalarType dtype) {
    {
        std::ifstream f(dir + "/config.json");
        if (!f)
            io_error("cannot open " + dir + "/config.json");
    }
    {
        std::ifstream a(dir + "/model.safetensors"), b(dir + "/model.safetensors.index.json");
        if (!a && !b)
            io_error("cannot open " + dir + "/model.safetensors (nor " + dir +
                     "/model.safetensors.index.json)");
    }
    Qwen3Config cfg;
    std::string err = load_config(dir, cfg);
    if (!err.empty())
        invalid(err);
    // The memory the config implies, before reading anything: every
    // device's weights pass through host memory first.
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        err = check_memory(cfg, double(pages) * double(page));
        if (!err.empty())
            throw Failure(BOSCH_E_NOMEM, err);
    }
    probe_dtype(device, dtype); // before reading gigabytes
    TensorMap w;
    err = load_weights(dir, w);
    if (!err.empty())
        invalid(err);
    err = fuse_experts(cfg, w);
    if (!err.empty())
        invalid(err);
    err = check_weights(cfg, w);
    if (!err.empty())
        invalid(err);
    return from_weights(cfg, w, device, dtype);
}

std::unique_ptr<Model> Model::from_weights(const Qwen3Config &cfg, TensorMap &w,
                                           torch::Device device, torch::ScalarType dtype) {
    if (cfg.num_hidden_layers <= 0 || cfg.num_key_value_heads <= 0 ||
        cfg.num_attention_heads % cfg.num_key_value_heads != 0 || cfg.head_dim <= 0 ||
        cfg.head_dim % 2 != 0 || cfg.vocab_size <= 0 || cfg.hidden_size <= 0 ||
        (cfg.intermediate_size <= 0 && cfg.any_dense_mlp()) ||
        (cfg.moe && cfg.layer_sparse.size() != size_t(cfg.num_hidden_layers)))
        invalid("checkpoint: inconsistent config");
    probe_dtype(device, dtype);
    {
        std::string err = fuse_experts(cfg, w); // the experts' layout, before the identity
        if (!err.empty())
            invalid("checkpoint: " + err);
    }
    std::unique_ptr<Model> m(new Model(cfg, device, dtype));
    m->identity_ = model_identity(cfg, w); // before the tensors leave the map
    // Tiles of the attention scores / MLP intermediates: larger on a GPU
    // (fewer kernel launches). On the CPU, 16 MB keeps every temporary below
    // glibc's mmap threshold (32 MB at most): larger tiles are mmap'd and
    // page-faulted afresh on every allocation, which measured 1.7x slower on
    // the organism (sys time as large as user time). BOSCH_TORCH_BLOCK_MB
    // overrides.
    m->block_bytes_ = device.is_cuda() ? int64_t(2) << 30 : int64_t(16) << 20;
    if (const char *env = std::getenv("BOSCH_TORCH_BLOCK_MB")) {
        char *end = nullptr;
        long long mb = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0' && mb > 0)
            m->block_bytes_ = int64_t(mb) << 20;
    }
    // BOSCH_TORCH_ATTENTION=masked: the all-masked reference attention (SWA
    // units cost as much as full ones); =tiled: the project's own tiles for
    // every unit, never the fused kernel of torch >= 2; =fused, or anything
    // else: the fused kernel for every unit where this libtorch has it (on a
    // GPU a host-driven tile costs more than the work it saves, and on the
    // CPU bench_attention measured the fused band as fast as the tiles at
    // window 128 and 1.5x as fast at window 1024, 8k tokens).
    m->fused_band_ = fused_available();
    if (const char *env = std::getenv("BOSCH_TORCH_ATTENTION")) {
        m->masked_attention_ = std::strcmp(env, "masked") == 0;
        m->tiled_attention_ = std::strcmp(env, "tiled") == 0;
        if (m->tiled_attention_)
            m->fused_band_ = false;
    }
    const int64_t H = cfg.hidden_size, I = cfg.intermediate_size, D = cfg.head_dim;
    const int64_t nq = cfg.num_attention_heads * D, nkv = cfg.num_key_value_heads * D;
    m->embed_ = take(w, "model.embed_tokens.weight", device, dtype);
    expect_shape(m->embed_, "model.embed_tokens.weight", {cfg.vocab_size, H});
    m->final_norm_ = take(w, "model.norm.weight", device, dtype);
    expect_shape(m->final_norm_, "model.norm.weight", {H});
    // Hugging Face ties lm_head to the embeddings when tie_word_embeddings is
    // set (a stored lm_head.weight is then ignored).
    if (cfg.tie_word_embeddings) {
        m->lm_head_ = m->embed_;
        w.erase("lm_head.weight");
    } else {
        m->lm_head_ = take(w, "lm_head.weight", device, dtype);
        expect_shape(m->lm_head_, "lm_head.weight", {cfg.vocab_size, H});
    }
    m->layers_.resize(size_t(cfg.num_hidden_layers));
    for (int64_t l = 0; l < cfg.num_hidden_layers; l++) {
        LayerWeights &L = m->layers_[size_t(l)];
        struct Spec {
            torch::Tensor *dst;
            const char *name;
            std::vector<int64_t> shape;
        };
        std::vector<Spec> spec = {
            {&L.input_norm, "input_layernorm.weight", {H}},
            {&L.q_proj, "self_attn.q_proj.weight", {nq, H}},
            {&L.k_proj, "self_attn.k_proj.weight", {nkv, H}},
            {&L.v_proj, "self_attn.v_proj.weight", {nkv, H}},
            {&L.o_proj, "self_attn.o_proj.weight", {H, nq}},
            {&L.q_norm, "self_attn.q_norm.weight", {D}},
            {&L.k_norm, "self_attn.k_norm.weight", {D}},
            {&L.post_norm, "post_attention_layernorm.weight", {H}},
        };
        const int64_t E = cfg.num_experts, Im = cfg.moe_intermediate_size;
        if (cfg.sparse(l))
            spec.insert(spec.end(),
                        {{&L.router, "mlp.gate.weight", {E, H}},
                         {&L.experts_gate_up, "mlp.experts.gate_up_proj", {E, 2 * Im, H}},
                         {&L.experts_down, "mlp.experts.down_proj", {E, H, Im}}});
        else
            spec.insert(spec.end(), {{&L.gate_proj, "mlp.gate_proj.weight", {I, H}},
                                     {&L.up_proj, "mlp.up_proj.weight", {I, H}},
                                     {&L.down_proj, "mlp.down_proj.weight", {H, I}}});
        for (const Spec &s : spec) {
            std::string name = layer_name(l, s.name);
            *s.dst = take(w, name, device, dtype);
            expect_shape(*s.dst, name, s.shape);
        }
    }
    return m;
}

int64_t Model::param_bytes() const {
    auto bytes = [](const torch::Tensor &t) { return t.defined() ? t.nbytes() : size_t(0); };
    size_t n = bytes(embed_) + bytes(final_norm_);
    if (!lm_head_.is_same(embed_))
        n += bytes(lm_head_);
    for (const LayerWeights &L : layers_)
        for (const torch::Tensor *t : {&L.input_norm, &L.q_proj, &L.k_proj, &L.v_proj, &L.o_proj,
                                       &L.q_norm, &L.k_norm, &L.post_norm, &L.gate_proj,
                                       &L.up_proj, &L.down_proj, &L.router, &L.experts_gate_up,
                                       &L.experts_down})
            n += bytes(*t);
    return int64_t(n);
}

torch::Tensor Model::rms_norm(const torch::Tensor &x, const torch::Tensor &weight) const {
    // HF Qwen3RMSNorm: fp32 statistics, cast back to the input dtype, then
    // weight * x (in the model dtype).
    torch::Tensor h = x.to(torch::kFloat32);
    torch::Tensor var = h.pow(2).mean(-1, /*keepdim=*/true);
    h = h * torch::rsqrt(var + cfg_.rms_norm_eps);
    return weight * h.to(x.scalar_type());
}

void Model::ensure_rope(int64_t len) {
    if (cos_.defined() && cos_.size(0) >= len)
        return;
    // Same arithmetic as HF Qwen3RotaryEmbedding (default rope): fp32
    // inv_freq = 1 / theta^(arange(0, D, 2) / D), freqs = pos * inv_freq,
    // emb = cat(freqs, freqs); cos/sin in fp32, then cast to the dtype.
    const int64_t D = cfg_.head_dim;
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
    torch::Tensor exponent =
        torch::arange(0, D, 2, torch::TensorOptions().dtype(torch::kInt64).device(device_))
            .to(torch::kFloat32) /
        double(D);
    torch::Tensor inv_freq = torch::pow(cfg_.rope_theta, exponent).reciprocal();
    torch::Tensor pos = torch::arange(len, f32);
    torch::Tensor freqs = pos.unsqueeze(1) * inv_freq.unsqueeze(0); // [T, D/2]
    torch::Tensor emb = torch::cat({freqs, freqs}, -1);
    cos_ = emb.cos().to(dtype_);
    sin_ = emb.sin().to(dtype_);
}

torch::Tensor Model::embed(const torch::Tensor &tokens) const {
    return torch::embedding(embed_, tokens);
}

torch::Tensor rotate_half(const torch::Tensor &x) {
    const int64_t half = x.size(-1) / 2;
    return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

torch::Tensor Model::heads_f32(const torch::Tensor &x2, const torch::Tensor &proj_w,
                               const torch::Tensor &norm_w, int64_t B, int64_t T, int64_t heads,
                               const torch::Tensor &cos, const torch::Tensor &sin,
                               torch::Tensor &slot) {
    const int64_t D = cfg_.head_dim, half = D / 2, n = B * T * heads * D;
    const auto opts = x2.options();
    torch::Tensor p = take(ws_.proj, n, opts).view({B, T, heads, D});
    torch::Tensor p2 = p.view({B * T, heads * D});
    at::mm_out(p2, x2, proj_w.t());
    // Qwen3RMSNorm over head_dim: h = p * rsqrt(mean(p^2) + eps), then
    // weight * h (the product commutes exactly).
    torch::Tensor h = take(ws_.sq, n, opts).view({B, T, heads, D});
    at::pow_out(h, p, 2);
    torch::Tensor rs = h.mean(-1, /*keepdim=*/true).add_(cfg_.rms_norm_eps).rsqrt_();
    at::mul_out(h, p, rs);
    h.mul_(norm_w);
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

void Model::project_qkv(const LayerWeights &L, const torch::Tensor &x, torch::Tensor &q,
                        torch::Tensor &k, torch::Tensor &v) {
    const int64_t B = x.size(0), T = x.size(1), D = cfg_.head_dim;
    const int64_t nH = cfg_.num_attention_heads;
    ensure_rope(T);
    torch::Tensor cos = cos_.narrow(0, 0, T), sin = sin_.narrow(0, 0, T);
    if (x.scalar_type() == torch::kFloat32 && x.device().is_cpu()) {
        q = heads_f32(x.reshape({B * T, x.size(2)}), L.q_proj, L.q_norm, B, T, nH, cos, sin,
                      ws_.q);
    } else {
        q = rms_norm(torch::linear(x, L.q_proj).view({B, T, nH, D}), L.q_norm).transpose(1, 2);
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
        k = heads_f32(x2, L.k_proj, L.k_norm, B, T, G, cos, sin, ws_.k);
        torch::Tensor p = take(ws_.proj, B * T * G * D, x.options()).view({B * T, G * D});
        at::mm_out(p, x2, L.v_proj.t());
        v = take(ws_.v, B * G * T * D, x.options()).view({B, G, T, D});
        v.copy_(p.view({B, T, G, D}).transpose(1, 2));
    } else {
        k = rms_norm(torch::linear(x, L.k_proj).view({B, T, G, D}), L.k_norm).transpose(1, 2);
        v = torch::linear(x, L.v_proj).view({B, T, G, D}).transpose(1, 2).contiguous();
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

namespace {

// Which keys `kj` a query at position `qi` may attend (shapes broadcast):
// causal; within the config's window in a layer the config slides; within
// sink + window for the sliding units (swa_units, bool, broadcast over the
// leading dimensions; undefined = none). attend_masked and last_layer_at
// apply it alike.
torch::Tensor allowed_keys(const torch::Tensor &qi, const torch::Tensor &kj,
                           const torch::Tensor &swa_units, bool layer_slides,
                           int64_t config_window, const Window &w) {
    torch::Tensor allowed = kj <= qi;
    if (layer_slides)
        return allowed & (kj > qi - config_window);
    if (swa_units.defined())
        return torch::where(swa_units, allowed & ((kj > qi - w.window) | (kj < w.sink)), allowed);
    return allowed;
}

} // namespace

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

void Model::attend_masked(const torch::Tensor &q5, const torch::Tensor &k,
                          const torch::Tensor &v, torch::Tensor &out,
                          const torch::Tensor &swa_units, bool layer_slides, const Window &w) {
    const int64_t B = q5.size(0), G = q5.size(1), r = q5.size(2), T = q5.size(3),
                  D = q5.size(4), nH = G * r;
    const double scale = std::pow(double(D), -0.5);
    // The masked reference (BOSCH_TORCH_ATTENTION=masked): every unit over all
    // causal keys, the window applied as a mask; query tiling keeps the fp32
    // score block [B, G, r, n, T] under block_bytes_.
    const int64_t per_row = std::max<int64_t>(1, B * nH * T * 4);
    // At least 8 tiles for long sequences: keys beyond a tile's last query are
    // skipped (causal), which saves up to ~45% of the score work.
    const int64_t n_cap = std::max<int64_t>(128, (T + 7) / 8);
    const int64_t n_block =
        std::max<int64_t>(1, std::min({T, n_cap, block_bytes_ / per_row}));
    auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(device_);
    for (int64_t t0 = 0; t0 < T; t0 += n_block) {
        const int64_t n = std::min(n_block, T - t0), t1 = t0 + n; // keys 0..t1-1 suffice (causal)
        torch::Tensor qc = q5.narrow(3, t0, n).reshape({B, G, r * n, D});
        torch::Tensor kc = k.narrow(2, 0, t1), vc = v.narrow(2, 0, t1);
        torch::Tensor scores = torch::matmul(qc, kc.transpose(-1, -2)) * scale; // [B,G,r*n,t1]
        scores = scores.view({B, G, r, n, t1});

        torch::Tensor qi = torch::arange(t0, t1, i64).unsqueeze(1); // [n, 1]
        torch::Tensor kj = torch::arange(0, t1, i64).unsqueeze(0);  // [1, t1]
        // [n, t1], or [B, G, 1, n, t1] with sliding units
        torch::Tensor allowed =
            allowed_keys(qi, kj, swa_units, layer_slides, cfg_.sliding_window, w);
        scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<double>::infinity());
        torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(q5.scalar_type());
        torch::Tensor oc = torch::matmul(probs.view({B, G, r * n, t1}), vc); // [B,G,r*n,D]
        out.narrow(3, t0, n).copy_(oc.view({B, G, r, n, D}));
    }
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
    return torch::linear(o, L.o_proj);
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

torch::Tensor Model::last_layer_at(const torch::Tensor &h, const torch::Tensor &units,
                                   const Window &w, const torch::Tensor &rows) {
    const int64_t l = layers() - 1;
    const LayerWeights &L = layers_[size_t(l)];
    const int64_t B = h.size(0), T = h.size(1), H = h.size(2), R = rows.size(1);
    const int64_t D = cfg_.head_dim, G = cfg_.num_key_value_heads;
    const int64_t nH = cfg_.num_attention_heads, r = nH / G;
    TORCH_CHECK(rows.dim() == 2 && rows.size(0) == B && rows.scalar_type() == torch::kInt64,
                "last_layer_at: rows must be int64 [B, R]");
    if (units.defined())
        TORCH_CHECK(units.dim() == 3 && units.size(0) == B && units.size(1) == layers() &&
                        units.size(2) == G && units.scalar_type() == torch::kBool,
                    "last_layer_at: units must be bool [B, layers, kv_heads]");
    const torch::Tensor x = rms_norm(h, L.input_norm);
    torch::Tensor k, v; // of every position
    project_kv(L, x, k, v);
    torch::Tensor cos = cos_.narrow(0, 0, T), sin = sin_.narrow(0, 0, T);
    // Queries at the rows only, each rotated by its own position.
    const torch::Tensor flat_rows =
        (rows + torch::arange(B, rows.options()).mul_(T).unsqueeze(1)).reshape({-1});
    const torch::Tensor hr = h.reshape({B * T, H}).index_select(0, flat_rows).view({B, R, H});
    const torch::Tensor xr = x.reshape({B * T, H}).index_select(0, flat_rows).view({B, R, H});
    torch::Tensor q = rms_norm(torch::linear(xr, L.q_proj).view({B, R, nH, D}), L.q_norm);
    const torch::Tensor pos = rows.reshape({-1});
    const torch::Tensor cr = cos.index_select(0, pos).view({B, R, 1, D});
    const torch::Tensor sr = sin.index_select(0, pos).view({B, R, 1, D});
    q = (q * cr + rotate_half(q) * sr).permute({0, 2, 1, 3}).contiguous(); // [B, nH, R, D]
    torch::Tensor q5 = q.view({B, G, r, R, D});

    // Which keys each row sees, as attention() decides it.
    bool layer_slides = false;
    const torch::Tensor swa_units = sliding_units(l, units, w, T, &layer_slides);
    // The masked reference's arithmetic (attend_masked) over tiles of batch
    // elements x rows that keep the fp32 scores under block_bytes_.
    const double scale = std::pow(double(D), -0.5);
    const int64_t per_row = std::max<int64_t>(1, nH * T * 4);
    const int64_t n_rows = std::max<int64_t>(1, std::min(R, block_bytes_ / per_row));
    const int64_t n_b = std::max<int64_t>(1, std::min(B, block_bytes_ / (per_row * n_rows)));
    torch::Tensor out = torch::empty({B, G, r, R, D}, q.options());
    const torch::Tensor kj = torch::arange(T, rows.options()); // [T]
    for (int64_t b0 = 0; b0 < B; b0 += n_b) {
        const int64_t nb = std::min(n_b, B - b0);
        for (int64_t r0 = 0; r0 < R; r0 += n_rows) {
            const int64_t nr = std::min(n_rows, R - r0);
            const torch::Tensor qc = q5.narrow(0, b0, nb).narrow(3, r0, nr).reshape({nb, G, r * nr, D});
            const torch::Tensor kc = k.narrow(0, b0, nb), vc = v.narrow(0, b0, nb);
            torch::Tensor scores = torch::matmul(qc, kc.transpose(-1, -2)) * scale;
            scores = scores.view({nb, G, r, nr, T});
            // [nb, 1, 1, nr, 1]: the rows' positions against the keys [T]
            const torch::Tensor qi = rows.narrow(0, b0, nb).narrow(1, r0, nr).view({nb, 1, 1, nr, 1});
            const torch::Tensor allowed = allowed_keys(
                qi, kj, swa_units.defined() ? swa_units.narrow(0, b0, nb) : swa_units, layer_slides,
                cfg_.sliding_window, w); // [nb, 1 or G, 1, nr, T]
            scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<double>::infinity());
            torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(q.scalar_type());
            torch::Tensor oc = torch::matmul(probs.view({nb, G, r * nr, T}), vc);
            out.narrow(0, b0, nb).narrow(3, r0, nr).copy_(oc.view({nb, G, r, nr, D}));
        }
    }
    // [B, G, r, R, D] -> [B, R, nH * D] (head g*r + i), as attention().
    torch::Tensor o = out.permute({0, 3, 1, 2, 4}).reshape({B, R, nH * D});
    torch::Tensor y = hr + torch::linear(o, L.o_proj);
    return y + mlp(l, rms_norm(y, L.post_norm));
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
